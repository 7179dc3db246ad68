package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Sizes straddling the base cases of the recursions (syrkBlock, cholBlock) and a few levels of recursion.
var recSizes = []int{1, 2, 63, 64, 65, 96, 97, 128, 129, 200, 257}

// recRHS are the widths of the non-triangular operand around the chunk size of parRHS: a vector, one chunk,
// two chunks with a remainder, and more chunks than GOMAXPROCS on most machines.
var recRHS = []int{1, parMinRHS - 1, 2 * parMinRHS, 2*parMinRHS + 1, 70, 300}

// recTri returns a well-conditioned n×n triangular matrix (the other triangle is filled with garbage, which must
// not be read) with stride ld ≥ n.
func recTri(rng *rand.Rand, n, ld int, uplo blas.Uplo) blas64.Triangular {
	d := make([]float64, (n-1)*ld+n)
	for i := range d {
		d[i] = 1e3 * (rng.Float64() - 0.5) // garbage outside the triangle
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if (uplo == blas.Lower && j < i) || (uplo == blas.Upper && j > i) {
				d[i*ld+j] = (2*rng.Float64() - 1) / math.Sqrt(float64(n))
			}
		}
		d[i*ld+i] = 1 + rng.Float64()
	}
	return blas64.Triangular{Uplo: uplo, Diag: blas.NonUnit, N: n, Stride: ld, Data: d}
}

func recGeneral(rng *rand.Rand, r, c, ld int) blas64.General {
	d := make([]float64, (r-1)*ld+c)
	for i := range d {
		d[i] = 2*rng.Float64() - 1
	}
	return blas64.General{Rows: r, Cols: c, Stride: ld, Data: d}
}

// maxRelDiff returns max|got−want| / max|want| over the r×c matrices (stride ld) and checks that got and want agree
// outside them (the padding must not be written).
func maxRelDiff(t *testing.T, got, want []float64, r, c, ld int) float64 {
	t.Helper()
	diff, scale := 0.0, 0.0
	for i := range want {
		inside := i/ld < r && i%ld < c
		if !inside {
			if got[i] != want[i] {
				t.Fatalf("element %d outside the %d×%d matrix was written", i, r, c)
			}
			continue
		}
		diff = max(diff, math.Abs(got[i]-want[i]))
		scale = max(scale, math.Abs(want[i]))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

// trsm and trmm (parallel over the right-hand sides) must match the sequential BLAS routines for every
// side/uplo/trans, whatever the number of right-hand sides (below, at and above the chunking thresholds) and
// with strided operands; elements outside B must not be written.
func TestTrsmTrmmMatchBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	for _, n := range recSizes {
		for _, m := range recRHS {
			for _, side := range []blas.Side{blas.Left, blas.Right} {
				for _, uplo := range []blas.Uplo{blas.Lower, blas.Upper} {
					for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
						name := fmt.Sprintf("n=%d/m=%d/side=%c/uplo=%c/trans=%c", n, m, side, uplo, tA)
						tri := recTri(rng, n, n+3, uplo)
						r, c := n, m
						if side == blas.Right {
							r, c = m, n
						}
						b := recGeneral(rng, r, c, c+2)
						want := blas64.General{Rows: r, Cols: c, Stride: b.Stride, Data: slices.Clone(b.Data)}
						got := blas64.General{Rows: r, Cols: c, Stride: b.Stride, Data: slices.Clone(b.Data)}
						blas64.Trsm(side, tA, 1, tri, want)
						trsm(side, tA, tri, got)
						if d := maxRelDiff(t, got.Data, want.Data, r, c, b.Stride); !(d <= 1e-10) {
							t.Errorf("trsm %s: max relative difference %g", name, d)
						}
						copy(want.Data, b.Data)
						copy(got.Data, b.Data)
						blas64.Trmm(side, tA, -0.75, tri, want)
						trmm(side, tA, -0.75, tri, got)
						if d := maxRelDiff(t, got.Data, want.Data, r, c, b.Stride); !(d <= 1e-10) {
							t.Errorf("trmm %s: max relative difference %g", name, d)
						}
					}
				}
			}
		}
	}
}

func TestSyrkLowerRecMatchesBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	for _, n := range recSizes {
		for _, k := range recRHS {
			a := recGeneral(rng, n, k, k+1)
			c0 := recGeneral(rng, n, n, n+2)
			want := blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: c0.Stride, Data: slices.Clone(c0.Data)}
			got := blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: c0.Stride, Data: slices.Clone(c0.Data)}
			blas64.Syrk(blas.NoTrans, -1.5, a, 0.5, want)
			syrkLowerRec(-1.5, a, 0.5, got)
			diff, scale := 0.0, 0.0
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					diff = max(diff, math.Abs(got.Data[i*c0.Stride+j]-want.Data[i*c0.Stride+j]))
					scale = max(scale, math.Abs(want.Data[i*c0.Stride+j]))
				}
			}
			if d := diff / scale; !(d <= 1e-10) {
				t.Errorf("syrkLowerRec n=%d k=%d: max relative difference %g", n, k, d)
			}
		}
	}
}

// recSPD returns an n×n SPD matrix (both triangles, stride ld) with condition number of order n.
func recSPD(rng *rand.Rand, n, ld int) []float64 {
	b := recGeneral(rng, n, n, n)
	a := make([]float64, (n-1)*ld+n)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1/float64(n), b, b, 0, blas64.General{Rows: n, Cols: n, Stride: ld, Data: a})
	for i := 0; i < n; i++ {
		a[i*ld+i] += 1
	}
	return a
}

func TestPotrfLowerRecMatchesLAPACK(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	for _, n := range append(recSizes, cholBlock-1, cholBlock, cholBlock+1, 2*cholBlock+1, cholRecMin, 500) {
		for _, ld := range []int{n, n + 5} {
			a := recSPD(rng, n, ld)
			want, got := slices.Clone(a), slices.Clone(a)
			_, okWant := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: ld, Data: want})
			okGot := potrfLowerRec(got, n, ld)
			if !okWant || !okGot {
				t.Fatalf("n=%d ld=%d: ok = %v, want %v (and true)", n, ld, okGot, okWant)
			}
			diff, scale := 0.0, 0.0
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					diff = max(diff, math.Abs(got[i*ld+j]-want[i*ld+j]))
					scale = max(scale, math.Abs(want[i*ld+j]))
				}
				for j := n; j < ld && i < n-1; j++ { // padding untouched
					if got[i*ld+j] != a[i*ld+j] {
						t.Fatalf("n=%d ld=%d: padding (%d,%d) written", n, ld, i, j)
					}
				}
			}
			if d := diff / scale; !(d <= 1e-10) {
				t.Errorf("potrfLowerRec n=%d ld=%d: max relative difference %g", n, ld, d)
			}
		}
	}
}

// A matrix that is not positive definite because of its last (or first, or a middle) pivot must be reported as
// such, like dpotrf does, whichever diagonal block of the recursion holds the failing pivot.
func TestPotrfLowerRecNotPD(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{1, 64, cholBlock + 1, 200, 257, 400} {
		for _, k := range []int{0, n / 3, n / 2, n - 1} {
			a := recSPD(rng, n, n)
			// Make the k-th pivot negative: A_kk −= (Schur pivot + 1) computed from a reference factorisation.
			ref := slices.Clone(a)
			lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: ref})
			a[k*n+k] -= ref[k*n+k]*ref[k*n+k] + 1
			for _, nan := range []bool{false, true} {
				b := slices.Clone(a)
				if nan {
					b = recSPD(rng, n, n)
					b[k*n+max(k-1, 0)] = math.NaN()
					b[max(k-1, 0)*n+k] = math.NaN()
				}
				_, okWant := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: slices.Clone(b)})
				okGot := potrfLowerRec(slices.Clone(b), n, n)
				if okGot || okWant {
					t.Errorf("n=%d k=%d nan=%v: ok = %v, LAPACK ok = %v, want false", n, k, nan, okGot, okWant)
				}
			}
		}
	}
}

// CholeskyLower at a size that uses the recursive factorisation: a singular matrix fails the plain try and the
// jittered retries (every diagonal block must report failure correctly), then L·Lᵀ = S + jitter·I with the
// strictly upper triangle of L zeroed.
func TestCholeskyLowerRecursiveJitter(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	n, k := cholRecMin+37, 10
	b := recGeneral(rng, n, k, k)
	a := make([]float64, n*n)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, b, b, 0, blas64.General{Rows: n, Cols: n, Stride: n, Data: a})
	_, okRef := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: slices.Clone(a)})
	l := make([]float64, n*n)
	info, err := CholeskyLower(l, a, n, JitterPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if okRef || info.Retries == 0 || info.Jitter <= 0 {
		t.Fatalf("info = %+v (LAPACK plain try ok = %v): want a failed plain try and a jittered success", info, okRef)
	}
	got := make([]float64, n*n)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, blas64.General{Rows: n, Cols: n, Stride: n, Data: l},
		blas64.General{Rows: n, Cols: n, Stride: n, Data: l}, 0, blas64.General{Rows: n, Cols: n, Stride: n, Data: got})
	diff, scale := 0.0, 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if j > i && l[i*n+j] != 0 {
				t.Fatalf("L[%d,%d] = %g above the diagonal", i, j, l[i*n+j])
			}
			want := a[i*n+j]
			if i == j {
				want += info.Jitter
			}
			diff = max(diff, math.Abs(got[i*n+j]-want))
			scale = max(scale, math.Abs(want))
		}
	}
	if d := diff / scale; !(d <= 1e-10) {
		t.Errorf("L·Lᵀ − (A + jitter·I): max relative difference %g", d)
	}
}

// cholBackwardTri (panels of cholBlockCols skipping known zeros) must match the plain three-BLAS-call
// formula M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹ at sizes around the panel width.
func TestCholBackwardTriMatchesBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 3))
	for _, n := range []int{1, 2, cholBlockCols - 1, cholBlockCols, cholBlockCols + 1, 2*cholBlockCols + 1, 200, 257} {
		l := make([]float64, n*n)
		if _, err := CholeskyLower(l, recSPD(rng, n, n), n, JitterPolicy{}); err != nil {
			t.Fatal(err)
		}
		lbar := recGeneral(rng, n, n, n).Data
		zeroUpper(lbar, n)
		want := slices.Clone(lbar)
		lt, d := triangular(l, n, false), dense(want, n, n)
		blas64.Trmm(blas.Left, blas.Trans, 1, lt, d)
		for i := 0; i < n; i++ {
			clear(want[i*n+i+1 : i*n+n])
			want[i*n+i] *= 0.5
		}
		blas64.Trsm(blas.Left, blas.Trans, 1, lt, d)
		blas64.Trsm(blas.Right, blas.NoTrans, 1, lt, d)
		got := slices.Clone(lbar)
		cholBackwardTri(got, l, n)
		if diff := maxRelDiff(t, got, want, n, n, n); !(diff <= 1e-10) {
			t.Errorf("n=%d: max relative difference %g", n, diff)
		}
	}
}
