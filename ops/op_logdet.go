package ops

import (
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LogDetChol returns the scalar log det(L·Lᵀ) = 2·Σᵢ log L_ii of a Cholesky factor L (only the diagonal is read;
// see CholLogDet for the plain function). A non-positive diagonal entry gives NaN or −Inf (no error).
//
// Shapes: l [n,n] -> scalar. Errors: *ShapeError at construction for a non-square l.
// Gradient: ∂/∂L = diag(2g/L_ii), zero off the diagonal.
func LogDetChol(l *G.Node) (*G.Node, error) { return apply(logDetChol{}, l) }

type logDetChol struct{}

func (logDetChol) name() string     { return "LogDetChol" }
func (logDetChol) params(io.Writer) {}
func (logDetChol) arity() int       { return 1 }
func (logDetChol) diff() []bool     { return []bool{true} }

func (logDetChol) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if err := squareShape("LogDetChol", "l", in[0]); err != nil {
		return nil, err
	}
	return tensor.ScalarShape(), nil
}

func (logDetChol) forward(in []arg, out []float64) error {
	out[0] = CholLogDet(in[0].data, in[0].rows())
	return nil
}

func (logDetChol) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	n, gs := in[0].rows(), g.scalar()
	clear(dst)
	for i := 0; i < n; i++ {
		dst[i*n+i] = 2 * gs / in[0].data[i*n+i]
	}
	return nil
}
