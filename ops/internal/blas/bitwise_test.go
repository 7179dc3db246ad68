package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// level3Run is one call of a level-3 routine on fixed inputs: run returns the output (a fresh copy each time).
type level3Run struct {
	name string
	run  func() []float64
}

// level3Runs are calls of every level-3 routine of this package (Dgemm, Dgemmt, Dsyrk, Dtrsm, Dtrmm, Dpotrf,
// CholeskyBackward, TriQuad), at small and large ragged shapes, over every side, triangle, transpose and diagonal:
// large enough (the large ones) to be split over goroutines.
func level3Runs(large bool) []level3Run {
	var impl Implementation
	var im LAPACK
	rng := rand.New(rand.NewPCG(31, 32))
	var runs []level3Run
	gemmShapes := [][3]int{{13, 29, 7}, {97, 35, 257}}
	triShapes := [][2]int{{13, 29}, {97, 35}, {35, 97}}
	syrkShapes := [][2]int{{29, 13}, {97, 257}}
	potrfNs := []int{13, 33, 97}
	if large {
		gemmShapes = [][3]int{{301, 257, 300}, {97, 300, 513}}
		triShapes = [][2]int{{300, 301}, {257, 130}, {130, 257}}
		syrkShapes = [][2]int{{300, 257}}
		potrfNs = []int{300, 433}
	}
	for _, s := range gemmShapes {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				a, b, c := operand(rng, max(m, k), max(m, k), max(m, k)+1), operand(rng, max(n, k), max(n, k), max(n, k)+2), operand(rng, m, n, n+3)
				runs = append(runs, level3Run{fmt.Sprintf("Dgemm(%c,%c) %dx%dx%d", tA, tB, m, n, k), func() []float64 {
					c := append([]float64(nil), c...)
					impl.Dgemm(tA, tB, m, n, k, 0.7, a, max(m, k)+1, b, max(n, k)+2, 0.3, c, n+3)
					return c
				}})
			}
		}
	}
	for _, s := range triShapes {
		m, n := s[0], s[1]
		for _, c := range triCases() {
			if c.tA == blas.ConjTrans {
				continue
			}
			k := n
			if c.s == blas.Left {
				k = m
			}
			a, b := triangle(rng, k, k+1, c.ul), operand(rng, m, n, n+2)
			for _, r := range []string{"Dtrsm", "Dtrmm"} {
				runs = append(runs, level3Run{fmt.Sprintf("%s(%c,%c,%c,%c) %dx%d", r, c.s, c.ul, c.tA, c.d, m, n), func() []float64 {
					b := append([]float64(nil), b...)
					if r == "Dtrsm" {
						impl.Dtrsm(c.s, c.ul, c.tA, c.d, m, n, -0.7, a, k+1, b, n+2)
					} else {
						impl.Dtrmm(c.s, c.ul, c.tA, c.d, m, n, -0.7, a, k+1, b, n+2)
					}
					return b
				}})
			}
		}
	}
	for _, s := range syrkShapes {
		n, k := s[0], s[1]
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					ld := max(n, k) + 1
					a, b, c := operand(rng, max(n, k), max(n, k), ld), operand(rng, max(n, k), max(n, k), ld), operand(rng, n, n, n+2)
					runs = append(runs, level3Run{fmt.Sprintf("Dgemmt(%c,%c,%c) n=%d k=%d", ul, tA, tB, n, k), func() []float64 {
						c := append([]float64(nil), c...)
						impl.Dgemmt(ul, tA, tB, n, k, 0.7, a, ld, b, ld, -0.3, c, n+2)
						return c
					}})
				}
			}
		}
	}
	for _, s := range syrkShapes {
		n, k := s[0], s[1]
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				a, c := operand(rng, max(n, k), max(n, k), max(n, k)+1), operand(rng, n, n, n+2)
				runs = append(runs, level3Run{fmt.Sprintf("Dsyrk(%c,%c) n=%d k=%d", ul, tA, n, k), func() []float64 {
					c := append([]float64(nil), c...)
					impl.Dsyrk(ul, tA, n, k, -0.7, a, max(n, k)+1, 0.3, c, n+2)
					return c
				}})
			}
		}
	}
	for _, n := range potrfNs {
		a := spd(rng, n, n+1)
		runs = append(runs, level3Run{fmt.Sprintf("Dpotrf(L) n=%d", n), func() []float64 {
			a := append([]float64(nil), a...)
			if !im.Dpotrf(blas.Lower, n, a, n+1) {
				panic("not positive definite")
			}
			return a
		}})
	}
	n := 203
	if large {
		n = 301
	}
	l := triangle(rng, n, n, blas.Lower)
	w := operand(rng, n, n, n)
	for i := 0; i < n; i++ {
		clear(l[i*n+i+1 : i*n+n])
		clear(w[i*n+i+1 : i*n+n])
	}
	runs = append(runs, level3Run{fmt.Sprintf("CholeskyBackward n=%d", n), func() []float64 {
		w := append([]float64(nil), w...)
		CholeskyBackward(w, l, n)
		return w
	}})
	return append(runs, triQuadRuns(large)...)
}

// sameBits fails unless got and want are identical bit for bit.
func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: entry %d = %v (%#x), want %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// Every kernel gives the same bits in every routine (the package documentation's claim), not only in Dgemm
// (TestKernelsAgreeBitwise).
func TestLevel3KernelsAgreeBitwise(t *testing.T) {
	prev := Kernel()
	defer SetKernel(prev)
	names := Kernels()
	for _, large := range []bool{false, true} {
		if large && testing.Short() {
			continue
		}
		for _, r := range level3Runs(large) {
			var first []float64
			for _, k := range names {
				SetKernel(k)
				got := r.run()
				if first == nil {
					first = got
					continue
				}
				sameBits(t, fmt.Sprintf("%s, kernel %s against %s", r.name, k, names[0]), got, first)
			}
		}
	}
}

// The results do not depend on GOMAXPROCS, i.e. on how the output is split over goroutines (stripes of rows or
// columns in Dgemm, row stripes in Dgemmt and Dsyrk, column tiles in Dtrsm and Dtrmm, all inside Dpotrf).
func TestGOMAXPROCSIndependent(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prevProcs)
	prev := Kernel()
	defer SetKernel(prev)
	names := Kernels()
	if testing.Short() {
		names = names[:1]
	}
	runs := level3Runs(true)
	for _, k := range names {
		SetKernel(k)
		for _, r := range runs {
			var first []float64
			for _, procs := range []int{1, 4, 3} {
				runtime.GOMAXPROCS(procs)
				got := r.run()
				if first == nil {
					first = got
					continue
				}
				sameBits(t, fmt.Sprintf("%s, kernel %s, GOMAXPROCS %d against 1", r.name, k, procs), got, first)
			}
		}
	}
}
