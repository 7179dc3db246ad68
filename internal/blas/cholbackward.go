package blas

import "gonum.org/v1/gonum/blas"

// CholeskyBackwardCore overwrites w (n × n, row-major), which holds tril(L̄) with a zero strictly upper triangle,
// with M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹, the core of the Cholesky factorisation's backward pass (Murray 2016; Φ keeps
// the lower triangle and halves the diagonal), for the lower Cholesky factor l (n × n; only its lower triangle is
// read). It is the three level-3 calls
//
//	Pᵀ = Φ(Lᵀ·W)ᵀ (Dtrmm, written transposed),   Y = (L⁻ᵀ·Pᵀ)ᵀ = P·L⁻¹ (Dtrsm, written transposed),   M = L⁻ᵀ·Y (Dtrsm)
//
// on one packing of Lᵀ, skipping the blocks that are known to be zero: W and P are lower triangular, so only
// the rows i ≥ j of column j of Lᵀ·W are computed (n³/3 flops instead of n³), and column i of Pᵀ is zero below
// row i, i.e. in its leading rows in the order of the solve (n³/3 instead of n³): 5n³/3 flops in all instead
// of 3n³. The skipped terms are exact zeros, so the values are those of the three full calls. The transposes
// are fused into the stores of the first two calls.
func CholeskyBackwardCore(w, l []float64, n int) {
	if n == 0 {
		return
	}
	kern := sel.Active()
	lt := newTri(blas.Lower, blas.Trans, blas.NonUnit, n, l, n) // Lᵀ, upper: swept from the bottom
	pk := lt.packed(kern)
	defer pk.release()
	tb := getBuf(n * n)
	defer buffers.Put(tb)
	pt := *tb
	// Pᵀ = (Lᵀ·W)ᵀ: processing row p is row n−1−p, and column j needs the rows i ≥ j, i.e. the first n − j
	// processing rows (W is zero outside them); the rows not computed are strictly above the diagonal of P, i.e.
	// strictly below that of Pᵀ, which Φ clears.
	trmmLeft(lt, n, 1, w, n, leftOpts{packed: pk, skip: func(j0, _ int) int { return n - j0 }, out: pt, ldo: n})
	for i := 0; i < n; i++ { // Φ, on the transpose: keep the upper triangle, halve the diagonal
		clear(pt[i*n : i*n+i])
		pt[i*n+i] *= 0.5
	}
	// Y = P·L⁻¹ = (L⁻ᵀ·Pᵀ)ᵀ: column i of Pᵀ (row i of P) is zero below row i, i.e. in its first n − 1 − i
	// processing rows: a tile [i0, i1) has n − i1 leading zero rows.
	trsmLeft(lt, n, 1, pt, n, leftOpts{packed: pk, skip: func(_, i1 int) int { return n - i1 }, out: w, ldo: n})
	// M = L⁻ᵀ·Y.
	trsmLeft(lt, n, 1, w, n, leftOpts{packed: pk})
}
