package gp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// The kinds of the built-in kernels (see Spec).
const (
	KindSquaredExp        = "kernel/se"
	KindMatern12          = "kernel/matern12"
	KindMatern32          = "kernel/matern32"
	KindMatern52          = "kernel/matern52"
	KindRationalQuadratic = "kernel/rq"
	KindPeriodic          = "kernel/periodic"
	KindLinear            = "kernel/linear"
	KindWhite             = "kernel/white"
	KindConstant          = "kernel/constant"
	KindSum               = "kernel/sum"
	KindProduct           = "kernel/product"
)

// stationaryKinds maps each stationary family to its kind and constructor.
var stationaryKinds = []struct {
	family ops.CovFamily
	kind   string
	build  func(KernelConfig) (*Stationary, error)
}{
	{ops.SquaredExp, KindSquaredExp, NewSquaredExp},
	{ops.Matern12, KindMatern12, NewMatern12},
	{ops.Matern32, KindMatern32, NewMatern32},
	{ops.Matern52, KindMatern52, NewMatern52},
	{ops.RationalQuadratic, KindRationalQuadratic, NewRationalQuadratic},
	{ops.Periodic, KindPeriodic, NewPeriodic},
}

// stationarySpec is the Config of the stationary kernels: the name prefix of the Params, D, and whether the
// kernel is isotropic (one length-scale shared by the D dimensions) rather than ARD.
type stationarySpec struct {
	Name      string `json:"name"`
	InputDim  int    `json:"input_dim"`
	Isotropic bool   `json:"isotropic,omitempty"`
}

// simpleKernelSpec is the Config of White and Constant.
type simpleKernelSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
}

// linearKernelSpec is the Config of Linear: Shared means one variance for all D dimensions.
type linearKernelSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
	Shared   bool   `json:"shared,omitempty"`
}

func init() {
	for _, s := range stationaryKinds {
		RegisterKind(s.kind, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
			var c stationarySpec
			if err := decodeLeaf(s.kind, raw, children, &c); err != nil {
				return nil, err
			}
			if err := CheckSpecDims(s.kind, c.InputDim); err != nil {
				return nil, err
			}
			kc := KernelConfig{Name: c.Name, InputDim: c.InputDim}
			if c.Isotropic {
				kc.Lengthscales = []float64{DefaultLengthscale}
			}
			k, err := s.build(kc)
			if err != nil {
				return nil, err
			}
			if k.iso != c.Isotropic {
				return nil, configErr("%s: isotropic needs InputDim > 1, got %d", s.kind, c.InputDim)
			}
			return k, nil
		})
	}
	RegisterKind(KindLinear, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c linearKernelSpec
		if err := decodeLeaf(KindLinear, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindLinear, c.InputDim); err != nil {
			return nil, err
		}
		kc := KernelConfig{Name: c.Name, InputDim: c.InputDim}
		if !c.Shared {
			kc.Variances = make([]float64, c.InputDim)
			for i := range kc.Variances {
				kc.Variances[i] = DefaultVariance
			}
		}
		k, err := NewLinear(kc)
		if err != nil {
			return nil, err
		}
		if k.shared != c.Shared {
			return nil, configErr("%s: shared needs InputDim > 1, got %d", KindLinear, c.InputDim)
		}
		return k, nil
	})
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
	RegisterKind(KindSum, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		ks, err := kernelChildren(KindSum, raw, children)
		if err != nil {
			return nil, err
		}
		return NewSum(ks...)
	})
	RegisterKind(KindProduct, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		ks, err := kernelChildren(KindProduct, raw, children)
		if err != nil {
			return nil, err
		}
		return NewProduct(ks...)
	})
}

// Spec describes the kernel: its family's kind, the Params' name prefix, D and isotropic vs ARD.
func (k *Stationary) Spec() (Spec, error) {
	for _, s := range stationaryKinds {
		if s.family == k.family {
			name, err := paramPrefix(k.Variance, ".variance")
			if err != nil {
				return Spec{}, err
			}
			return NewSpec(s.kind, stationarySpec{Name: name, InputDim: k.dim, Isotropic: k.iso})
		}
	}
	return Spec{}, fmt.Errorf("gp: no spec kind for the %v kernel family", k.family)
}

// Spec describes the kernel: the Params' name prefix, D and whether the variance is shared.
func (k *Linear) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variances, ".variances")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindLinear, linearKernelSpec{Name: name, InputDim: k.dim, Shared: k.shared})
}

// Spec describes the kernel: the Param's name prefix and D.
func (k *White) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variance, ".variance")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindWhite, simpleKernelSpec{Name: name, InputDim: k.dim})
}

// Spec describes the kernel: the Param's name prefix and D.
func (k *Constant) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variance, ".variance")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindConstant, simpleKernelSpec{Name: name, InputDim: k.dim})
}

// Spec describes the sum by its parts (children, in order). Parts sharing a Param cannot be described (a
// rebuilt sum would not share it): that is an error.
func (s *Sum) Spec() (Spec, error) { return combinationSpec(KindSum, s.parts) }

// Spec describes the product by its parts (children, in order). Parts sharing a Param cannot be described (a
// rebuilt product would not share it): that is an error.
func (p *Product) Spec() (Spec, error) { return combinationSpec(KindProduct, p.parts) }

func combinationSpec(kind string, parts []Kernel) (Spec, error) {
	seen := map[*graph.Param]bool{}
	children := make([]any, len(parts))
	for i, k := range parts {
		for _, q := range k.Params() {
			if seen[q] {
				return Spec{}, fmt.Errorf("gp: spec of %s: Param %q is shared between parts", kind, q.Name())
			}
			seen[q] = true
		}
		children[i] = k
	}
	return NewSpec(kind, nil, children...)
}

// kernelChildren checks that a Sum or Product Spec has no Config and returns its children as Kernels.
func kernelChildren(kind string, raw json.RawMessage, children []any) ([]Kernel, error) {
	if err := DecodeConfig(kind, raw, &struct{}{}); err != nil {
		return nil, err
	}
	if len(children) < 2 {
		return nil, configErr("%s needs at least two kernels, got %d", kind, len(children))
	}
	ks := make([]Kernel, len(children))
	for i := range children {
		k, err := ChildAs[Kernel](kind, children, i)
		if err != nil {
			return nil, err
		}
		ks[i] = k
	}
	return ks, nil
}

// decodeLeaf decodes the Config of a component without children.
func decodeLeaf(kind string, raw json.RawMessage, children []any, dst any) error {
	if len(children) != 0 {
		return configErr("%s takes no children, got %d", kind, len(children))
	}
	if len(raw) == 0 {
		return configErr("%s: missing config", kind)
	}
	return DecodeConfig(kind, raw, dst)
}

// paramPrefix returns p's name without suffix: the Name its constructor was given.
func paramPrefix(p *graph.Param, suffix string) (string, error) {
	if p == nil {
		return "", configErr("spec: nil Param")
	}
	name, ok := strings.CutSuffix(p.Name(), suffix)
	if !ok || name == "" {
		return "", configErr("spec: Param %q does not end in %q", p.Name(), suffix)
	}
	return name, nil
}
