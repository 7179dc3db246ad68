package blas

import "gonum.org/v1/gonum/blas"

// syrkBlock is the order of the diagonal blocks Dsyrk computes through a scratch tile.
const syrkBlock = 96

// Dsyrk computes the ul triangle of C = alpha·A·Aᵀ + beta·C (tA = NoTrans, A n × k) or alpha·Aᵀ·A + beta·C
// (A k × n); the other triangle of C is neither read nor written. Off-diagonal blocks of the triangle are
// Dgemm calls in place; each diagonal block is computed whole in a scratch tile (the triangle copied in, the
// result's triangle copied out), so every entry is computed as Dgemm computes it.
func (Implementation) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	switch {
	case ul != blas.Lower && ul != blas.Upper:
		panic(badUplo)
	case tA != blas.Trans && tA != blas.NoTrans && tA != blas.ConjTrans:
		panic(badTranspose)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	}
	at := tA != blas.NoTrans
	row, col := n, k
	if at {
		row, col = k, n
	}
	switch {
	case lda < max(1, col):
		panic(badLdA)
	case ldc < max(1, n):
		panic(badLdC)
	}
	if n == 0 {
		return
	}
	switch {
	case len(a) < (row-1)*lda+col:
		panic(shortA)
	case len(c) < (n-1)*ldc+n:
		panic(shortC)
	}
	A := matrix{a, lda, at}   // op(A): n × k
	At := matrix{a, lda, !at} // op(A)ᵀ: k × n
	tile := make([]float64, syrkBlock*syrkBlock)
	for i0 := 0; i0 < n; i0 += syrkBlock {
		nb := min(syrkBlock, n-i0)
		// Off-diagonal: the rows i0.. of the lower triangle left of the block, or of the upper one right of it.
		if ul == blas.Lower && i0 > 0 {
			gemm(nb, i0, k, alpha, A.sub(i0, 0), At, beta, c[i0*ldc:], ldc)
		}
		if ul == blas.Upper && i0+nb < n {
			gemm(nb, n-i0-nb, k, alpha, A.sub(i0, 0), At.sub(0, i0+nb), beta, c[i0*ldc+i0+nb:], ldc)
		}
		// Diagonal block through the tile.
		t := tile[:nb*nb]
		clear(t)
		for i := 0; i < nb; i++ {
			lo, hi := 0, i+1 // lower: columns 0..i
			if ul == blas.Upper {
				lo, hi = i, nb
			}
			copy(t[i*nb+lo:i*nb+hi], c[(i0+i)*ldc+i0+lo:(i0+i)*ldc+i0+hi])
		}
		gemm(nb, nb, k, alpha, A.sub(i0, 0), At.sub(0, i0), beta, t, nb)
		for i := 0; i < nb; i++ {
			lo, hi := 0, i+1
			if ul == blas.Upper {
				lo, hi = i, nb
			}
			copy(c[(i0+i)*ldc+i0+lo:(i0+i)*ldc+i0+hi], t[i*nb+lo:i*nb+hi])
		}
	}
}
