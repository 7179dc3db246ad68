package blas

import "gonum.org/v1/gonum/blas"

// Dsyrk computes the ul triangle of C = alpha·A·Aᵀ + beta·C (tA = NoTrans, A n × k) or alpha·Aᵀ·A + beta·C
// (A k × n); the other triangle of C is neither read nor written. It is Dgemmt with B = A: every entry is
// computed as Dgemm computes it.
func (im Implementation) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	switch {
	case ul != blas.Lower && ul != blas.Upper:
		panic(badUplo)
	case tA != blas.Trans && tA != blas.NoTrans && tA != blas.ConjTrans:
		panic(badTranspose)
	}
	im.Dgemmt(ul, tA, flip(tA), n, k, alpha, a, lda, a, lda, beta, c, ldc)
}

// Dgemmt computes the ul triangle of C = alpha·op(A)·op(B) + beta·C for op(A) n × k, op(B) k × n (the BLAS
// extension of that name in OpenBLAS and MKL); the other triangle of C is neither read nor written. It costs
// about half a Dgemm: micro-tiles outside the triangle are skipped, those across the diagonal computed in a
// scratch tile. Arguments are checked as Dgemm checks them, with the same panics.
func (Implementation) Dgemmt(ul blas.Uplo, tA, tB blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	at, bt := transposed(tA), transposed(tB)
	switch {
	case ul != blas.Lower && ul != blas.Upper:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	case at && lda < max(1, n) || !at && lda < max(1, k):
		panic(badLdA)
	case bt && ldb < max(1, k) || !bt && ldb < max(1, n):
		panic(badLdB)
	case ldc < max(1, n):
		panic(badLdC)
	}
	if n == 0 {
		return
	}
	switch {
	case at && len(a) < (k-1)*lda+n || !at && len(a) < (n-1)*lda+k:
		panic(shortA)
	case bt && len(b) < (n-1)*ldb+k || !bt && len(b) < (k-1)*ldb+n:
		panic(shortB)
	case len(c) < (n-1)*ldc+n:
		panic(shortC)
	}
	gemm(n, n, k, alpha, matrix{a, lda, at}, matrix{b, ldb, bt}, beta, c, ldc, part{lower: ul == blas.Lower, upper: ul == blas.Upper})
}
