package gp

import (
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

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
	return g.CovMatrix(ops.Linear, x1, x2, k.variances(g))
}

// KDiag returns Σ_d σ²_d x_d² [N].
func (k *Linear) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.CovDiag(ops.Linear, x, k.variances(g))
}

// InputDim returns D.
func (k *Linear) InputDim() int { return k.dim }

// Params returns the variances.
func (k *Linear) Params() []*graph.Param { return []*graph.Param{k.Variances} }

func (k *Linear) String() string { return fmt.Sprintf("Linear(variances=%.4g)", k.Variances.Value()) }

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
