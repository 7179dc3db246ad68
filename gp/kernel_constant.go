package gp

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
)

// KindConstant is the Spec kind of Constant.
const KindConstant = "kernel/constant"

// Constant is the constant kernel k(x, x') = c.
type Constant struct {
	dim      int
	Variance *graph.Param
}

// NewConstant returns a Constant kernel with value Variance (default DefaultVariance).
func NewConstant(c KernelConfig) (*Constant, error) {
	if c.InputDim <= 0 {
		return nil, configErr("Constant kernel: InputDim must be positive, got %d", c.InputDim)
	}
	name := c.Name
	if name == "" {
		name = "constant"
	}
	p, err := graph.NewParam(name+".variance", []float64{orDefault(c.Variance, DefaultVariance)}, graph.Positive{})
	if err != nil {
		return nil, err
	}
	return &Constant{dim: c.InputDim, Variance: p}, nil
}

// K returns c for every pair [N,M].
func (k *Constant) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	return g.Mul(g.Fill("constant.ones", 1, rows(x1), rows(x2)), g.Param(k.Variance))
}

// KDiag returns c for every row [N].
func (k *Constant) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.Mul(g.Fill("constant.ones", 1, rows(x)), g.Param(k.Variance))
}

// InputDim returns D.
func (k *Constant) InputDim() int { return k.dim }

// Params returns the value.
func (k *Constant) Params() []*graph.Param { return []*graph.Param{k.Variance} }

func (k *Constant) String() string { return fmt.Sprintf("Constant(%.4g)", k.Variance.Value()[0]) }

// Spec describes the kernel: the Param's name prefix and D.
func (k *Constant) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variance, ".variance")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindConstant, simpleKernelSpec{Name: name, InputDim: k.dim})
}

func init() {
	RegisterKind(KindConstant, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c simpleKernelSpec
		if err := decodeLeaf(KindConstant, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindConstant, c.InputDim); err != nil {
			return nil, err
		}
		return NewConstant(KernelConfig{Name: c.Name, InputDim: c.InputDim})
	})
	RegisterKernel(KernelFamily{Name: "constant", Kind: KindConstant, Doc: "c for every pair (a constant offset)",
		New: func(o KernelOptions) (Kernel, error) {
			return NewConstant(KernelConfig{Name: o.Name, InputDim: o.InputDim})
		}})
}
