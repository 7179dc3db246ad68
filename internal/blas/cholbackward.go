package blas

import "gonum.org/v1/gonum/blas"

// CholeskyBackwardCore overwrites w (n × n, row-major), which holds tril(L̄) with a zero strictly upper triangle,
// with M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹, the core of the Cholesky factorisation's backward pass (Murray 2016; Φ keeps
// the lower triangle and halves the diagonal), for the lower Cholesky factor l (n × n; only its lower triangle is
// read). It is the three level-3 calls
//
//	P = Φ(Lᵀ·W) (Dtrmm),   Y = P·L⁻¹ (Dtrsm, right),   M = L⁻ᵀ·Y (Dtrsm, left)
//
// skipping the blocks that are known to be zero: W and P are lower triangular, so only the rows i ≥ j of column j
// of Lᵀ·W are computed (n³/3 flops instead of n³), and each column of Pᵀ has only leading zeros below its
// diagonal in the order of the right-side solve (n³/3 instead of n³): 5n³/3 flops in all instead of 3n³. The
// skipped terms are exact zeros, so the values are those of the three full calls.
func CholeskyBackwardCore(w, l []float64, n int) {
	if n == 0 {
		return
	}
	// P = Φ(Lᵀ·W): Lᵀ is upper, swept from the bottom: processing row p is row n−1−p, and column j needs the
	// rows i ≥ j, i.e. the first n − j processing rows (and W is zero outside them).
	trmmLeft(newTri(blas.Lower, blas.Trans, blas.NonUnit, n, l, n), n, 1, w, n, func(j0, _ int) int { return n - j0 })
	for i := 0; i < n; i++ {
		clear(w[i*n+i+1 : i*n+n])
		w[i*n+i] *= 0.5
	}
	// Y = P·L⁻¹ ⇔ Yᵀ = L⁻ᵀ·Pᵀ: Lᵀ upper, swept from the bottom; column i of Pᵀ (row i of P) is zero below row i,
	// i.e. in its first n − 1 − i processing rows: a tile [i0, i1) has n − i1 leading zero rows.
	rightSide(n, n, w, n, func(pt []float64, ld int) {
		trsmLeft(newTri(blas.Lower, blas.Trans, blas.NonUnit, n, l, n), n, 1, pt, ld, func(_, i1 int) int { return n - i1 })
	})
	// M = L⁻ᵀ·Y.
	trsmLeft(newTri(blas.Lower, blas.Trans, blas.NonUnit, n, l, n), n, 1, w, n, nil)
}
