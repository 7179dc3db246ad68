package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestDgemmt checks Dgemmt against gonum's Dgemm on the same triangle (the other triangle and the padding must
// stay as they were), for every uplo and transpose, sizes straddling every tile, and α, β special values.
func TestDgemmt(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 9))
		sizes := []int{0, 1, 2, 5, 6, 11, 12, 13, 16, 17, 25, 33, 97, 203}
		if testing.Short() {
			sizes = []int{0, 1, 13, 33, 97}
		}
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					for _, n := range sizes {
						for _, k := range []int{0, 1, 7, 300} {
							for _, ab := range [][2]float64{{1, 0}, {-1, 1}, {0.7, -0.3}, {0, 0.5}} {
								checkGemmt(t, impl, rng, ul, tA, tB, n, k, ab[0], ab[1])
							}
						}
					}
				}
			}
		}
	})
}

func checkGemmt(t *testing.T, impl Implementation, rng *rand.Rand, ul blas.Uplo, tA, tB blas.Transpose, n, k int, alpha, beta float64) {
	t.Helper()
	ar, ac := n, k
	if tA != blas.NoTrans {
		ar, ac = k, n
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	lda, ldb, ldc := max(ac, 1)+1, max(bc, 1)+2, max(n, 1)+3
	a, b, c := operand(rng, ar, ac, lda), operand(rng, br, bc, ldb), operand(rng, n, n, ldc)
	full := append([]float64(nil), c...)
	ref.Dgemm(tA, tB, n, n, k, alpha, a, lda, b, ldb, beta, full, ldc)
	want := append([]float64(nil), c...) // the triangle from the full product, the rest unchanged
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if ul == blas.Lower && j <= i || ul == blas.Upper && j >= i {
				want[i*ldc+j] = full[i*ldc+j]
			}
		}
	}
	impl.Dgemmt(ul, tA, tB, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	what := fmt.Sprintf("Dgemmt(%c,%c,%c) n=%d k=%d α=%v β=%v", ul, tA, tB, n, k, alpha, beta)
	for i := 0; i < n; i++ { // the other triangle: the same bits
		for j := 0; j < n; j++ {
			if !(ul == blas.Lower && j <= i || ul == blas.Upper && j >= i) && c[i*ldc+j] != want[i*ldc+j] {
				t.Fatalf("%s: entry (%d,%d) outside the triangle changed", what, i, j)
			}
		}
	}
	closeTo(t, what, c, want, n, n, ldc, 1e-13*float64(k+1))
}

// Dgemmt computes each entry of its triangle with the same bits as Dgemm.
func TestDgemmtMatchesDgemmBitwise(t *testing.T) {
	var impl Implementation
	rng := rand.New(rand.NewPCG(4, 4))
	n, k := 211, 517
	a, b := operand(rng, n, k, k), operand(rng, n, k, k)
	c0 := operand(rng, n, n, n)
	g, l := append([]float64(nil), c0...), append([]float64(nil), c0...)
	impl.Dgemm(blas.NoTrans, blas.Trans, n, n, k, 0.9, a, k, b, k, 0.4, g, n)
	impl.Dgemmt(blas.Lower, blas.NoTrans, blas.Trans, n, k, 0.9, a, k, b, k, 0.4, l, n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if g[i*n+j] != l[i*n+j] {
				t.Fatalf("entry (%d,%d): Dgemmt %v, Dgemm %v", i, j, l[i*n+j], g[i*n+j])
			}
		}
	}
}
