package ops

import (
	"fmt"
	"io"

	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TriQuadCols fuses the per-output variance term of sparse GP layers: the column sums of squares of L_pᵀA for P
// lower-triangular factors L_p. The naive composition SumRows(Square(MatMul(L_p, A, true, false))) costs a dense
// gemm (2M²N flops) forward and two backward per output, plus four elementwise passes over [M,N]; this op uses a
// triangular product forward (M²N), keeps B_p = L_pᵀA from the forward for the backward, and computes the lower
// triangle of dL_p only (≈ M²N instead of 2M²N). In the purego build all P factors run in one batched routine of
// gpzoo's BLAS (ops/internal/blas.TriQuad: A's column tiles packed once for every factor, the sums of squares,
// ∂A = Σ_p L_pG_p and the packed operands of tril(A·G_pᵀ) made while the tiles are in cache); the openblas build
// calls OpenBLAS's dtrmm per factor (triquad_openblas.go). BenchmarkTriQuadCols compares the op with the
// composition it replaces.

// triQuadK computes out[n,p] = ‖L_pᵀa_n‖² = Σ_i (L_pᵀA)[i,n]² for A [M,N] (operand 0) and P lower-triangular
// L_p [M,M] (operands 1..P; their strictly upper triangles are not read). Output [N,P].
type triQuadK struct {
	p  int
	ws *triQuadWork // scratch shared by the forward op and its gradient ops (not part of the op's meaning)
}

// triQuadWork is the scratch shared by the forward op and its gradient ops (not part of the op's meaning): the
// build's engine (triQuadEngine: gpzoo's batched routine in the purego build, OpenBLAS's dtrmm per factor in the
// openblas build) keeps the products B_p = L_pᵀA [M,N] of the latest forward run, which the joint backward reuses
// (and consumes): P·M·N floats that save one triangular product per output in the backward. Reuse is safe because
// every run of a graph runs the forward op before its gradient ops, on the same operand values; grads recomputes
// B_p when the operands are not the very slices the forward saw (e.g. a materialised copy) or the forward
// products were already consumed.
type triQuadWork struct {
	eng triQuadEngine
	// valid: eng holds L_pᵀA for the operands whose data start at srcA and srcL (the forward's); cleared when
	// the backward consumes them.
	valid bool
	srcA  *float64
	srcL  []*float64
}

// holds reports whether the engine holds the products of the operands in.
func (w *triQuadWork) holds(in []arg) bool {
	if !w.valid || len(w.srcL) != len(in)-1 || &in[0].data[0] != w.srcA {
		return false
	}
	for p, l := range in[1:] {
		if &l.data[0] != w.srcL[p] {
			return false
		}
	}
	return true
}

// factors returns the data of the factors L_p (operands 1..P).
func factors(in []arg) [][]float64 {
	ls := make([][]float64, len(in)-1)
	for p, l := range in[1:] {
		ls[p] = l.data
	}
	return ls
}

func (triQuadK) name() string         { return "TriQuadCols" }
func (k triQuadK) params(w io.Writer) { fmt.Fprintf(w, "p=%d", k.p) }
func (k triQuadK) arity() int         { return 1 + k.p }
func (k triQuadK) diff() []bool {
	d := make([]bool, 1+k.p)
	for i := range d {
		d[i] = true
	}
	return d
}

func (k triQuadK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	a := in[0]
	if len(a) != 2 {
		return nil, &ShapeError{Op: "TriQuadCols", Want: "A a matrix [M,N]", Got: fmt.Sprint(a)}
	}
	if err := checkPositiveDims("TriQuadCols", a); err != nil {
		return nil, err
	}
	for p, l := range in[1:] {
		if len(l) != 2 || l[0] != a[0] || l[1] != a[0] {
			return nil, &ShapeError{Op: "TriQuadCols", Want: fmt.Sprintf("square factors [%d,%d] for A %v", a[0], a[0], a),
				Got: fmt.Sprintf("%v (factor %d)", l, p)}
		}
	}
	return tensor.Shape{a[1], k.p}, nil
}

func (k triQuadK) forward(in []arg, out []float64) error {
	a := in[0]
	w := k.ws
	w.valid = false
	w.eng.forward(a.data, a.rows(), a.cols(), factors(in), out)
	w.srcA = &a.data[0]
	w.srcL = w.srcL[:0]
	for _, l := range in[1:] {
		w.srcL = append(w.srcL, &l.data[0])
	}
	w.valid = true
	return nil
}

// backward computes one input's gradient (the DoDiff path) without touching the shared forward products.
func (k triQuadK) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	all := make([][]float64, 1+k.p)
	all[wrt] = dst
	return k.grads(&triQuadWork{}, in, g, all)
}

// backwardAll computes every gradient at once, reusing (and consuming) the forward's B_p.
func (k triQuadK) backwardAll(in []arg, _ arg, g arg, dst [][]float64) error {
	return k.grads(k.ws, in, g, dst)
}

// grads writes the gradients wanted in dst (nil entries are skipped). With G_p = 2·B_p·diag(ĝ_p) [M,N] (ĝ_p
// column p of the output gradient, B_p = L_pᵀA):
//
//	dA = Σ_p L_p·G_p (triangular products),   dL_p = tril(A·G_pᵀ) (the lower triangle of a product),
//
// from d‖L_pᵀa_n‖² = 2⟨L_pᵀa_n, dL_pᵀa_n + L_pᵀda_n⟩ (only the lower triangle of L_p enters the forward). B_p comes
// from w when it holds the products of these operands, else it is recomputed; either way it is consumed.
func (k triQuadK) grads(w *triQuadWork, in []arg, g arg, dst [][]float64) error {
	a := in[0]
	cached := w.holds(in)
	w.valid = false
	w.eng.backward(a.data, a.rows(), a.cols(), factors(in), g.data, dst[0], dst[1:], cached)
	return nil
}

// lowerABt writes tril(A·Gᵀ) into the m×m matrix c (strictly upper triangle zeroed) for A, G [m,n] with n ≥ 1,
// in about m²n flops instead of the 2m²n of a full product (gemmTri).
func lowerABt(c, a, gm blas64.General) { gemmTri(false, 1, a, gm, c) }

// TriQuadCols returns the [N,P] matrix out[n,p] = ‖L_pᵀa_n‖² = Σ_i (L_pᵀA)_{in}² for A [M,N] (columns a_n) and
// P ≥ 1 lower-triangular factors ls[p] [M,M]: the column sums of squares of L_pᵀA, e.g. the q-covariance term
// diag(AᵀS_pA) with S_p = L_pL_pᵀ of a sparse GP's marginal variances. Only the lower triangles of the L_p are
// read (entries above the diagonal are treated as zero and get a zero gradient). It equals
// StackCols(SumRows(Square(MatMul(L_p, A, true, false)))...) up to round-off, in M²N flops per output forward
// (dtrmm) and about 2M²N backward (dtrmm and a lower-triangle-only product), instead of 2M²N and 4M²N.
//
// It returns a *ShapeError if A is not a matrix with positive sizes, no factor is given, an operand is nil or not
// float64, or a factor is not [M,M].
func TriQuadCols(a *G.Node, ls ...*G.Node) (*G.Node, error) {
	if len(ls) == 0 {
		return nil, &ShapeError{Op: "TriQuadCols", Want: "at least one factor", Got: "none"}
	}
	return apply(triQuadK{p: len(ls), ws: &triQuadWork{}}, append([]*G.Node{a}, ls...)...)
}
