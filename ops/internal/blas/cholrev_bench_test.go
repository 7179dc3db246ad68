package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

func BenchmarkCholBackward(b *testing.B) {
	for _, n := range []int{100, 200, 500, 1000} {
		rng := rand.New(rand.NewPCG(1, 1))
		a := spd(rng, n, n)
		var la LAPACK
		la.Dpotrf(blas.Lower, n, a, n)
		w0 := triangle(rng, n, n, blas.Lower)
		w := make([]float64, n*n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(w, w0)
				CholeskyBackward(w, a, n)
			}
		})
	}
}
