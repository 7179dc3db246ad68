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

// Dgemm computes C = alpha·op(A)·op(B) + beta·C.
func (Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
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
	gemm(m, n, k, alpha, matrix{a, lda, at}, matrix{b, ldb, bt}, beta, c, ldc, full)
}
