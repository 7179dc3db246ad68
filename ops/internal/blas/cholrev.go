package blas

import "gonum.org/v1/gonum/blas"

// cholRevBlock is the block order of CholeskyBackward.
const cholRevBlock = 48

// CholeskyBackward overwrites w (n × n, row-major), which holds tril(L̄) with a zero strictly upper triangle, with
// the gradient Ā with respect to the full symmetric input A of L = chol((A+Aᵀ)/2) (L lower, only its lower triangle
// is read): Ā = (M + Mᵀ)/2 with M = L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹, the quantity ops.CholeskyBackward defines, computed by the
// blocked reverse mode of Murray (2016), "Differentiation of the Cholesky decomposition", arXiv:1602.07527, Alg. 3
// (chol_blocked_rev) with the level-2 reverse (Alg. 2) on each diagonal block. Per block of rows j:k, from the last:
//
//	C̄ ← C̄·D⁻¹,   B̄ ← B̄ − C̄·R,   D̄ ← D̄ − tril(C̄ᵀ·C),   D̄ ← rev(D, D̄),   R̄ ← R̄ − C̄ᵀ·B − (D̄ + D̄ᵀ)·R
//
// with R = L[j:k, :j], D = L[j:k, j:k], B = L[k:, :j], C = L[k:, j:k] and the same blocks of w. That is about
// 2n³/3 flops in Dgemm and Dgemmt calls, against 3n³ for the three triangular calls (5n³/3 when they skip the
// known zero blocks).
// Murray's result is lower triangular, each off-diagonal entry the derivative with respect to A_ij = A_ji taken
// as one variable; the symmetric convention halves it onto both entries.
func CholeskyBackward(w, l []float64, n int) {
	var im Implementation
	sym := make([]float64, cholRevBlock*cholRevBlock)
	for k := n; k > 0; k -= cholRevBlock {
		j := max(0, k-cholRevBlock)
		nb, nk := k-j, n-k
		if nk > 0 {
			cb := w[k*n+j:]                                                                              // C̄ [nk, nb]
			im.Dtrsm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, nk, nb, 1, l[j*n+j:], n, cb, n) // C̄·D⁻¹
			if j > 0 {
				im.Dgemm(blas.NoTrans, blas.NoTrans, nk, j, nb, -1, cb, n, l[j*n:], n, 1, w[k*n:], n) // B̄ −= C̄·R
			}
			im.Dgemmt(blas.Lower, blas.Trans, blas.NoTrans, nb, nk, -1, cb, n, l[k*n+j:], n, 1, w[j*n+j:], n) // D̄ −= tril(C̄ᵀ·C)
		}
		cholRevUnblocked(w[j*n+j:], l[j*n+j:], nb, n)
		if j > 0 {
			if nk > 0 {
				im.Dgemm(blas.Trans, blas.NoTrans, nb, j, nk, -1, w[k*n+j:], n, l[k*n:], n, 1, w[j*n:], n) // R̄ −= C̄ᵀ·B
			}
			s := sym[:nb*nb] // D̄ + D̄ᵀ
			for r := 0; r < nb; r++ {
				for c := 0; c <= r; c++ {
					v := w[(j+r)*n+j+c]
					if r == c {
						s[r*nb+c] = 2 * v
						continue
					}
					s[r*nb+c], s[c*nb+r] = v, v
				}
			}
			im.Dgemm(blas.NoTrans, blas.NoTrans, nb, j, nb, -1, s, nb, l[j*n:], n, 1, w[j*n:], n) // R̄ −= (D̄+D̄ᵀ)·R
		}
	}
	for i := 0; i < n; i++ { // the symmetric convention
		for c := 0; c < i; c++ {
			v := 0.5 * w[i*n+c]
			w[i*n+c], w[c*n+i] = v, v
		}
	}
}

// cholRevUnblocked is Murray's level-2 reverse (Alg. 2) on an order-nb diagonal block: w (stride ld) holds the
// block's L̄ (lower) and is overwritten with its Ā in the lower-triangular convention; l is the block of L.
func cholRevUnblocked(w, l []float64, nb, ld int) {
	for j := nb - 1; j >= 0; j-- {
		d := l[j*ld+j]
		dbar := w[j*ld+j]
		for i := j + 1; i < nb; i++ { // D̄ −= C·C̄ / D
			dbar -= l[i*ld+j] * w[i*ld+j] / d
		}
		dbar /= d
		for i := j + 1; i < nb; i++ { // C̄ /= D
			w[i*ld+j] /= d
		}
		for i := j + 1; i < nb; i++ { // B̄ −= C̄ ⊗ R
			ci := w[i*ld+j]
			for c := 0; c < j; c++ {
				w[i*ld+c] -= ci * l[j*ld+c]
			}
		}
		for c := 0; c < j; c++ { // R̄ −= D̄·R + C̄ᵀ·B
			s := dbar * l[j*ld+c]
			for i := j + 1; i < nb; i++ {
				s += w[i*ld+j] * l[i*ld+c]
			}
			w[j*ld+c] -= s
		}
		w[j*ld+j] = dbar / 2
	}
}
