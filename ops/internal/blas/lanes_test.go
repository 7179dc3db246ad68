package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// Row and column independence ("lanes"): in C = op(A)·op(B), row i of C is a function of row i of op(A) (and of
// op(B)) only, and column j a function of column j of op(B) only; in a triangular solve or product from the left
// (op(T)·X = B, B = op(T)·B) column j of the result is a function of column j of B only, and from the right row i
// of row i of B only. Bit for bit: wherever the row or column sits (in a whole micro-kernel tile or an edge tile
// through the scratch tile, in which stripe of a parallel split) and whatever the others are. A prediction server
// batching rows of several requests relies on it (a row's prediction must not depend on its batch).

// shiftLanes returns a copy of the r×c matrix x (stride ld) with its rows (byRows) or columns moved cyclically by
// s: row i goes to row (i+s) mod r.
func shiftLanes(x []float64, r, c, ld int, byRows bool, s int) []float64 {
	y := append([]float64(nil), x...)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if byRows {
				y[((i+s)%r)*ld+j] = x[i*ld+j]
			} else {
				y[i*ld+(j+s)%c] = x[i*ld+j]
			}
		}
	}
	return y
}

// sameLanes fails unless got (the result for shifted lanes) is want (the unshifted result) shifted by s.
func sameLanes(t *testing.T, what string, got, want []float64, r, c, ld int, byRows bool, s int) {
	t.Helper()
	w := shiftLanes(want, r, c, ld, byRows, s)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if g, e := got[i*ld+j], w[i*ld+j]; math.Float64bits(g) != math.Float64bits(e) {
				t.Fatalf("%s, shift %d: entry (%d,%d) = %v (%#x), want %v (%#x)", what, s, i, j, g, math.Float64bits(g), e, math.Float64bits(e))
			}
		}
	}
}

func TestLanesIndependent(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prevProcs)
	prev := Kernel()
	defer SetKernel(prev)
	var impl Implementation
	rng := rand.New(rand.NewPCG(41, 42))
	shifts := []int{1, 5, 13}
	for _, k := range Kernels() {
		SetKernel(k)
		for _, procs := range []int{1, 3} {
			runtime.GOMAXPROCS(procs)
			// Dgemm: C [m,n] = op(A) [m,k] · op(B) [k,n]; shift op(A)'s rows, then op(B)'s columns.
			// The last two are split over goroutines (by columns, then by rows) when GOMAXPROCS > 1.
			for _, s := range [][3]int{{6, 64, 30}, {64, 6, 30}, {200, 256, 8}, {29, 301, 300}, {301, 29, 300}} {
				m, n, kk := s[0], s[1], s[2]
				for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
						ar, ac, br, bc := m, kk, kk, n
						if tA == blas.Trans {
							ar, ac = kk, m
						}
						if tB == blas.Trans {
							br, bc = n, kk
						}
						a, b := operand(rng, ar, ac, ac), operand(rng, br, bc, bc)
						gemm := func(a, b []float64) []float64 {
							c := make([]float64, m*n)
							impl.Dgemm(tA, tB, m, n, kk, 0.7, a, ac, b, bc, 0, c, n)
							return c
						}
						base := gemm(a, b)
						name := fmt.Sprintf("Dgemm(%c,%c) %dx%dx%d, kernel %s, GOMAXPROCS %d", tA, tB, m, n, kk, k, procs)
						for _, sh := range shifts {
							sa := shiftLanes(a, ar, ac, ac, tA == blas.NoTrans, sh)
							sameLanes(t, name+", rows of op(A)", gemm(sa, b), base, m, n, n, true, sh)
							sb := shiftLanes(b, br, bc, bc, tB == blas.Trans, sh)
							sameLanes(t, name+", columns of op(B)", gemm(a, sb), base, m, n, n, false, sh)
						}
					}
				}
			}
			// Dtrsm and Dtrmm: B [m,n] with the triangle m×m (Left; the lanes are B's columns) or, the shape swapped,
			// n×n (Right; the lanes are B's rows). From 3 lanes (the level-3 path; up to 2 run the level-2 loops of
			// trsv.go) up, triangles across the panel height and the tile group, the last split over goroutines.
			for _, s := range [][2]int{{6, 64}, {30, 16}, {30, 3}, {37, 301}, {200, 256}} {
				for _, c := range triCases() {
					if c.tA == blas.ConjTrans {
						continue
					}
					m, n := s[0], s[1]
					if c.s == blas.Right {
						m, n = n, m
					}
					order := m
					if c.s == blas.Right {
						order = n
					}
					a, b := triangle(rng, order, order, c.ul), operand(rng, m, n, n)
					for _, r := range []string{"Dtrsm", "Dtrmm"} {
						call := func(b []float64) []float64 {
							b = append([]float64(nil), b...)
							if r == "Dtrsm" {
								impl.Dtrsm(c.s, c.ul, c.tA, c.d, m, n, -0.7, a, order, b, n)
							} else {
								impl.Dtrmm(c.s, c.ul, c.tA, c.d, m, n, -0.7, a, order, b, n)
							}
							return b
						}
						base := call(b)
						name := fmt.Sprintf("%s(%c,%c,%c,%c) %dx%d, kernel %s, GOMAXPROCS %d", r, c.s, c.ul, c.tA, c.d, m, n, k, procs)
						for _, sh := range shifts {
							byRows := c.s == blas.Right
							sameLanes(t, name, call(shiftLanes(b, m, n, n, byRows, sh)), base, m, n, n, byRows, sh)
						}
					}
				}
			}
		}
	}
}
