package ops

import (
	"fmt"
	"io"

	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dot returns the scalar Σᵢ aᵢbᵢ over all entries of two operands of the same shape (the Frobenius inner product
// for matrices). Dot(a, a) is a squared norm; Dot(w, x) with fixed random w is the projection gradient checks use.
func Dot(a, b *G.Node) (*G.Node, error) { return apply(dot{}, a, b) }

type dot struct{}

func (dot) name() string     { return "Dot" }
func (dot) params(io.Writer) {}
func (dot) arity() int       { return 2 }
func (dot) diff() []bool     { return []bool{true, true} }
func (dot) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if !in[0].Eq(in[1]) {
		return nil, &ShapeError{Op: "Dot", Want: "equal shapes", Got: fmt.Sprintf("%v and %v", in[0], in[1])}
	}
	return tensor.ScalarShape(), nil
}
func (dot) forward(in []arg, out []float64) error {
	out[0] = floats.Dot(in[0].data, in[1].data)
	return nil
}
func (dot) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	floats.ScaleTo(dst, g.scalar(), in[1-wrt].data)
	return nil
}
