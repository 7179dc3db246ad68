package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// spd returns an n×n symmetric positive definite matrix (stride ld, canaries in the padding): B·Bᵀ/n + I.
func spd(rng *rand.Rand, n, ld int) []float64 {
	b := operand(rng, n, n, n)
	a := operand(rng, n, n, ld)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += b[i*n+k] * b[j*n+k]
			}
			a[i*ld+j] = s / float64(n)
			if i == j {
				a[i*ld+j]++
			}
		}
	}
	return a
}

func TestDpotrf(t *testing.T) {
	var im LAPACK
	var gl lapackgonum.Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(10, 11))
		sizes := []int{0, 1, 2, 3, 5, 12, 13, 31, 32, 33, 64, 97, 130, 257}
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, n := range sizes {
				ld := max(n, 1) + 2
				a := spd(rng, n, ld)
				want := append([]float64(nil), a...)
				ok1, ok2 := im.Dpotrf(ul, n, a, ld), gl.Dpotrf(ul, n, want, ld)
				if !ok1 || !ok2 {
					t.Fatalf("n=%d: ok %v, reference %v", n, ok1, ok2)
				}
				closeTo(t, fmt.Sprintf("Dpotrf(%c) n=%d", ul, n), a, want, n, n, ld, 1e-12)
			}
		}
		// Not positive definite: a negative eigenvalue in the trailing block, and NaN.
		for _, n := range []int{5, 40, 150} {
			a := spd(rng, n, n)
			a[(n-1)*n+n-1] = -1
			if im.Dpotrf(blas.Lower, n, a, n) {
				t.Errorf("n=%d: an indefinite matrix factorised", n)
			}
			a = spd(rng, n, n)
			a[(n/2)*n+n/2] = math.NaN()
			if im.Dpotrf(blas.Lower, n, a, n) {
				t.Errorf("n=%d: NaN on the diagonal factorised", n)
			}
		}
	})
}
