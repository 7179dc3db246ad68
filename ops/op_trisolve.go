package ops

import (
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TriSolve returns X = op(T)⁻¹·B, the solution of the triangular system op(T)·X = B, where op(T) = Tᵀ when trans.
// Only the upper (upper = true) or lower triangle of T is read, diagonal included; the diagonal must be non-zero
// (no check: a zero pivot gives ±Inf/NaN).
//
// Shapes: t [n,n]; b [n,m] or a vector [n] -> the shape of b. Errors: *ShapeError at construction for a
// non-square t or a b whose leading dimension is not n.
//
// Gradients (see TriSolveBackward): dB = op(T)⁻ᵀ·G and dT = −(op(T)⁻ᵀG)·Xᵀ (transposed when trans), masked to the
// triangle of T that is read — the gradient of the other triangle is 0.
func TriSolve(t, b *G.Node, upper, trans bool) (*G.Node, error) {
	return apply(triSolve{upper: upper, trans: trans}, t, b)
}

type triSolve struct{ upper, trans bool }

func (k triSolve) name() string       { return "TriSolve" }
func (k triSolve) params(w io.Writer) { fmt.Fprintf(w, "upper=%t,trans=%t", k.upper, k.trans) }
func (k triSolve) arity() int         { return 2 }
func (k triSolve) diff() []bool       { return []bool{true, true} }

func (k triSolve) outShape(in []tensor.Shape) (tensor.Shape, error) {
	return solveShape("TriSolve", "t", in)
}

// solveShape checks a square [n,n] first operand and a [n,m] or [n] second one and returns the latter.
func solveShape(op, what string, in []tensor.Shape) (tensor.Shape, error) {
	if err := squareShape(op, what, in[0]); err != nil {
		return nil, err
	}
	n := in[0][0]
	if (len(in[1]) != 1 && len(in[1]) != 2) || in[1][0] != n {
		return nil, &ShapeError{Op: op, Want: fmt.Sprintf("b of shape [%d] or [%d,m]", n, n), Got: fmt.Sprintf("%v", in[1])}
	}
	return in[1].Clone(), nil
}

func (k triSolve) forward(in []arg, out []float64) error {
	TriSolveTo(out, in[0].data, in[1].data, in[0].rows(), in[1].cols(), k.upper, k.trans)
	return nil
}

// backwardAll computes dB once and dT from it (the per-input path would solve for dB twice).
func (k triSolve) backwardAll(in []arg, out arg, g arg, dst [][]float64) error {
	TriSolveBackward(dst[0], dst[1], in[0].data, out.data, g.data, in[0].rows(), in[1].cols(), k.upper, k.trans)
	return nil
}

func (k triSolve) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	n, m := in[0].rows(), in[1].cols()
	if wrt == 0 {
		TriSolveBackward(dst, nil, in[0].data, out.data, g.data, n, m, k.upper, k.trans)
	} else {
		TriSolveBackward(nil, dst, in[0].data, out.data, g.data, n, m, k.upper, k.trans)
	}
	return nil
}
