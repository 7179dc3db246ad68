//go:build !openblas

package ops

import "github.com/gpzoo/gpzoo/ops/internal/blas"

// triQuadEngine runs TriQuadCols' products in gpzoo's batched routine (ops/internal/blas.TriQuad), which keeps
// B_p = L_pᵀA between the forward and the backward.
type triQuadEngine struct{ tq blas.TriQuad }

// forward writes out[n,p] = ‖L_pᵀa_n‖² for a [m,n] and the factors ls (lower triangles read) and keeps the products.
func (e *triQuadEngine) forward(a []float64, m, n int, ls [][]float64, out []float64) {
	e.tq.Forward(a, m, n, ls, out)
}

// backward writes da = Σ_p L_p·G_p (if not nil) and dls[p] = tril(A·G_pᵀ) (the non-nil ones; strict upper triangle
// zeroed), G_p = 2·B_p·diag(g[:,p]), from the products of the last forward when cached (they are consumed), else
// recomputed first.
func (e *triQuadEngine) backward(a []float64, m, n int, ls [][]float64, g, da []float64, dls [][]float64, cached bool) {
	if !cached {
		e.tq.Forward(a, m, n, ls, make([]float64, n*len(ls)))
	}
	e.tq.Backward(a, m, n, ls, g, da, dls)
}
