package gp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpzoo/gpzoo/graph"
)

// The kinds of the combinators (each kernel's kind is in its file, kernel_*.go).
const (
	KindSum     = "kernel/sum"
	KindProduct = "kernel/product"
)

func init() {
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
