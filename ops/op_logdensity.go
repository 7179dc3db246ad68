package ops

import (
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ScalarDensity is a univariate log density in plain Go: a prior on each entry of a parameter (package gp's
// priors implement it). LogDensitySum sums it over the entries of a node.
//
// Implementations must be pure functions of x and of constants fixed at construction, every one of them written
// into Name exactly (e.g. "lognormal(0,1)" with strconv's shortest round-trip formatting): Name goes into the
// op's hash, so two densities that differ only in a constant are never merged into one graph node.
type ScalarDensity interface {
	// Name names the density with every constant that changes its meaning.
	Name() string
	// LogDensity returns log p(x) and d/dx log p(x). Outside the support it returns −Inf and 0.
	LogDensity(x float64) (lp, dlp float64)
}

// logDensityK sums a ScalarDensity over the entries of its operand: Σᵢ log p(xᵢ), a scalar.
type logDensityK struct{ d ScalarDensity }

func (k logDensityK) name() string                                { return "LogDensitySum" }
func (k logDensityK) params(w io.Writer)                          { fmt.Fprintf(w, "density=%s", k.d.Name()) }
func (logDensityK) arity() int                                    { return 1 }
func (logDensityK) diff() []bool                                  { return []bool{true} }
func (logDensityK) outShape([]tensor.Shape) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

// forward sums in index order (one fixed order: the same bits on every machine and GOMAXPROCS).
func (k logDensityK) forward(in []arg, out []float64) error {
	s := 0.0
	for _, x := range in[0].data {
		lp, _ := k.d.LogDensity(x)
		s += lp
	}
	out[0] = s
	return nil
}

func (k logDensityK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	gs := g.scalar()
	for i, x := range in[0].data {
		_, dlp := k.d.LogDensity(x)
		dst[i] = gs * dlp
	}
	return nil
}

// LogDensitySum returns the scalar Σᵢ log p(xᵢ) over every entry of x (any shape) for the density d, with the
// gradient d/dxᵢ log p(xᵢ) per entry. An entry outside d's support makes the sum −Inf (its gradient is 0). The
// op's hash holds d.Name(). It returns an error for a nil d or x, or a d whose Name is empty.
func LogDensitySum(d ScalarDensity, x *G.Node) (*G.Node, error) {
	if d == nil || d.Name() == "" {
		return nil, fmt.Errorf("ops: LogDensitySum: nil or unnamed density")
	}
	return apply(logDensityK{d: d}, x)
}
