package graph

import (
	"fmt"

	"github.com/gpzoo/gpzoo/ops"
)

// DefaultPositiveFloor is the lower bound of Positive{} when Floor is zero: variances and length-scales never
// reach zero, where kernels and likelihoods divide by them.
const DefaultPositiveFloor = 1e-6

// Transform maps a Param's unconstrained value to its constrained value, in the graph and in plain Go.
type Transform interface {
	// Forward returns the constrained node for the raw leaf.
	Forward(g *Graph, raw *Node) *Node
	// Apply returns the constrained value of raw (shape shape), in plain Go.
	Apply(raw []float64, shape []int) []float64
	// Inverse returns the raw value whose constrained value is c, or an error when c is outside the range.
	Inverse(c []float64, shape []int) ([]float64, error)
	// String names the transform with its constants (it appears in hashes and logs).
	String() string
}

// Identity leaves values unconstrained.
type Identity struct{}

// Forward returns raw.
func (Identity) Forward(g *Graph, raw *Node) *Node { return raw }

// Apply returns a copy of raw.
func (Identity) Apply(raw []float64, _ []int) []float64 { return append([]float64(nil), raw...) }

// Inverse returns a copy of c; it fails only on non-finite values.
func (Identity) Inverse(c []float64, _ []int) ([]float64, error) {
	if err := ops.CheckFinite("Identity.Inverse", c, 1); err != nil {
		return nil, err
	}
	return append([]float64(nil), c...), nil
}

func (Identity) String() string { return "Identity" }

// Positive constrains values to (Floor, ∞) by softplus(raw) + Floor (not exp: softplus grows linearly, so large
// values train stably). Floor 0 means DefaultPositiveFloor.
type Positive struct{ Floor float64 }

func (t Positive) floor() float64 {
	if t.Floor == 0 {
		return DefaultPositiveFloor
	}
	return t.Floor
}

// Forward returns softplus(raw) + Floor.
func (t Positive) Forward(g *Graph, raw *Node) *Node { return g.Positive(raw, t.floor()) }

// Apply returns softplus(raw) + Floor elementwise.
func (t Positive) Apply(raw []float64, _ []int) []float64 {
	c := make([]float64, len(raw))
	for i, r := range raw {
		c[i] = ops.SoftplusFloat(r) + t.floor()
	}
	return c
}

// Inverse returns softplus⁻¹(c − Floor); every c must exceed Floor.
func (t Positive) Inverse(c []float64, _ []int) ([]float64, error) {
	if err := ops.CheckFinite("Positive.Inverse", c, 1); err != nil {
		return nil, err
	}
	raw := make([]float64, len(c))
	for i, v := range c {
		r, err := ops.SoftplusInverse(v, t.floor())
		if err != nil {
			return nil, fmt.Errorf("graph: Positive.Inverse entry %d: %w", i, err)
		}
		raw[i] = r
	}
	return raw, nil
}

func (t Positive) String() string { return fmt.Sprintf("Positive{%g}", t.floor()) }

// LowerTriangular constrains an [n,n] value to a lower-triangular matrix with a positive diagonal (a Cholesky
// factor): the strictly lower part is raw, the diagonal softplus(raw_ii) + Floor, the upper part zero.
// Floor 0 means DefaultPositiveFloor.
type LowerTriangular struct{ Floor float64 }

func (t LowerTriangular) floor() float64 {
	if t.Floor == 0 {
		return DefaultPositiveFloor
	}
	return t.Floor
}

// Forward returns the factor node.
func (t LowerTriangular) Forward(g *Graph, raw *Node) *Node {
	return g.LowerTriPositive(raw, t.floor())
}

// Apply returns the factor.
func (t LowerTriangular) Apply(raw []float64, shape []int) []float64 {
	n := shape[0]
	c := make([]float64, len(raw))
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			c[i*n+j] = raw[i*n+j]
		}
		c[i*n+i] = ops.SoftplusFloat(raw[i*n+i]) + t.floor()
	}
	return c
}

// Inverse returns the raw value of a lower-triangular factor c; the diagonal must exceed Floor and the
// strictly upper part must be zero.
func (t LowerTriangular) Inverse(c []float64, shape []int) ([]float64, error) {
	if len(shape) != 2 || shape[0] != shape[1] {
		return nil, &ops.ShapeError{Op: "LowerTriangular.Inverse", Want: "a square matrix", Got: fmt.Sprint(shape)}
	}
	if err := ops.CheckFinite("LowerTriangular.Inverse", c, shape[1]); err != nil {
		return nil, err
	}
	return ops.LowerTriPositiveInverse(c, shape[0], t.floor())
}

func (t LowerTriangular) String() string { return fmt.Sprintf("LowerTriangular{%g}", t.floor()) }
