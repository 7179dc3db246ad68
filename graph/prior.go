package graph

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// Prior is a prior density on each entry of a Param's constrained value (the entries independent and identically
// distributed): log p(c) and its derivative in plain Go. Package gp's priors (log-normal, gamma, half-normal,
// uniform, normal and users' own) implement it and describe themselves in Specs.
//
// The density is of the constrained value c = t(raw), not of the raw one: a maximum a posteriori fit minimises
// loss − Σ log p(c) (Graph.LogPrior), and a sampler of the unconstrained space, whose variable is raw, adds the
// change of variables Σ log t′(raw) (Graph.LogJacobian; Stan Reference Manual, "Variable transforms").
type Prior = ops.ScalarDensity

// ErrPriorTransform is returned by SetPrior for a Param whose transform is not Elementwise (LowerTriangular: its
// constrained value has fixed zeros above the diagonal, which no density of i.i.d. entries describes).
var ErrPriorTransform = errors.New("graph: priors need a Param with an elementwise transform (Identity or Positive)")

// Elementwise is implemented by transforms that map each raw entry on its own by a smooth increasing function
// c = t(raw): Identity and Positive. Priors are defined for their Params, and samplers of the raw values add
// LogJacobian to the log density.
type Elementwise interface {
	Transform
	// LogJacobian returns the scalar node Σᵢ log t′(rawᵢ): the log-determinant of the diagonal Jacobian ∂c/∂raw.
	LogJacobian(g *Graph, raw *Node) *Node
}

// LogJacobian of Identity is 0.
func (Identity) LogJacobian(g *Graph, _ *Node) *Node { return g.Zeros("logjac.identity") }

// LogJacobian of Positive: t(r) = softplus(r) + Floor, t′(r) = σ(r), log σ(r) = −softplus(−r).
func (t Positive) LogJacobian(g *Graph, raw *Node) *Node {
	return g.Neg(g.Sum(g.Softplus(g.Neg(raw))))
}

var (
	_ Elementwise = Identity{}
	_ Elementwise = Positive{}
)

// SetPrior sets the prior density of each entry of p's constrained value (nil removes it). It returns an error
// wrapping ErrPriorTransform when p's transform is not Elementwise. It does not check p's current value against
// the prior's support (a model rebuilt from a file has its constructor's values until the file's are restored):
// see CheckPriorSupport.
func (p *Param) SetPrior(pr Prior) error {
	if pr == nil {
		p.prior = nil
		return nil
	}
	if _, ok := p.t.(Elementwise); !ok {
		return fmt.Errorf("%w: %s has transform %v", ErrPriorTransform, p.name, p.t)
	}
	p.prior = pr
	return nil
}

// Prior returns p's prior (nil: none, a flat density on the constrained value).
func (p *Param) Prior() Prior { return p.prior }

// SupportError is returned by CheckPriorSupport for an entry of a Param's value where its prior's density is
// zero (outside the support): training or sampling could not start there.
type SupportError struct {
	Param string
	Entry int
	Value float64
	Prior string
}

func (e *SupportError) Error() string {
	return fmt.Sprintf("graph: Param %s entry %d is %v, outside the support of its prior %s (log density −Inf)", e.Param, e.Entry, e.Value, e.Prior)
}

// CheckPriorSupport returns a *SupportError for the first entry of the Params' values whose prior log density is
// not finite (outside the support), else nil.
func CheckPriorSupport(ps []*Param) error {
	for _, p := range ps {
		if p == nil || p.prior == nil {
			continue
		}
		for i, c := range p.Value() {
			if lp, _ := p.prior.LogDensity(c); math.IsNaN(lp) || math.IsInf(lp, 0) {
				return &SupportError{Param: p.name, Entry: i, Value: c, Prior: p.prior.Name()}
			}
		}
	}
	return nil
}

// LogPrior returns the scalar Σ_p Σᵢ log p(cᵢ) over the Params of ps that carry a prior, at their constrained
// values (ops.LogDensitySum of each), and nil when none does.
func (g *Graph) LogPrior(ps []*Param) *Node {
	var sum *Node
	for _, p := range ps {
		if p == nil || p.prior == nil {
			continue
		}
		term := g.apply("LogPrior "+p.name, func(xs ...*G.Node) (*G.Node, error) { return ops.LogDensitySum(p.prior, xs[0]) }, g.Param(p))
		if sum == nil {
			sum = term
		} else {
			sum = g.Add(sum, term)
		}
	}
	return sum
}

// LogJacobian returns the scalar Σ_p log|det ∂c/∂raw| over ps (the change of variables that turns a density of
// the constrained values into one of the raw values, which samplers of the unconstrained space add), and nil for
// no Params. It records an error wrapping ErrPriorTransform for a Param whose transform is not Elementwise.
func (g *Graph) LogJacobian(ps []*Param) *Node {
	var sum *Node
	for _, p := range ps {
		g.Param(p) // bind p's raw leaf
		if g.err != nil {
			return &Node{g: g}
		}
		t, ok := p.t.(Elementwise)
		if !ok {
			return g.fail(fmt.Errorf("%w: %s has transform %v", ErrPriorTransform, p.name, p.t))
		}
		b := g.byP[p]
		term := t.LogJacobian(g, &Node{n: b.leaf, g: g})
		if sum == nil {
			sum = term
		} else {
			sum = g.Add(sum, term)
		}
	}
	return sum
}
