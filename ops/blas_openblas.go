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

// cholBackward overwrites w, which holds tril(L̄), with (M+Mᵀ)/2, M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹ (see CholeskyBackward),
// by three full level-3 calls (OpenBLAS's are threaded and blocked) and the symmetrisation.
func cholBackward(w, l []float64, n int) {
	lt, d := triangular(l, n, false), dense(w, n, n)
	blas64.Trmm(blas.Left, blas.Trans, 1, lt, d) // P = Lᵀ·tril(L̄)
	for i := 0; i < n; i++ {                     // Φ
		clear(w[i*n+i+1 : i*n+n])
		w[i*n+i] *= 0.5
	}
	blas64.Trsm(blas.Left, blas.Trans, 1, lt, d)    // L⁻ᵀ·P
	blas64.Trsm(blas.Right, blas.NoTrans, 1, lt, d) // ·L⁻¹
	for i := 0; i < n; i++ {                        // (M+Mᵀ)/2
		for j := 0; j < i; j++ {
			s := 0.5 * (w[i*n+j] + w[j*n+i])
			w[i*n+j], w[j*n+i] = s, s
		}
	}
}

// CholeskyBackwardFlops returns the flops CholeskyBackward spends at order n in this build: 3n³ (a Dtrmm, n³, and
// two Dtrsm, n³ each), 2n³/3 in the purego build (gpzoo's blocked reverse mode). Benchmarks count a step's work
// with it.
func CholeskyBackwardFlops(n int) float64 {
	nf := float64(n)
	return 3 * nf * nf * nf
}

// gemmt computes the ul triangle of C = alpha·A·Bᵀ (A, B [m,n]) by a recursive split into OpenBLAS Dgemm calls
// (its dgemmt is not bound by gonum.org/v1/netlib); the other triangle gets junk in the diagonal blocks.
func gemmt(ul blas.Uplo, alpha float64, a, b, c blas64.General) { gemmtRec(ul, alpha, a, b, c) }

// gemmtBlock: gemmtRec computes diagonal blocks of at most this order with one plain Gemm (and discards their
// other triangle); larger triangles are split recursively so that the wasted part stays small.
const gemmtBlock = 64

// gemmtRec computes the ul triangle of C = alpha·A·Bᵀ (A, B [m,n]; the other triangle is overwritten with junk
// in the diagonal blocks) by Gemm calls: the off-diagonal blocks of a recursive split of the triangle, the
// diagonal blocks of order ≤ gemmtBlock whole. About m²n + gemmtBlock·m·n flops.
func gemmtRec(ul blas.Uplo, alpha float64, a, b, c blas64.General) {
	m := c.Rows
	if m <= gemmtBlock {
		blas64.Gemm(blas.NoTrans, blas.Trans, alpha, a, b, 0, c)
		return
	}
	m1 := recSplit(m)
	m2 := m - m1
	gemmtRec(ul, alpha, subGeneral(a, 0, 0, m1, a.Cols), subGeneral(b, 0, 0, m1, b.Cols), subGeneral(c, 0, 0, m1, m1))
	if ul == blas.Lower {
		blas64.Gemm(blas.NoTrans, blas.Trans, alpha, subGeneral(a, m1, 0, m2, a.Cols), subGeneral(b, 0, 0, m1, b.Cols), 0, subGeneral(c, m1, 0, m2, m1))
	} else {
		blas64.Gemm(blas.NoTrans, blas.Trans, alpha, subGeneral(a, 0, 0, m1, a.Cols), subGeneral(b, m1, 0, m2, b.Cols), 0, subGeneral(c, 0, m1, m1, m2))
	}
	gemmtRec(ul, alpha, subGeneral(a, m1, 0, m2, a.Cols), subGeneral(b, m1, 0, m2, b.Cols), subGeneral(c, m1, m1, m2, m2))
}

// subGeneral returns the r×c sub-matrix of g starting at (i, j).
func subGeneral(g blas64.General, i, j, r, c int) blas64.General {
	if r == 0 || c == 0 {
		return blas64.General{Rows: r, Cols: c, Stride: g.Stride}
	}
	return blas64.General{Rows: r, Cols: c, Stride: g.Stride, Data: g.Data[i*g.Stride+j:]}
}

// recSplit returns the order of the leading diagonal block when a recursion splits an order-n triangle: about
// n/2, rounded to a multiple of 32 (cache-friendly operand widths).
func recSplit(n int) int {
	n1 := (n/2 + 16) &^ 31
	if n1 <= 0 || n1 >= n {
		n1 = n / 2
	}
	return n1
}
