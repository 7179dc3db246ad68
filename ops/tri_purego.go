//go:build !openblas

package ops

import (
	"github.com/gpzoo/gpzoo/ops/internal/blas"
	gblas "gonum.org/v1/gonum/blas"
)

// triSolveInto writes X = op(T)⁻¹·B into dst (TriSolveTo's arguments, checked there) with gpzoo's DtrsmLeftTo,
// which packs B's tiles from b and writes the solution to dst: no copy of b into dst first (dst may be b).
func triSolveInto(dst, t, b []float64, n, m int, upper, trans bool) {
	ul := gblas.Lower
	if upper {
		ul = gblas.Upper
	}
	blas.Implementation{}.DtrsmLeftTo(ul, blasTrans(trans), gblas.NonUnit, n, m, t, n, b, m, dst, m)
}

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
