package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestCholeskyBackward checks the blocked reverse mode against the three full level-3 calls it replaces
// (M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹ by gonum's reference Dtrmm and Dtrsm, then (M+Mᵀ)/2), with every kernel, at sizes
// around the panel, the tiles and the block order.
func TestCholeskyBackward(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, n := range []int{1, 2, 3, 5, 7, 11, 12, 13, 16, 17, 31, 47, 48, 49, 63, 64, 65, 100, 129, 200, 203, 257} {
			a := spd(rng, n, n)
			if !(LAPACK{}).Dpotrf(blas.Lower, n, a, n) {
				t.Fatal("not positive definite")
			}
			for i := 0; i < n; i++ { // a Cholesky factor's strictly upper triangle is zero
				clear(a[i*n+i+1 : i*n+n])
			}
			lbar := make([]float64, n*n)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					lbar[i*n+j] = 2*rng.Float64() - 1
				}
			}
			want := append([]float64(nil), lbar...)
			ref.Dtrmm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, a, n, want, n)
			for i := 0; i < n; i++ { // Φ
				clear(want[i*n+i+1 : i*n+n])
				want[i*n+i] *= 0.5
			}
			ref.Dtrsm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, want, n)
			ref.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, a, n, want, n)
			for i := 0; i < n; i++ {
				for j := 0; j < i; j++ {
					s := 0.5 * (want[i*n+j] + want[j*n+i])
					want[i*n+j], want[j*n+i] = s, s
				}
			}
			got := append([]float64(nil), lbar...)
			CholeskyBackward(got, a, n)
			scale := 0.0
			for _, v := range want {
				scale = math.Max(scale, math.Abs(v))
			}
			for i := range want {
				if d := math.Abs(got[i] - want[i]); !(d <= 1e-10*scale) {
					t.Fatalf("n=%d: entry (%d,%d) = %v, three-call form %v (scale %v)", n, i/n, i%n, got[i], want[i], scale)
				}
			}
		}
	})
}
