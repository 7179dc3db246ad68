package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// cholEdgeSizes are the orders the Cholesky tests run at: around the panel (12), the diagonal block (48), the
// vectors (4, 8) and tiles (4, 6, 8, 12, 16), and the sizes GP training uses.
func cholEdgeSizes() []int {
	if testing.Short() {
		return []int{1, 2, 11, 13, 33, 48, 49, 65, 127, 200}
	}
	return []int{1, 2, 3, 5, 8, 11, 12, 13, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 95, 96, 97, 127, 200, 257, 500}
}

// cholInputs returns an SPD matrix of order n (stride ld), its factor by gonum (stride n, zero upper triangle) and
// an L̄ (stride n, zero upper triangle).
func cholInputs(rng *rand.Rand, n, ld int) (a, l, lbar []float64) {
	a = spd(rng, n, ld)
	l = make([]float64, n*n)
	for i := 0; i < n; i++ {
		copy(l[i*n:i*n+i+1], a[i*ld:i*ld+i+1])
	}
	if !(lapackgonum.Implementation{}).Dpotrf(blas.Lower, n, l, n) {
		panic("not positive definite")
	}
	lbar = make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			lbar[i*n+j] = 2*rng.Float64() - 1
		}
	}
	return a, l, lbar
}

// notPD makes the leading minor of order j+1 of a (stride ld, factor l) not positive definite: A[j][j] is lowered
// by 1.5·L[j][j]², so that the pivot at j is −L[j][j]²/2.
func notPD(a, l []float64, n, ld, j int) []float64 {
	b := append([]float64(nil), a...)
	b[j*ld+j] -= 1.5 * l[j*n+j] * l[j*n+j]
	return b
}

// cholRuns are Dpotrf (positive definite, and failing at pivots around the blocks) and CholeskyBackward at the
// edge sizes, each returning its output and, for Dpotrf, whether it succeeded (as 0 or 1 appended).
func cholRuns() []level3Run {
	var im LAPACK
	rng := rand.New(rand.NewPCG(51, 52))
	var runs []level3Run
	for _, n := range cholEdgeSizes() {
		ld := n + 3
		a, l, lbar := cholInputs(rng, n, ld)
		potrf := func(a []float64) func() []float64 {
			return func() []float64 {
				a := append([]float64(nil), a...)
				ok := 0.0
				if im.Dpotrf(blas.Lower, n, a, ld) {
					ok = 1
				}
				return append(a, ok)
			}
		}
		runs = append(runs, level3Run{fmt.Sprintf("Dpotrf(L) n=%d", n), potrf(a)})
		for _, j := range []int{0, 11, 47, 48, 49, n / 2, n - 1} {
			if j < n {
				runs = append(runs, level3Run{fmt.Sprintf("Dpotrf(L) n=%d not PD at %d", n, j), potrf(notPD(a, l, n, ld, j))})
			}
		}
		runs = append(runs, level3Run{fmt.Sprintf("CholeskyBackward n=%d", n), func() []float64 {
			w := append([]float64(nil), lbar...)
			CholeskyBackward(w, l, n)
			return w
		}})
	}
	return runs
}

// The factorisation and the backward pass give the same bits with every kernel and every GOMAXPROCS, including
// where a factorisation fails (TestLevel3KernelsAgreeBitwise and TestGOMAXPROCSIndependent for chol.go's paths).
func TestCholeskyBitwise(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prevProcs)
	prev := Kernel()
	defer SetKernel(prev)
	for _, r := range cholRuns() {
		var first []float64
		for _, k := range Kernels() {
			SetKernel(k)
			for _, procs := range []int{1, 2, 3} {
				runtime.GOMAXPROCS(procs)
				got := r.run()
				if first == nil {
					first = got
					continue
				}
				sameBits(t, fmt.Sprintf("%s, kernel %s, GOMAXPROCS %d", r.name, k, procs), got, first)
			}
		}
	}
}

// Dpotrf agrees with gonum's and with the recursive factorisation it replaced, tightly, at the edge sizes; where
// it fails it stops at the same pivot as both, with the same factor before it and the same failed pivot.
func TestDpotrfReferences(t *testing.T) {
	var im LAPACK
	var gl lapackgonum.Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(53, 54))
		for _, n := range cholEdgeSizes() {
			ld := n + 1
			a, l, _ := cholInputs(rng, n, ld)
			for _, j := range []int{-1, 0, 1, 12, 47, 48, 49, 96, n / 2, n - 1} {
				if j >= n {
					continue
				}
				in := a
				if j >= 0 {
					in = notPD(a, l, n, ld, j)
				}
				got, want, old := append([]float64(nil), in...), append([]float64(nil), in...), append([]float64(nil), in...)
				ok, okWant, okOld := im.Dpotrf(blas.Lower, n, got, ld), gl.Dpotrf(blas.Lower, n, want, ld), potrfLowerRef(old, n, ld)
				what := fmt.Sprintf("n=%d, not PD at %d", n, j)
				if ok != (j < 0) || okWant != ok || okOld != ok {
					t.Fatalf("%s: ok %v, gonum %v, recursive %v", what, ok, okWant, okOld)
				}
				rows := n // the rows to compare: all, or up to the failed pivot
				if j >= 0 {
					rows = j + 1
					if f := firstBadPivot(got, n, ld); f != j {
						t.Fatalf("%s: stopped at %d", what, f)
					}
				}
				for _, ref := range []struct {
					name string
					d    []float64
				}{{"gonum", want}, {"recursive", old}} {
					for r := 0; r < rows; r++ {
						for c := 0; c <= r; c++ {
							g, w := got[r*ld+c], ref.d[r*ld+c]
							if !(math.Abs(g-w) <= 1e-12*math.Max(1, math.Abs(w))) {
								t.Fatalf("%s: entry (%d,%d) = %v, %s %v", what, r, c, g, ref.name, w)
							}
						}
					}
				}
				for i := range got { // the strict upper triangle and the padding are not written
					if r, c := i/ld, i%ld; (c > r || c >= n) && math.Float64bits(got[i]) != math.Float64bits(in[i]) {
						t.Fatalf("%s: entry (%d,%d) outside the lower triangle written", what, r, c)
					}
				}
			}
		}
	})
}

// CholeskyBackward agrees with the blocked backward it replaced (through Dtrsm, Dgemm, Dgemmt) to 1e-11 of the
// gradient's scale at the edge sizes, with every kernel.
func TestCholeskyBackwardReference(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(55, 56))
		for _, n := range cholEdgeSizes() {
			_, l, lbar := cholInputs(rng, n, n)
			got, want := append([]float64(nil), lbar...), append([]float64(nil), lbar...)
			CholeskyBackward(got, l, n)
			choleskyBackwardRef(want, l, n)
			scale := 0.0
			for _, v := range want {
				scale = math.Max(scale, math.Abs(v))
			}
			for i := range want {
				if d := math.Abs(got[i] - want[i]); !(d <= 1e-11*scale) {
					t.Fatalf("n=%d: entry (%d,%d) = %v, reference %v (scale %v)", n, i/n, i%n, got[i], want[i], scale)
				}
			}
			for i := 0; i < n; i++ {
				for j := 0; j < i; j++ {
					if math.Float64bits(got[i*n+j]) != math.Float64bits(got[j*n+i]) {
						t.Fatalf("n=%d: not symmetric at (%d,%d)", n, i, j)
					}
				}
			}
		}
	})
}

// Row lanes of the factorisation's first block column: row i ≥ cholOuter of L[:, :cholOuter] is A's row i solved
// against L's first diagonal block, whatever tile, edge or goroutine it is solved in: a symmetric permutation of
// the rows from cholOuter on permutes those rows of L bit for bit.
func TestDpotrfPanelLanes(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prevProcs)
	prev := Kernel()
	defer SetKernel(prev)
	var im LAPACK
	rng := rand.New(rand.NewPCG(57, 58))
	for _, n := range []int{61, 200, 333} {
		a := spd(rng, n, n)
		perm := make([]int, n) // perm[i]: the row of the permuted matrix that row i goes to
		for i := range perm {
			perm[i] = i
		}
		tail := perm[cholOuter:]
		rng.Shuffle(len(tail), func(i, j int) { tail[i], tail[j] = tail[j], tail[i] })
		b := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				b[perm[i]*n+perm[j]] = a[i*n+j]
			}
		}
		for _, k := range Kernels() {
			SetKernel(k)
			for _, procs := range []int{1, 3} {
				runtime.GOMAXPROCS(procs)
				la, lb := append([]float64(nil), a...), append([]float64(nil), b...)
				if !im.Dpotrf(blas.Lower, n, la, n) || !im.Dpotrf(blas.Lower, n, lb, n) {
					t.Fatal("not positive definite")
				}
				for i := cholOuter; i < n; i++ {
					for c := 0; c < cholOuter; c++ {
						if g, w := lb[perm[i]*n+c], la[i*n+c]; math.Float64bits(g) != math.Float64bits(w) {
							t.Fatalf("n=%d, kernel %s, GOMAXPROCS %d: row %d moved to %d: entry %d = %v, unmoved %v", n, k, procs, i, perm[i], c, g, w)
						}
					}
				}
			}
		}
	}
}

// transposeBlocks gives the Go loop's values with every kernel, for positive and negative strides, halving or not.
func TestTransposeBlocks(t *testing.T) {
	prev := Kernel()
	defer SetKernel(prev)
	rng := rand.New(rand.NewPCG(59, 60))
	for _, k := range Kernels() {
		SetKernel(k)
		kern := sel.Active()
		for _, s := range [][2]int{{1, 1}, {1, 3}, {2, 1}, {3, 5}} {
			rb, cb := s[0], s[1]
			for _, half := range []bool{false, true} {
				for _, neg := range []bool{false, true} {
					lds, ldd := 8*cb+3, 8*rb+5
					src := operand(rng, 8*rb, 8*cb, lds)
					dst := operand(rng, 8*cb, 8*rb, ldd)
					d0, dld := 0, ldd
					if neg {
						d0, dld = (8*cb-1)*ldd, -ldd
					}
					gotS, gotD := append([]float64(nil), src...), append([]float64(nil), dst...)
					transposeBlocks(kern, gotD, d0, dld, gotS, 0, lds, rb, cb, half)
					wantS, wantD := append([]float64(nil), src...), append([]float64(nil), dst...)
					transposeBlocks(generic, wantD, d0, dld, wantS, 0, lds, rb, cb, half)
					what := fmt.Sprintf("kernel %s, %d×%d blocks, half %v, negative %v", k, rb, cb, half, neg)
					sameBits(t, what+", source", gotS, wantS)
					sameBits(t, what+", destination", gotD, wantD)
					for i := 0; i < 8*rb; i++ {
						for j := 0; j < 8*cb; j++ {
							v := src[i*lds+j]
							if half {
								v *= 0.5
							}
							if gotD[d0+j*dld+i] != v {
								t.Fatalf("%s: (%d,%d) not transposed", what, i, j)
							}
						}
					}
				}
			}
		}
	}
}
