package ops

import (
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AddDiag returns A + diag(d): d is a scalar node (the same value is added to every diagonal entry, e.g. a noise
// variance σ²) or a vector [n] (entry i is added to A_ii).
//
// Shapes: a [n,n]; d scalar or [n] -> [n,n]. Errors: *ShapeError at construction for a non-square a or a d of
// another shape. Gradients: ∂/∂A = G; ∂/∂d = tr(G) for a scalar d, diag(G) for a vector d.
func AddDiag(a, d *G.Node) (*G.Node, error) { return apply(addDiag{}, a, d) }

type addDiag struct{}

func (addDiag) name() string     { return "AddDiag" }
func (addDiag) params(io.Writer) {}
func (addDiag) arity() int       { return 2 }
func (addDiag) diff() []bool     { return []bool{true, true} }

func (addDiag) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if err := squareShape("AddDiag", "a", in[0]); err != nil {
		return nil, err
	}
	n := in[0][0]
	if !(len(in[1]) == 0 || len(in[1]) == 1 && in[1][0] == n) {
		return nil, &ShapeError{Op: "AddDiag", Want: fmt.Sprintf("d a scalar or a vector [%d]", n), Got: fmt.Sprintf("%v", in[1])}
	}
	return in[0].Clone(), nil
}

func (addDiag) forward(in []arg, out []float64) error {
	n, d := in[0].rows(), in[1]
	copy(out, in[0].data)
	for i := 0; i < n; i++ {
		if len(d.shape) == 0 {
			out[i*n+i] += d.data[0]
		} else {
			out[i*n+i] += d.data[i]
		}
	}
	return nil
}

func (addDiag) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	n := in[0].rows()
	switch {
	case wrt == 0:
		copy(dst, g.data)
	case len(in[1].shape) == 0:
		s := 0.0
		for i := 0; i < n; i++ {
			s += g.data[i*n+i]
		}
		dst[0] = s
	default:
		for i := 0; i < n; i++ {
			dst[i] = g.data[i*n+i]
		}
	}
	return nil
}

// DiagPart returns the diagonal of a square matrix as a vector.
//
// Shapes: a [n,n] -> [n]. Errors: *ShapeError at construction for a non-square a.
// Gradient: ∂/∂A = diag(g), zero off the diagonal.
func DiagPart(a *G.Node) (*G.Node, error) { return apply(diagPart{}, a) }

type diagPart struct{}

func (diagPart) name() string     { return "DiagPart" }
func (diagPart) params(io.Writer) {}
func (diagPart) arity() int       { return 1 }
func (diagPart) diff() []bool     { return []bool{true} }

func (diagPart) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if err := squareShape("DiagPart", "a", in[0]); err != nil {
		return nil, err
	}
	return tensor.Shape{in[0][0]}, nil
}

func (diagPart) forward(in []arg, out []float64) error {
	n := in[0].rows()
	for i := 0; i < n; i++ {
		out[i] = in[0].data[i*n+i]
	}
	return nil
}

func (diagPart) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	n := in[0].rows()
	clear(dst)
	for i := 0; i < n; i++ {
		dst[i*n+i] = g.data[i]
	}
	return nil
}
