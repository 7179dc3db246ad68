package blas

import "math"

// CholeskyBackward overwrites w (n × n, row-major), which holds tril(L̄) with a zero strictly upper triangle, with
// the gradient Ā with respect to the full symmetric input A of L = chol((A+Aᵀ)/2) (L lower, only its lower triangle
// is read): Ā = (M + Mᵀ)/2 with M = L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹, the quantity ops.CholeskyBackward defines, computed by the
// blocked reverse mode of Murray (2016), "Differentiation of the Cholesky decomposition", arXiv:1602.07527, Alg. 3
// (chol_blocked_rev) with the level-2 reverse (Alg. 2) on each diagonal block. Per block of rows J = j:k (blocks
// of cholOuter from the first row, taken from the last), K = k:n:
//
//	C̄ ← C̄·D⁻¹,   B̄ ← B̄ − C̄·R,   D̄ ← D̄ − tril(C̄ᵀ·C),   D̄ ← rev(D, D̄),   R̄ ← R̄ − C̄ᵀ·B − (D̄ + D̄ᵀ)·R
//
// with R = L[J, :j], D = L[J, J], B = L[K, :j], C = L[K, J] and the same blocks of w. The solve runs on C̄'s
// transpose in tiles (solveT), every product on the micro-kernel reading w and L in place (update): about 2n³/3
// flops, against 3n³ for the three triangular calls (5n³/3 when they skip the known zero blocks).
// Murray's result is lower triangular, each off-diagonal entry the derivative with respect to A_ij = A_ji taken
// as one variable; the symmetric convention halves it onto both entries.
func CholeskyBackward(w, l []float64, n int) {
	if n == 0 {
		return
	}
	kern := sel.Active()
	nb := min(cholOuter, n)
	ws, buf := newCholWork(nb, n-nb, n)
	defer buffers.Put(buf)
	s := ws.s[:nb*cholOuter]
	for j := (n - 1) / nb * nb; j >= 0; j -= nb {
		k := min(j+nb, n)
		jb, nk := k-j, n-k
		if nk > 0 {
			// C̄ = w[K, J] ← C̄·D⁻¹: Dᵀ·X = C̄ᵀ, an upper triangle's back substitution, on C̄ᵀ with its rows
			// reversed in ws.x.
			packTriRev(kern, &ws, l[j*n+j:], jb, n)
			diagBlocks(&ws, jb, l[j*n+j:], (jb-1)*(n+1), -1, -n) // T[p][q] = D[jb−1−q][jb−1−p]
			ldx := xStride(nk)
			x := ws.x[:roundUp(jb, panelRows)*ldx]
			for q := 0; q < roundUp(jb, panelRows); q++ {
				clear(x[q*ldx+nk : (q+1)*ldx])
			}
			clear(x[jb*ldx:])
			panelSolve(kern, &ws, triRev(&ws, kern.mr), x, ldx, jb, nk, w[k*n+j:], n, true)
			if j > 0 { // B̄ −= C̄·R, C̄'s column q being row jb−1−q of x
				update(kern, &ws, nk, j, jb, -1, kop{x, (jb - 1) * ldx, -ldx, true}, kop{l, j * n, n, false}, w[k*n:], n, full, false)
			}
			// D̄ −= tril(C̄ᵀ·C) (w's strict upper triangle is scratch until symmetrize: the tiles across the diagonal
			// are written whole)
			update(kern, &ws, jb, jb, nk, -1, kop{w, k*n + j, n, false}, kop{l, k*n + j, n, false}, w[j*n+j:], n, part{lower: true}, true)
		}
		cholRevDiag(kern, w[j*n+j:], l[j*n+j:], jb, n)
		if j > 0 {
			if nk > 0 { // R̄ −= C̄ᵀ·B
				update(kern, &ws, jb, j, nk, -1, kop{w, k*n + j, n, false}, kop{l, k * n, n, false}, w[j*n:], n, full, false)
			}
			// R̄ −= (D̄ + D̄ᵀ)·R: S = D̄ + D̄ᵀ from D̄'s rows, mirrored, its diagonal doubled
			for p := 0; p < jb; p++ {
				sp := s[p*cholOuter : (p+1)*cholOuter]
				copy(sp[:p+1], w[(j+p)*n+j:])
				sp[p] *= 2
				clear(sp[jb:])
			}
			lowerToUpper(kern, s, cholOuter, s, cholOuter, jb)
			update(kern, &ws, jb, j, jb, -1, kop{s, 0, cholOuter, true}, kop{l, j * n, n, false}, w[j*n:], n, full, false)
		}
	}
	symmetrize(kern, w, n)
}

// symmetrize overwrites the n × n matrix w (row-major) with the symmetric matrix whose off-diagonal entries are
// half of w's lower ones: w[i][c] = w[c][i] = w[i][c]/2 for c < i. Whole 8 × 8 blocks below the diagonal by
// transposeBlocks (halving).
func symmetrize(kern *microKernel, w []float64, n int) {
	for i0 := 0; i0 < n; i0 += 8 {
		c1 := i0 // columns below the diagonal blocks, then the rest of the rows one by one
		if i0+8 <= n {
			transposeBlocks(kern, w, i0, n, w, i0*n, n, 1, i0/8, true)
		} else {
			c1 = 0
		}
		for r := i0; r < min(i0+8, n); r++ {
			for c := c1; c < r; c++ {
				v := 0.5 * w[r*n+c]
				w[r*n+c], w[c*n+r] = v, v
			}
		}
	}
}

// cholRevDiag is Murray's level-2 reverse (Alg. 2) on an order-nb diagonal block: w (stride ld) holds the
// block's L̄ (lower) and is overwritten with its Ā in the lower-triangular convention; l is the block of L.
// Per column j from the last: C̄ = w[j+1:, j] /= D (D = l[j][j]); D̄ = (w[j][j] − Σ l[i][j]·C̄_i)/D (the sum in
// four interleaved parts); the rows
// below get w[i][:j] −= C̄_i·l[j][:j] and row j gets w[j][:j] −= D̄·l[j][:j] + Σ_i C̄_i·l[i][:j] (in that order,
// one fused multiply-add each: the kernel's revRows, or revRowsGo); w[j][j] = D̄/2.
func cholRevDiag(kern *microKernel, w, l []float64, nb, ld int) {
	for j := nb - 1; j >= 0; j-- {
		d := l[j*ld+j]
		// D̄ = (w[j][j] − Σ_i l[i][j]·C̄_i)/D, the sum in four interleaved parts (i − j − 1 mod 4), added in order.
		var s0, s1, s2, s3 float64
		i := j + 1
		for ; i+4 <= nb; i += 4 {
			c0, c1, c2, c3 := w[i*ld+j]/d, w[(i+1)*ld+j]/d, w[(i+2)*ld+j]/d, w[(i+3)*ld+j]/d
			w[i*ld+j], w[(i+1)*ld+j], w[(i+2)*ld+j], w[(i+3)*ld+j] = c0, c1, c2, c3
			s0, s1 = math.FMA(l[i*ld+j], c0, s0), math.FMA(l[(i+1)*ld+j], c1, s1)
			s2, s3 = math.FMA(l[(i+2)*ld+j], c2, s2), math.FMA(l[(i+3)*ld+j], c3, s3)
		}
		for ; i < nb; i++ {
			c := w[i*ld+j] / d
			w[i*ld+j] = c
			s0 = math.FMA(l[i*ld+j], c, s0)
		}
		dbar := (w[j*ld+j] - (s0 + s1 + s2 + s3)) / d
		if kern.revRows != nil {
			kern.revRows(w, l, ld, nb, j, dbar)
		} else {
			revRowsGo(w, l, ld, nb, j, dbar)
		}
		w[j*ld+j] = dbar / 2
	}
}

// revRowsGo is the row updates of step j of cholRevDiag (see microKernel.revRows).
func revRowsGo(w, l []float64, ld, m, j int, dbar float64) {
	lj := l[j*ld : j*ld+j]
	wj := w[j*ld : j*ld+j]
	for c, v := range lj {
		wj[c] = math.FMA(-dbar, v, wj[c])
	}
	for i := j + 1; i < m; i++ {
		ci := w[i*ld+j]
		wi, li := w[i*ld:i*ld+j], l[i*ld:i*ld+j]
		for c, v := range lj {
			wi[c] = math.FMA(-ci, v, wi[c])
		}
		for c, v := range li {
			wj[c] = math.FMA(-ci, v, wj[c])
		}
	}
}
