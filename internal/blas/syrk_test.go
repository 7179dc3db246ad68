package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

func TestDsyrk(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 9))
		sizes := []int{0, 1, 2, 5, 12, 13, 31, 33, 97, 200}
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, n := range sizes {
					for _, k := range []int{0, 1, 7, 33, 300} {
						for _, ab := range [][2]float64{{1, 0}, {-1, 1}, {0.5, -2}, {0, 0.5}} {
							row, col := n, k
							if tA == blas.Trans {
								row, col = k, n
							}
							lda, ldc := max(col, 1)+2, max(n, 1)+3
							a := operand(rng, row, col, lda)
							c := operand(rng, n, n, ldc)
							want := append([]float64(nil), c...)
							impl.Dsyrk(ul, tA, n, k, ab[0], a, lda, ab[1], c, ldc)
							ref.Dsyrk(ul, tA, n, k, ab[0], a, lda, ab[1], want, ldc)
							closeTo(t, fmt.Sprintf("Dsyrk(%c,%c) n=%d k=%d α=%v β=%v", ul, tA, n, k, ab[0], ab[1]), c, want, n, n, ldc, 1e-13*float64(k+1))
						}
					}
				}
			}
		}
	})
}
