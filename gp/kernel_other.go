package gp

import (
	"github.com/gpzoo/gpzoo/graph"
)

// Sum is the sum of kernels on the same inputs.
type Sum struct{ parts []Kernel }

// Product is the elementwise product of kernels on the same inputs.
type Product struct{ parts []Kernel }

// NewSum returns the sum of at least two kernels of the same input dimension.
func NewSum(ks ...Kernel) (*Sum, error) {
	if err := checkParts("Sum", ks); err != nil {
		return nil, err
	}
	return &Sum{parts: ks}, nil
}

// NewProduct returns the product of at least two kernels of the same input dimension.
func NewProduct(ks ...Kernel) (*Product, error) {
	if err := checkParts("Product", ks); err != nil {
		return nil, err
	}
	return &Product{parts: ks}, nil
}

func checkParts(op string, ks []Kernel) error {
	if len(ks) < 2 {
		return configErr("%s needs at least two kernels, got %d", op, len(ks))
	}
	for i, k := range ks {
		if k == nil {
			return configErr("%s: kernel %d is nil", op, i)
		}
		if k.InputDim() != ks[0].InputDim() {
			return configErr("%s: kernel %d has InputDim %d, kernel 0 has %d", op, i, k.InputDim(), ks[0].InputDim())
		}
	}
	return nil
}

func reduce(ks []Kernel, f func(k Kernel) *graph.Node, op func(a, b *graph.Node) *graph.Node) *graph.Node {
	acc := f(ks[0])
	for _, k := range ks[1:] {
		acc = op(acc, f(k))
	}
	return acc
}

// K returns Σ K_i(x1, x2).
func (s *Sum) K(x1, x2 *graph.Node) *graph.Node {
	return reduce(s.parts, func(k Kernel) *graph.Node { return k.K(x1, x2) }, x1.Graph().Add)
}

// KDiag returns Σ KDiag_i(x).
func (s *Sum) KDiag(x *graph.Node) *graph.Node {
	return reduce(s.parts, func(k Kernel) *graph.Node { return k.KDiag(x) }, x.Graph().Add)
}

// K returns Π K_i(x1, x2) elementwise.
func (p *Product) K(x1, x2 *graph.Node) *graph.Node {
	return reduce(p.parts, func(k Kernel) *graph.Node { return k.K(x1, x2) }, x1.Graph().Mul)
}

// KDiag returns Π KDiag_i(x).
func (p *Product) KDiag(x *graph.Node) *graph.Node {
	return reduce(p.parts, func(k Kernel) *graph.Node { return k.KDiag(x) }, x.Graph().Mul)
}

// InputDim returns D.
func (s *Sum) InputDim() int { return s.parts[0].InputDim() }

// InputDim returns D.
func (p *Product) InputDim() int { return p.parts[0].InputDim() }

// Params returns the parts' hyperparameters.
func (s *Sum) Params() []*graph.Param { return collect(s.parts) }

// Params returns the parts' hyperparameters.
func (p *Product) Params() []*graph.Param { return collect(p.parts) }

func (s *Sum) String() string     { return join(s.parts, " + ") }
func (p *Product) String() string { return join(p.parts, " × ") }

func collect(ks []Kernel) []*graph.Param {
	var ps []*graph.Param
	seen := map[*graph.Param]bool{}
	for _, k := range ks {
		for _, q := range k.Params() {
			if !seen[q] {
				seen[q] = true
				ps = append(ps, q)
			}
		}
	}
	return ps
}

func join(ks []Kernel, sep string) string {
	s := "("
	for i, k := range ks {
		if i > 0 {
			s += sep
		}
		s += k.String()
	}
	return s + ")"
}

// rows returns the number of rows of a node ([N,...] -> N; a scalar -> 1).
func rows(x *graph.Node) int {
	s := x.Shape()
	if len(s) == 0 {
		return 1
	}
	return s[0]
}
