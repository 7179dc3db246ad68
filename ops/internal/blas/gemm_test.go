package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/ops/internal/cpusel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

var ref gonum.Implementation

// canary fills the padding of an operand (the columns beyond its width in every row, and rows beyond its height)
// with a value that exposes any write outside the matrix.
const canary = -123456.75

// operand returns an r×c row-major matrix with leading dimension ld ≥ c (canaries in the padding) and random
// entries in [−1, 1).
func operand(rng *rand.Rand, r, c, ld int) []float64 {
	if r == 0 {
		return nil
	}
	d := make([]float64, (r-1)*ld+c+3) // 3 trailing canaries
	for i := range d {
		d[i] = canary
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d[i*ld+j] = 2*rng.Float64() - 1
		}
	}
	return d
}

// closeTo compares got with want entrywise: values inside the matrix to a relative tolerance, padding exactly.
func closeTo(t *testing.T, what string, got, want []float64, r, c, ld int, tol float64) {
	t.Helper()
	for i := range want {
		inside := i/ld < r && i%ld < c && i < (r-1)*ld+c
		if !inside {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s: padding entry %d changed: %v, want %v", what, i, got[i], want[i])
			}
			continue
		}
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s: entry (%d,%d) = %v, reference %v (diff %.3g)", what, i/ld, i%ld, got[i], want[i], d)
		}
	}
}

// eachKernel runs f with every micro-kernel this CPU runs forced in turn.
func eachKernel(t *testing.T, f func(t *testing.T)) {
	prev := Kernel()
	defer SetKernel(prev)
	for _, k := range Kernels() {
		SetKernel(k)
		t.Run(k, f)
	}
}

// GPZOO_BLAS chose the micro-kernel at start-up, through ops/internal/cpusel as ops/internal/vmath's (whose
// TestEnv runs the choice in subprocesses); an unsupported value leaves the best.
func TestKernelEnv(t *testing.T) {
	if got, want := Kernel(), cpusel.Choice(Kernels()); got != want || EnvKernel != cpusel.Env {
		t.Errorf("%s: micro-kernel %q, want %q (this CPU runs %q)", EnvKernel, got, want, Kernels())
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// upTo33 is every size 0…33: every remainder modulo the tiles (4, 6, 8, 12, 16), the triangular panel 12 and
// the sizes around Dpotrf's recursion leaf 32. The short mode keeps a subsample of the same edges.
func upTo33() []int {
	if testing.Short() {
		return []int{0, 1, 2, 3, 4, 5, 7, 8, 11, 12, 13, 16, 17, 23, 24, 25, 31, 32, 33}
	}
	s := make([]int, 34)
	for i := range s {
		s[i] = i
	}
	return s
}

// transposes are the three transpose values (ConjTrans is Trans for real matrices).
var transposes = []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}

// alphas and betas are the special values of the scalars (0, 1, −1) and a generic one.
var (
	alphas = []float64{0, 1, -1, 0.7}
	betas  = []float64{0, 1, -1, 0.3}
)

// specialPairs returns every (α, β) of alphas × betas.
func specialPairs() [][2]float64 {
	var abs [][2]float64
	for _, a := range alphas {
		for _, b := range betas {
			abs = append(abs, [2]float64{a, b})
		}
	}
	return abs
}

func TestDgemm(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		sizes := upTo33()
		ks := []int{0, 1, 3, 17, 33, 257} // 257: two kc blocks, the second of depth 1
		if testing.Short() {
			ks = []int{0, 1, 17, 257}
		}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, m := range sizes {
					for _, n := range sizes {
						for _, k := range ks {
							checkGemm(t, impl, rng, trans(tA), trans(tB), m, n, k, 1.5, 0.5)
						}
					}
				}
			}
		}
		// Large and ragged shapes (no size a multiple of a tile, k across several kc blocks), every transpose
		// case, the special α and β in turn.
		shapes := [][3]int{{97, 257, 511}, {1001, 97, 65}, {64, 64, 64}, {300, 201, 1001}, {33, 1001, 257}}
		if testing.Short() {
			shapes = shapes[:3]
		}
		abs := [][2]float64{{1, 0}, {-1, 1}, {0.3, -1}, {0, 2}, {0.7, 0.3}}
		i := 0
		for _, s := range shapes {
			for _, tA := range transposes {
				for _, tB := range transposes {
					ab := abs[i%len(abs)]
					i++
					checkGemm(t, impl, rng, tA, tB, s[0], s[1], s[2], ab[0], ab[1])
				}
			}
		}
	})
}

// Every combination of the special values of α and β with every transpose, at small, empty and ragged shapes:
// β = 0 overwrites NaN in C, α = 0 reads neither A nor B (NaN there does not reach C), as reference BLAS does.
func TestDgemmAlphaBeta(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, s := range [][3]int{{0, 3, 2}, {3, 0, 2}, {5, 7, 0}, {1, 1, 1}, {13, 17, 9}, {33, 12, 300}, {97, 31, 257}} {
			for _, tA := range transposes {
				for _, tB := range transposes {
					for _, alpha := range alphas {
						for _, beta := range betas {
							checkGemm(t, impl, rng, tA, tB, s[0], s[1], s[2], alpha, beta)
						}
					}
				}
			}
		}
	})
}

// fillNaN sets the r×c matrix at d (stride ld) to NaN, leaving the padding.
func fillNaN(d []float64, r, c, ld int) {
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d[i*ld+j] = math.NaN()
		}
	}
}

// storedDims returns the stored shapes of A (ar × ac) and B (br × bc) for op(A) m × k and op(B) k × n.
func storedDims(tA, tB blas.Transpose, m, n, k int) (ar, ac, br, bc int) {
	ar, ac, br, bc = m, k, k, n
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	return ar, ac, br, bc
}

// poison sets to NaN what a product must not read: A (ar × ac) and B (br × bc) when α = 0, C (m × n) when β = 0.
func poison(alpha, beta float64, a []float64, ar, ac, lda int, b []float64, br, bc, ldb int, c []float64, m, n, ldc int) {
	if alpha == 0 {
		fillNaN(a, ar, ac, lda)
		fillNaN(b, br, bc, ldb)
	}
	if beta == 0 {
		fillNaN(c, m, n, ldc)
	}
}

// checkGemm compares Dgemm with gonum's, with NaN in C when β = 0 and in A and B when α = 0 (the result must have
// no NaN) and canaries in the padding.
func checkGemm(t *testing.T, impl Implementation, rng *rand.Rand, tA, tB blas.Transpose, m, n, k int, alpha, beta float64) {
	t.Helper()
	ar, ac, br, bc := storedDims(tA, tB, m, n, k)
	lda, ldb, ldc := max(ac, 1)+1, max(bc, 1)+4, max(n, 1)+2
	a, b := operand(rng, ar, ac, lda), operand(rng, br, bc, ldb)
	c := operand(rng, m, n, ldc)
	// gonum's Dgemm computes 0·op(A)·op(B) when α = 0 (NaN there reaches C); reference BLAS reads neither, and
	// so do we: the reference gets finite copies.
	ra, rb := append([]float64(nil), a...), append([]float64(nil), b...)
	poison(alpha, beta, a, ar, ac, lda, b, br, bc, ldb, c, m, n, ldc)
	want := append([]float64(nil), c...)
	impl.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	ref.Dgemm(tA, tB, m, n, k, alpha, ra, lda, rb, ldb, beta, want, ldc)
	what := fmt.Sprintf("Dgemm(%c,%c) %dx%dx%d α=%v β=%v", tA, tB, m, n, k, alpha, beta)
	noNaN(t, what, c, m, n, ldc)
	closeTo(t, what, c, want, m, n, ldc, 1e-13*float64(k+1))
}

// noNaN fails when the r×c matrix at d (stride ld) holds a NaN.
func noNaN(t *testing.T, what string, d []float64, r, c, ld int) {
	t.Helper()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if math.IsNaN(d[i*ld+j]) {
				t.Fatalf("%s: entry (%d,%d) is NaN", what, i, j)
			}
		}
	}
}

// β = 0 overwrites NaN in C; α = 0 reads neither A nor B (NaN there does not reach C), as reference BLAS does.
func TestDgemmSpecialValues(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		m, n, k := 13, 9, 7
		a, b := make([]float64, m*k), make([]float64, k*n)
		for i := range a {
			a[i] = math.NaN()
		}
		for i := range b {
			b[i] = 1
		}
		c := make([]float64, m*n)
		for i := range c {
			c[i] = math.NaN()
		}
		impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 0, a, k, b, n, 0, c, n)
		for i, v := range c {
			if v != 0 {
				t.Fatalf("α = β = 0: C[%d] = %v, want 0", i, v)
			}
		}
		for i := range a {
			a[i] = 1
		}
		for i := range c {
			c[i] = math.NaN()
		}
		impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 2, a, k, b, n, 0, c, n)
		for i, v := range c {
			if v != 2*float64(k) {
				t.Fatalf("β = 0 over NaN: C[%d] = %v, want %v", i, v, 2*float64(k))
			}
		}
	})
}

// Every kernel gives the same bits: results do not depend on the CPU.
func TestKernelsAgreeBitwise(t *testing.T) {
	var impl Implementation
	prev := Kernel()
	defer SetKernel(prev)
	rng := rand.New(rand.NewPCG(5, 6))
	m, n, k := 203, 151, 700
	a, b := operand(rng, m, k, k), operand(rng, k, n, n)
	var first []float64
	for _, name := range Kernels() {
		SetKernel(name)
		c := operand(rand.New(rand.NewPCG(7, 8)), m, n, n)
		impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 0.7, a, k, b, n, 0.3, c, n)
		if first == nil {
			first = c
			continue
		}
		for i := range c {
			if math.Float64bits(c[i]) != math.Float64bits(first[i]) {
				t.Fatalf("kernel %s: C[%d] = %v, kernel %s gave %v", name, i, c[i], Kernels()[0], first[i])
			}
		}
	}
}

func TestDgemmPanics(t *testing.T) {
	var impl Implementation
	for name, f := range map[string]func(){
		"transpose": func() {
			impl.Dgemm('x', blas.NoTrans, 1, 1, 1, 1, []float64{1}, 1, []float64{1}, 1, 0, []float64{1}, 1)
		},
		"m": func() {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, -1, 1, 1, 1, []float64{1}, 1, []float64{1}, 1, 0, []float64{1}, 1)
		},
		"lda": func() {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float64, 4), 1, make([]float64, 4), 2, 0, make([]float64, 4), 2)
		},
		"short c": func() {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float64, 4), 2, make([]float64, 4), 2, 0, make([]float64, 3), 2)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
