package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestCholeskyBackward checks the blocked reverse mode against the three-call form (CholeskyBackwardCore, then
// (M+Mᵀ)/2) at sizes straddling the block order.
func TestCholeskyBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 3, 7, 63, 64, 65, 100, 129, 200, 257} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a := spd(rng, n, n)
			var la LAPACK
			if !la.Dpotrf(blas.Lower, n, a, n) {
				t.Fatal("not positive definite")
			}
			for i := 0; i < n; i++ {
				clear(a[i*n+i+1 : i*n+n])
			}
			lbar := make([]float64, n*n)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					lbar[i*n+j] = 2*rng.Float64() - 1
				}
			}
			want := append([]float64(nil), lbar...)
			CholeskyBackwardCore(want, a, n)
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
					t.Fatalf("entry (%d,%d) = %v, three-call form %v (scale %v)", i/n, i%n, got[i], want[i], scale)
				}
			}
		})
	}
}
