package blas

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// LAPACK is gonum's lapack.Float64 with Dpotrf replaced by a blocked factorisation on this package's routines.
type LAPACK struct{ gonum.Implementation }

var _ lapack.Float64 = LAPACK{}

// Dpotrf computes the Cholesky factorisation of the symmetric positive definite matrix A (n × n, its ul triangle
// stored; row-major): A = L·Lᵀ (lower), overwriting the triangle with the factor. It reports false, as LAPACK's
// dpotrf does, when a leading minor is not positive definite (a pivot ≤ 0 or NaN); the triangle is then partly
// overwritten (the rows before the failed pivot hold the factor, the pivot the value that failed). The lower
// case is blocked and right-looking on the micro-kernel (chol.go: L_JJ = chol(A_JJ), L_KJ = A_KJ·L_JJ⁻ᵀ solved in
// tiles, A_KK −= L_KJ·L_KJᵀ), so almost all of its n³/3 flops run in the micro-kernel; the upper case is gonum's.
func (im LAPACK) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) bool {
	if ul != blas.Lower {
		return im.Implementation.Dpotrf(ul, n, a, lda)
	}
	switch {
	case n < 0:
		panic("lapack: n < 0")
	case lda < max(1, n):
		panic("lapack: bad leading dimension of A")
	}
	if n == 0 {
		return true
	}
	if len(a) < (n-1)*lda+n {
		panic("lapack: insufficient length of a")
	}
	return potrfLower(a, n, lda)
}
