package blas

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// LAPACK is gonum's lapack.Float64 with Dpotrf replaced by a blocked factorisation on this package's routines.
type LAPACK struct{ gonum.Implementation }

var _ lapack.Float64 = LAPACK{}

// potrfLeaf is the order at or below which Dpotrf factorises a diagonal block by the unblocked algorithm.
const potrfLeaf = 32

// Dpotrf computes the Cholesky factorisation of the symmetric positive definite matrix A (n × n, its ul triangle
// stored; row-major): A = L·Lᵀ (lower), overwriting the triangle with the factor. It reports false, as LAPACK's
// dpotrf does, when a leading minor is not positive definite (a pivot ≤ 0 or NaN); the triangle is then partly
// overwritten. The lower case is recursive (Gustavson 1997: L11 = chol(A11), L21 = A21·L11⁻ᵀ by Dtrsm,
// L22 = chol(A22 − L21·L21ᵀ) by Dsyrk), so almost all of its n³/3 flops run in this package's level-3 routines;
// the upper case is gonum's.
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

// potrfLower factorises the order-n lower triangle at a (stride lda) in place.
func potrfLower(a []float64, n, lda int) bool {
	if n <= potrfLeaf {
		return potf2Lower(a, n, lda)
	}
	n1 := roundUp(n/2, panelRows)
	if n1 >= n {
		n1 = n / 2
	}
	n2 := n - n1
	if !potrfLower(a, n1, lda) {
		return false
	}
	var im Implementation
	a21 := a[n1*lda:]
	im.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, n2, n1, 1, a, lda, a21, lda)
	a22 := a[n1*lda+n1:]
	im.Dsyrk(blas.Lower, blas.NoTrans, n2, n1, -1, a21, lda, 1, a22, lda)
	return potrfLower(a22, n2, lda)
}

// potf2Lower is the unblocked (row-oriented) Cholesky factorisation of an order-n lower triangle.
func potf2Lower(a []float64, n, lda int) bool {
	for j := 0; j < n; j++ {
		rj := a[j*lda : j*lda+j+1]
		d := rj[j]
		for _, v := range rj[:j] {
			d -= v * v
		}
		if !(d > 0) { // also NaN
			rj[j] = d
			return false
		}
		d = math.Sqrt(d)
		rj[j] = d
		for i := j + 1; i < n; i++ {
			ri := a[i*lda : i*lda+j+1]
			s := ri[j]
			for k, v := range ri[:j] {
				s -= v * rj[k]
			}
			ri[j] = s / d
		}
	}
	return true
}
