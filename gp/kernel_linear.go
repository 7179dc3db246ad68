package gp

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindLinear is the Spec kind of Linear.
const KindLinear = "kernel/linear"

// Linear is the linear kernel k(x, x') = Σ_d σ²_d x_d x'_d (one shared σ² unless per-dimension Variances).
type Linear struct {
	dim       int
	shared    bool
	Variances *graph.Param // [D], or a scalar when shared
}

// NewLinear returns a Linear kernel. KernelConfig.Variances sets per-dimension variances; otherwise Variance
// (default DefaultVariance) is shared by all dimensions.
func NewLinear(c KernelConfig) (*Linear, error) {
	if c.InputDim <= 0 {
		return nil, configErr("Linear kernel: InputDim must be positive, got %d", c.InputDim)
	}
	name := c.Name
	if name == "" {
		name = "linear"
	}
	v := c.Variances
	switch len(v) {
	case 0:
		v = []float64{orDefault(c.Variance, DefaultVariance)}
	case c.InputDim:
	default:
		return nil, configErr("Linear kernel: %d variances for InputDim %d", len(v), c.InputDim)
	}
	shared := len(v) == 1 && c.InputDim > 1
	shape := []int{len(v)}
	if shared {
		shape = nil // one shared variance: a scalar, broadcast over the D dimensions
	}
	p, err := graph.NewParam(name+".variances", v, graph.Positive{}, shape...)
	if err != nil {
		return nil, err
	}
	return &Linear{dim: c.InputDim, shared: shared, Variances: p}, nil
}

func (k *Linear) variances(g *graph.Graph) *graph.Node {
	v := g.Param(k.Variances)
	if k.shared {
		v = g.Mul(g.Fill(k.Variances.Name()+".ones", 1, k.dim), v)
	}
	return v
}

// K returns x1 diag(σ²) x2ᵀ [N,M].
func (k *Linear) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	return g.CovMatrix(ops.LinearCov{}, x1, x2, k.variances(g))
}

// KDiag returns Σ_d σ²_d x_d² [N].
func (k *Linear) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.CovDiag(ops.LinearCov{}, x, k.variances(g))
}

// InputDim returns D.
func (k *Linear) InputDim() int { return k.dim }

// Params returns the variances.
func (k *Linear) Params() []*graph.Param { return []*graph.Param{k.Variances} }

func (k *Linear) String() string { return fmt.Sprintf("Linear(variances=%.4g)", k.Variances.Value()) }

// linearKernelSpec is the Config of Linear: Shared means one variance for all D dimensions.
type linearKernelSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
	Shared   bool   `json:"shared,omitempty"`
}

// Spec describes the kernel: the Params' name prefix, D and whether the variance is shared.
func (k *Linear) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variances, ".variances")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindLinear, linearKernelSpec{Name: name, InputDim: k.dim, Shared: k.shared})
}

func init() {
	RegisterKind(KindLinear, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c linearKernelSpec
		if err := decodeLeaf(KindLinear, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindLinear, c.InputDim); err != nil {
			return nil, err
		}
		return newLinearShared(c.Name, c.InputDim, !c.Shared, c.Shared)
	})
	RegisterKernel(KernelFamily{Name: "linear", Kind: KindLinear,
		Doc: "Σ_d σ²_d x_d x'_d (per-dimension variances when ARD); not stationary",
		New: func(o KernelOptions) (Kernel, error) { return newLinearShared(o.Name, o.InputDim, o.ARD, false) }})
}

// newLinearShared builds a Linear kernel with per-dimension variances when ard; wantShared checks a Spec's
// "shared" flag against the result.
func newLinearShared(name string, dim int, ard, wantShared bool) (*Linear, error) {
	kc := KernelConfig{Name: name, InputDim: dim}
	if ard {
		kc.Variances = make([]float64, dim)
		for i := range kc.Variances {
			kc.Variances[i] = DefaultVariance
		}
	}
	k, err := NewLinear(kc)
	if err != nil {
		return nil, err
	}
	if wantShared && !k.shared {
		return nil, configErr("%s: shared needs InputDim > 1, got %d", KindLinear, dim)
	}
	return k, nil
}
