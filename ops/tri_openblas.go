//go:build openblas

package ops

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// triQuadEngine runs TriQuadCols' products factor by factor on OpenBLAS: B_p = L_pᵀA by dtrmm, kept for the
// backward (b, P buffers of M·N), which computes dL_p = tril(A·G_pᵀ) (lowerABt) and L_p·G_p (dtrmm) per factor.
//
// The outputs run one after another, each BLAS call on all cores. Running the outputs concurrently instead (one
// core each) was measured on the 2-core reference machine (M = 100 and 200, N = 1024, P = 8 and 30): with
// OpenBLAS it was about twice as slow (concurrent calls into its threaded dtrmm/dgemm oversubscribe the cores).
type triQuadEngine struct {
	b   [][]float64 // P buffers of M·N: B_p, then G_p and L_p·G_p
	acc [][]float64 // P buffers of N: column sums, then the scaled upstream gradient column
}

// ensure sizes the buffers for p outputs of an [m,n] operand.
func (e *triQuadEngine) ensure(p, mn, n int) {
	if len(e.b) != p || len(e.b[0]) != mn || len(e.acc[0]) != n {
		e.b, e.acc = make([][]float64, p), make([][]float64, p)
		for i := range e.b {
			e.b[i], e.acc[i] = make([]float64, mn), make([]float64, n)
		}
	}
}

// triSolveInto writes X = op(T)⁻¹·B into dst (TriSolveTo's arguments, checked there): b copied into dst, then
// OpenBLAS's dtrsm in place.
func triSolveInto(dst, t, b []float64, n, m int, upper, trans bool) {
	if !sameStart(dst, b) {
		copy(dst, b)
	}
	blas64.Trsm(blas.Left, blasTrans(trans), 1, triangular(t, n, upper), dense(dst, n, m))
}

// triMul computes B = op(L)·B in place for L [m,m] lower triangular.
func triMul(tr blas.Transpose, l []float64, b []float64, m, n int) {
	blas64.Trmm(blas.Left, tr, 1, triangular(l, m, false), dense(b, m, n))
}

// forward writes out[n,p] = ‖L_pᵀa_n‖² for a [m,n] and the factors ls (lower triangles read) and keeps the products.
func (e *triQuadEngine) forward(a []float64, m, n int, ls [][]float64, out []float64) {
	np := len(ls)
	e.ensure(np, m*n, n)
	for p, l := range ls {
		b, acc := e.b[p], e.acc[p]
		copy(b, a)
		triMul(blas.Trans, l, b, m, n) // B_p = L_pᵀA
		clear(acc)
		for i := 0; i < m; i++ {
			for j, v := range b[i*n : i*n+n] {
				acc[j] += v * v
			}
		}
		for j, s := range acc {
			out[j*np+p] = s
		}
	}
}

// backward writes da = Σ_p L_p·G_p (if not nil) and dls[p] = tril(A·G_pᵀ) (the non-nil ones; strict upper triangle
// zeroed), G_p = 2·B_p·diag(g[:,p]), from the products of the last forward when cached (they are consumed), else
// recomputed.
func (e *triQuadEngine) backward(a []float64, m, n int, ls [][]float64, g, da []float64, dls [][]float64, cached bool) {
	np := len(ls)
	cached = cached && len(e.b) == np && len(e.b[0]) == m*n
	e.ensure(np, m*n, n)
	for p, l := range ls {
		if da == nil && dls[p] == nil {
			continue
		}
		b, gc := e.b[p], e.acc[p]
		if !cached {
			copy(b, a)
			triMul(blas.Trans, l, b, m, n)
		}
		for j := range gc {
			gc[j] = 2 * g[j*np+p]
		}
		for i := 0; i < m; i++ { // G_p = 2·B_p·diag(ĝ_p)
			row := b[i*n : i*n+n]
			for j, s := range gc {
				row[j] *= s
			}
		}
		if dl := dls[p]; dl != nil {
			lowerABt(dense(dl, m, m), dense(a, m, n), dense(b, m, n))
		}
		if da != nil {
			triMul(blas.NoTrans, l, b, m, n) // L_p·G_p
		}
	}
	if da != nil {
		_ = ForRows(m, 16, func(lo, hi int) error {
			d := da[lo*n : hi*n]
			copy(d, e.b[0][lo*n:hi*n])
			for _, b := range e.b[1:] {
				for i, v := range b[lo*n : hi*n] {
					d[i] += v
				}
			}
			return nil
		})
	}
}
