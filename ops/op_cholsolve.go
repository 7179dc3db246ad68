package ops

import (
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CholSolve returns X = (L·Lᵀ)⁻¹·B for a lower Cholesky factor L (only its lower triangle is read), i.e. the
// solution of A·X = B with A = L·Lᵀ, by two triangular solves.
//
// Shapes: l [n,n]; b [n,m] or a vector [n] -> the shape of b. Errors: *ShapeError at construction for a
// non-square l or a b whose leading dimension is not n.
//
// Gradients (see CholSolveBackward): dB = (LLᵀ)⁻¹·G and dL = −tril((dB·Xᵀ + X·dBᵀ)·L); see e.g. Murray (2016),
// "Differentiation of the Cholesky decomposition", arXiv:1602.07527, and Giles (2008), "An extended collection of
// matrix derivative results for forward and reverse mode algorithmic differentiation".
func CholSolve(l, b *G.Node) (*G.Node, error) { return apply(cholSolve{}, l, b) }

type cholSolve struct{}

func (cholSolve) name() string     { return "CholSolve" }
func (cholSolve) params(io.Writer) {}
func (cholSolve) arity() int       { return 2 }
func (cholSolve) diff() []bool     { return []bool{true, true} }

func (cholSolve) outShape(in []tensor.Shape) (tensor.Shape, error) {
	return solveShape("CholSolve", "l", in)
}

func (cholSolve) forward(in []arg, out []float64) error {
	CholSolveTo(out, in[0].data, in[1].data, in[0].rows(), in[1].cols())
	return nil
}

func (cholSolve) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	n, m := in[0].rows(), in[1].cols()
	if wrt == 0 {
		CholSolveBackward(dst, nil, in[0].data, out.data, g.data, n, m)
	} else {
		CholSolveBackward(nil, dst, in[0].data, out.data, g.data, n, m)
	}
	return nil
}
