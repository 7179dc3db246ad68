package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// CholeskyBackwardCore equals the three full level-3 calls it replaces (gonum's), at sizes around the panel and
// tile sizes, with every kernel.
func TestCholeskyBackwardCore(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(12, 13))
		for _, n := range []int{1, 2, 5, 11, 12, 13, 16, 17, 31, 64, 100, 203} {
			l := triangle(rng, n, n, blas.Lower)
			for i := 0; i < n; i++ { // a Cholesky factor's strictly upper triangle is zero
				clear(l[i*n+i+1 : i*n+n])
			}
			w := operand(rng, n, n, n)
			for i := 0; i < n; i++ {
				clear(w[i*n+i+1 : i*n+n])
			}
			want := append([]float64(nil), w...)
			ref.Dtrmm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, l, n, want, n)
			for i := 0; i < n; i++ {
				clear(want[i*n+i+1 : i*n+n])
				want[i*n+i] *= 0.5
			}
			ref.Dtrsm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, l, n, want, n)
			ref.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, l, n, want, n)
			CholeskyBackwardCore(w, l, n)
			closeTo(t, fmt.Sprintf("n=%d", n), w, want, n, n, n, 1e-11)
		}
	})
}
