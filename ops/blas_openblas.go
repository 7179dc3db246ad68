//go:build openblas

package ops

/*
#cgo LDFLAGS: -llapacke -lopenblas
#include <lapacke.h>
*/
import "C"

import (
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
)

// Build names the BLAS/LAPACK implementation compiled in: "openblas" with the openblas build tag.
const Build = "openblas"

// openLAPACK is gonum's LAPACK with Dpotrf routed to LAPACKE (row-major). gonum.org/v1/netlib's LAPACK package
// predates methods gonum v0.17's lapack.Float64 requires and does not compile against it, so gpzoo calls
// LAPACKE itself; the pure-Go routines that remain call BLAS, which is OpenBLAS here.
type openLAPACK struct{ gonum.Implementation }

func (openLAPACK) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) bool {
	if n == 0 {
		return true
	}
	uplo := C.char('L')
	if ul == blas.Upper {
		uplo = 'U'
	}
	info := C.LAPACKE_dpotrf(C.LAPACK_ROW_MAJOR, uplo, C.lapack_int(n), (*C.double)(unsafe.Pointer(&a[0])), C.lapack_int(lda))
	return info == 0
}

func init() {
	blas64.Use(blasnetlib.Implementation{})
	lapack64.Use(openLAPACK{})
}

// BLAS names the level-3 kernel in use: "openblas" in this build.
func BLAS() string { return "openblas" }

// cholBackwardCore overwrites w, which holds tril(L̄), with M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹ (see CholeskyBackward) by
// three full level-3 calls: OpenBLAS's are threaded and blocked.
func cholBackwardCore(w, l []float64, n int) {
	lt, d := triangular(l, n, false), dense(w, n, n)
	blas64.Trmm(blas.Left, blas.Trans, 1, lt, d) // P = Lᵀ·tril(L̄)
	for i := 0; i < n; i++ {                     // Φ
		clear(w[i*n+i+1 : i*n+n])
		w[i*n+i] *= 0.5
	}
	blas64.Trsm(blas.Left, blas.Trans, 1, lt, d)    // L⁻ᵀ·P
	blas64.Trsm(blas.Right, blas.NoTrans, 1, lt, d) // ·L⁻¹
}
