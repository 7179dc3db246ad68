package blas

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is gonum's blas.Float64 with the level-3 routines Dgemm, Dsyrk, Dtrsm and Dtrmm replaced by
// packed, register-tiled, parallel ones (see the package documentation). Arguments are checked as gonum checks
// them, with the same panics.
type Implementation struct{ gonum.Implementation }

var _ blas.Float64 = Implementation{}

// The panic messages of gonum's BLAS.
const (
	mLT0         = "blas: m < 0"
	nLT0         = "blas: n < 0"
	kLT0         = "blas: k < 0"
	badUplo      = "blas: illegal triangle"
	badTranspose = "blas: illegal transpose"
	badDiag      = "blas: illegal diagonal"
	badSide      = "blas: illegal side"
	badLdA       = "blas: bad leading dimension of A"
	badLdB       = "blas: bad leading dimension of B"
	badLdC       = "blas: bad leading dimension of C"
	shortA       = "blas: insufficient length of a"
	shortB       = "blas: insufficient length of b"
	shortC       = "blas: insufficient length of c"
)

func transposed(t blas.Transpose) bool {
	switch t {
	case blas.NoTrans:
		return false
	case blas.Trans, blas.ConjTrans:
		return true
	}
	panic(badTranspose)
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C. Products with one row or one column of C are matrix–vector
// products and go to gonum's Dgemv, and products of inner dimension 1 are rank-one updates (gemmRank1): packing
// panels for the micro-kernel would copy the whole of the other operand to use each element once (a 200 × 1024
// matrix times a vector took 0.64 ms through the packed path, most of it copying). Both paths are serial and
// independent of the kernel, so every kernel and every GOMAXPROCS still gives the same bits.
func (im Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	at, bt := transposed(tA), transposed(tB)
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	case at && lda < max(1, m) || !at && lda < max(1, k):
		panic(badLdA)
	case bt && ldb < max(1, k) || !bt && ldb < max(1, n):
		panic(badLdB)
	case ldc < max(1, n):
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	switch {
	case at && len(a) < (k-1)*lda+m || !at && len(a) < (m-1)*lda+k:
		panic(shortA)
	case bt && len(b) < (n-1)*ldb+k || !bt && len(b) < (k-1)*ldb+n:
		panic(shortB)
	case len(c) < (m-1)*ldc+n:
		panic(shortC)
	}
	switch {
	case k == 0 || alpha == 0:
		gemm(m, n, k, alpha, matrix{a, lda, at}, matrix{b, ldb, bt}, beta, c, ldc, full)
	case n == 1: // c[:,0] = alpha·op(A)·b + beta·c[:,0], b = op(B)'s column
		ra, ca := m, k
		if at {
			ra, ca = k, m
		}
		incb := ldb
		if bt {
			incb = 1
		}
		im.Dgemv(tA, ra, ca, alpha, a, lda, b, incb, beta, c, ldc)
	case m == 1: // c[0,:]ᵀ = alpha·op(B)ᵀ·a + beta·c[0,:]ᵀ, a = op(A)'s row
		rb, cb, tb := k, n, blas.Trans
		if bt {
			rb, cb, tb = n, k, blas.NoTrans
		}
		inca := 1
		if at {
			inca = lda
		}
		im.Dgemv(tb, rb, cb, alpha, b, ldb, a, inca, beta, c, 1)
	case k == 1:
		gemmRank1(m, n, alpha, matrix{a, lda, at}, matrix{b, ldb, bt}, beta, c, ldc)
	default:
		gemm(m, n, k, alpha, matrix{a, lda, at}, matrix{b, ldb, bt}, beta, c, ldc, full)
	}
}

// gemmRank1 computes C = alpha·a·b + beta·C for op(A) [m,1] and op(B) [1,n]: row i of C gains (alpha·a_i)·b.
func gemmRank1(m, n int, alpha float64, a, b matrix, beta float64, c []float64, ldc int) {
	scaleC(m, n, beta, c, ldc, full)
	if alpha == 0 {
		return
	}
	row := b.data[:n]
	if b.t && b.ld != 1 { // op(B) = Bᵀ, B [n,1] with a stride: gather the column
		row = make([]float64, n)
		for j := range row {
			row[j] = b.data[j*b.ld]
		}
	}
	for i := 0; i < m; i++ {
		ai := a.data[i] // op(A) = Aᵀ, A [1,m]
		if !a.t {
			ai = a.data[i*a.ld]
		}
		s := alpha * ai
		cr := c[i*ldc : i*ldc+n]
		for j, v := range row {
			cr[j] += s * v
		}
	}
}
