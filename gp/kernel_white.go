package gp

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
)

// KindWhite is the Spec kind of White.
const KindWhite = "kernel/white"

// White is the white-noise kernel: σ² on the diagonal of K(X, X), zero between distinct input sets.
type White struct {
	dim      int
	Variance *graph.Param
}

// NewWhite returns a White kernel with variance Variance (default DefaultVariance).
func NewWhite(c KernelConfig) (*White, error) {
	if c.InputDim <= 0 {
		return nil, configErr("White kernel: InputDim must be positive, got %d", c.InputDim)
	}
	name := c.Name
	if name == "" {
		name = "white"
	}
	p, err := graph.NewParam(name+".variance", []float64{orDefault(c.Variance, DefaultVariance)}, graph.Positive{})
	if err != nil {
		return nil, err
	}
	return &White{dim: c.InputDim, Variance: p}, nil
}

// K returns σ²I when x1 and x2 are the same node, and zeros [N,M] otherwise.
func (k *White) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	n, m := rows(x1), rows(x2)
	z := g.Zeros("white.zeros", n, m)
	if x1 != x2 {
		return z
	}
	return g.AddDiag(z, g.Param(k.Variance))
}

// KDiag returns σ² for every row [N].
func (k *White) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.Mul(g.Fill("white.ones", 1, rows(x)), g.Param(k.Variance))
}

// InputDim returns D.
func (k *White) InputDim() int { return k.dim }

// Params returns the variance.
func (k *White) Params() []*graph.Param { return []*graph.Param{k.Variance} }

func (k *White) String() string { return fmt.Sprintf("White(variance=%.4g)", k.Variance.Value()[0]) }

// Spec describes the kernel: the Param's name prefix and D.
func (k *White) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variance, ".variance")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindWhite, simpleKernelSpec{Name: name, InputDim: k.dim})
}

func init() {
	RegisterKind(KindWhite, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c simpleKernelSpec
		if err := decodeLeaf(KindWhite, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindWhite, c.InputDim); err != nil {
			return nil, err
		}
		return NewWhite(KernelConfig{Name: c.Name, InputDim: c.InputDim})
	})
	RegisterKernel(KernelFamily{Name: "white", Kind: KindWhite, Doc: "σ² on the diagonal of K(X, X), 0 elsewhere (independent noise)",
		New: func(o KernelOptions) (Kernel, error) {
			return NewWhite(KernelConfig{Name: o.Name, InputDim: o.InputDim})
		}})
}
