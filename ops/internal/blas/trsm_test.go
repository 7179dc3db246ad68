package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// triangle returns a k×k matrix (stride ld, canaries in the padding) whose triangle ul is well conditioned for
// solves (a dominant diagonal) and whose other triangle holds garbage that must not be read.
func triangle(rng *rand.Rand, k, ld int, ul blas.Uplo) []float64 {
	a := operand(rng, k, k, ld)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			inTri := ul == blas.Lower && j <= i || ul == blas.Upper && j >= i
			if !inTri {
				a[i*ld+j] = 1e300 // garbage outside the triangle
			} else if i == j {
				a[i*ld+j] = 2 + rng.Float64()
			} else {
				a[i*ld+j] *= 0.5 / float64(k)
			}
		}
	}
	return a
}

type triCase struct {
	s  blas.Side
	ul blas.Uplo
	tA blas.Transpose
	d  blas.Diag
}

func triCases() []triCase {
	var cs []triCase
	for _, s := range []blas.Side{blas.Left, blas.Right} {
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range transposes {
				for _, d := range []blas.Diag{blas.NonUnit, blas.Unit} {
					cs = append(cs, triCase{s, ul, tA, d})
				}
			}
		}
	}
	return cs
}

// unread sets the entries of the k×k matrix a (stride ld) that a triangular routine must not read to NaN: the
// strict triangle opposite to ul and, with a unit diagonal, the diagonal.
func unread(a []float64, k, ld int, ul blas.Uplo, d blas.Diag) {
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			if ul == blas.Lower && j > i || ul == blas.Upper && j < i || i == j && d == blas.Unit {
				a[i*ld+j] = math.NaN()
			}
		}
	}
}

// testTri compares ours with theirs (gonum's) for every side, triangle, transpose and diagonal, at every size
// 0…33 of m and n and at large ragged shapes, with α = 0, 1, −1 and a generic value in turn. The entries of A
// not to be read are NaN; with α = 0 the triangle and B are NaN too: B must come out zero, as reference BLAS
// leaves it.
func testTri(t *testing.T, name string, ours, theirs func(c triCase, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int)) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		sizes := upTo33()
		shapes := [][2]int{{97, 35}, {35, 97}, {257, 130}, {300, 301}, {1001, 33}, {33, 1001}}
		if testing.Short() {
			shapes = shapes[:3]
		}
		alphas := []float64{1, -1, 0.5, 0}
		for ci, c := range triCases() {
			check := func(m, n int, alpha float64) {
				k := n
				if c.s == blas.Left {
					k = m
				}
				lda, ldb := max(k, 1)+3, max(n, 1)+2
				a := triangle(rng, k, lda, c.ul)
				unread(a, k, lda, c.ul, c.d)
				b := operand(rng, m, n, ldb)
				if alpha == 0 {
					fillNaN(a, k, k, lda)
					fillNaN(b, m, n, ldb)
				}
				want := append([]float64(nil), b...)
				ours(c, m, n, alpha, a, lda, b, ldb)
				theirs(c, m, n, alpha, a, lda, want, ldb)
				what := fmt.Sprintf("%s(%c,%c,%c,%c) m=%d n=%d α=%v", name, c.s, c.ul, c.tA, c.d, m, n, alpha)
				noNaN(t, what, b, m, n, ldb)
				closeTo(t, what, b, want, m, n, ldb, 1e-12)
			}
			i := ci
			for _, m := range sizes {
				for _, n := range sizes {
					check(m, n, alphas[i%len(alphas)])
					i++
				}
			}
			for _, s := range shapes {
				check(s[0], s[1], alphas[i%len(alphas)])
				i++
			}
		}
	})
}

func TestDtrsm(t *testing.T) {
	var impl Implementation
	testTri(t, "Dtrsm", func(c triCase, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
		impl.Dtrsm(c.s, c.ul, c.tA, c.d, m, n, alpha, a, lda, b, ldb)
	}, func(c triCase, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
		ref.Dtrsm(c.s, c.ul, c.tA, c.d, m, n, alpha, a, lda, b, ldb)
	})
}

func TestDtrmm(t *testing.T) {
	var impl Implementation
	testTri(t, "Dtrmm", func(c triCase, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
		impl.Dtrmm(c.s, c.ul, c.tA, c.d, m, n, alpha, a, lda, b, ldb)
	}, func(c triCase, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
		ref.Dtrmm(c.s, c.ul, c.tA, c.d, m, n, alpha, a, lda, b, ldb)
	})
}

// DtrsmLeftTo gives Dtrsm's bits (side Left, α = 1) on a copy of B, into x with its own leading dimension or in
// place, leaving b untouched, for every kernel, triangle, transpose and diagonal, at the panel and tile edges, the
// level-2 path (n ≤ 2) and shapes split over goroutines.
func TestDtrsmLeftTo(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, s := range [][2]int{{1, 1}, {2, 3}, {11, 17}, {12, 16}, {13, 2}, {31, 33}, {200, 1024}, {257, 100}} {
			m, n := s[0], s[1]
			for _, c := range triCases() {
				if c.s != blas.Left {
					continue
				}
				lda, ldb, ldx := m+1, n+2, n+5
				a := triangle(rng, m, lda, c.ul)
				b := operand(rng, m, n, ldb)
				b0 := append([]float64(nil), b...)
				want := append([]float64(nil), b...)
				impl.Dtrsm(blas.Left, c.ul, c.tA, c.d, m, n, 1, a, lda, want, ldb)
				x := operand(rng, m, n, ldx)
				x0 := append([]float64(nil), x...)
				impl.DtrsmLeftTo(c.ul, c.tA, c.d, m, n, a, lda, b, ldb, x, ldx)
				what := fmt.Sprintf("DtrsmLeftTo(%c,%c,%c) %dx%d", c.ul, c.tA, c.d, m, n)
				sameBits(t, what+": b", b, b0)
				for i := 0; i < m; i++ {
					sameBits(t, fmt.Sprintf("%s: row %d", what, i), x[i*ldx:i*ldx+n], want[i*ldb:i*ldb+n])
					copy(x0[i*ldx:i*ldx+n], x[i*ldx:i*ldx+n])
				}
				sameBits(t, what+": padding of x", x, x0)
				impl.DtrsmLeftTo(c.ul, c.tA, c.d, m, n, a, lda, b, ldb, b, ldb)
				sameBits(t, what+" in place", b, want)
			}
		}
	})
}

// Dtrsm and Dtrmm read B in place through the strided kernel up to stridedOrder (whole tiles) and pack it above:
// the same products in the same order, so the same bits, for every kernel, triangle, transpose, diagonal and
// side, at orders around the panels and tiles and with ragged column counts (the last partial tile packed).
func TestTriangularStridedSameBits(t *testing.T) {
	prev := stridedOrder
	defer func() { stridedOrder = prev }()
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, s := range [][2]int{{3, 16}, {11, 17}, {12, 32}, {13, 47}, {25, 64}, {50, 100}, {97, 35}, {200, 129}} {
			for _, c := range triCases() {
				m, n := s[0], s[1]
				if c.s == blas.Right {
					m, n = n, m
				}
				k := m
				if c.s == blas.Right {
					k = n
				}
				lda, ldb := k+1, n+3
				a := triangle(rng, k, lda, c.ul)
				b := operand(rng, m, n, ldb)
				for _, r := range []string{"Dtrsm", "Dtrmm"} {
					call := func(order int) []float64 {
						stridedOrder = order
						x := append([]float64(nil), b...)
						if r == "Dtrsm" {
							impl.Dtrsm(c.s, c.ul, c.tA, c.d, m, n, -0.7, a, lda, x, ldb)
						} else {
							impl.Dtrmm(c.s, c.ul, c.tA, c.d, m, n, -0.7, a, lda, x, ldb)
						}
						return x
					}
					packed, strided := call(-1), call(1<<30)
					sameBits(t, fmt.Sprintf("%s(%c,%c,%c,%c) %dx%d strided against packed", r, c.s, c.ul, c.tA, c.d, m, n), strided, packed)
				}
				if c.s == blas.Left && c.tA != blas.ConjTrans {
					y := operand(rng, m, n, ldb+2)
					want := append([]float64(nil), y...)
					stridedOrder = -1
					impl.DtrsmLeftTo(c.ul, c.tA, c.d, m, n, a, lda, b, ldb, want, ldb+2)
					stridedOrder = 1 << 30
					impl.DtrsmLeftTo(c.ul, c.tA, c.d, m, n, a, lda, b, ldb, y, ldb+2)
					sameBits(t, fmt.Sprintf("DtrsmLeftTo(%c,%c,%c) %dx%d strided against packed", c.ul, c.tA, c.d, m, n), y, want)
				}
			}
		}
	})
}
