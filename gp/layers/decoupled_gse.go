package layers

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
)

// DecoupledGSEConfig configures a DECOUPLED layer whose bases use the generalized SE-ARD kernel of Cheng & Boots
// (2017, App. C.1, eq. 19; ops.GSECross, ops.GSEBasis): basis m has its own length-scales l_{m,d} = s_d·c_{m,d},
// where s are the prior SE-ARD length-scales and c_{m,d} > 0 a trainable per-basis factor (Params CAlpha, CBeta).
type DecoupledGSEConfig struct {
	// DecoupledConfig is the base layer's configuration. Its Kernel must be a *gp.Stationary squared-exponential
	// kernel (gp.NewSquaredExp, ARD or isotropic): it is the prior, and its variance σ² and length-scales s enter
	// the basis covariances. MeanBasisBatch > 0 uses ops.GSEPair for the rows K(α_I, α).
	DecoupledConfig
	// CAlpha and CBeta are the initial factors c, row-major [Mα,Din] and [Mβ,Din], all > 0; nil means 1 (the
	// paper's initialisation, c_{x̃,d} = 1, App. C.2), where the layer equals Decoupled with the SE kernel.
	CAlpha, CBeta []float64
	// FixCAlpha and FixCBeta freeze the factors.
	FixCAlpha, FixCBeta bool
}

// DecoupledGSE is Decoupled with generalized SE-ARD bases: with σ² and s the prior SE kernel's variance and
// length-scales,
//
//	K_xα = GSECross(x, α, c_α, s, σ²),  K_α = GSEBasis(α, c_α, s, σ²)  (likewise for β),  k_xx = SE prior,
//
// and every other formula (μ, σ², KL of eqs. 8–9, jitter, Jacobi) is Decoupled's. Scaling both basis
// covariances by σ² (the paper scales the cross covariance by ρ and K_α by 1, App. C.1) is the equivalent
// reparametrisation ψ → ρψ; it makes the layer equal Decoupled with the SE kernel exactly when every c = 1. The
// diagonal of K_α and K_β is σ² for every c, so Jacobi's diag(K + εI) is unchanged.
type DecoupledGSE struct {
	*Decoupled
	CAlpha *graph.Param // [Mα,Din], Positive: per-basis length-scale factors c
	CBeta  *graph.Param // [Mβ,Din], Positive

	se *gp.Stationary
}

var _ gp.Layer = (*DecoupledGSE)(nil)

// NewDecoupledGSE returns a decoupled-basis layer with generalized SE-ARD bases.
func NewDecoupledGSE(c DecoupledGSEConfig) (*DecoupledGSE, error) {
	se, ok := c.Kernel.(*gp.Stationary)
	if !ok || se.Kind() != gp.KindSquaredExp {
		return nil, fmt.Errorf("%w: DecoupledGSE: the kernel must be a squared-exponential *gp.Stationary, got %T", ErrConfig, c.Kernel)
	}
	d, err := NewDecoupled(c.DecoupledConfig)
	if err != nil {
		return nil, err
	}
	l := &DecoupledGSE{Decoupled: d, se: se}
	mk := func(what string, init []float64, m int, fix bool) (*graph.Param, error) {
		if init == nil {
			init = make([]float64, m*d.din)
			for i := range init {
				init[i] = 1
			}
		}
		if len(init) != m*d.din {
			return nil, fmt.Errorf("%w: DecoupledGSE: %d initial %s factors, want %d·%d", ErrConfig, len(init), what, m, d.din)
		}
		for _, v := range init {
			if !(v > graph.DefaultPositiveFloor) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: DecoupledGSE: %s factor %g not in (%g, ∞)", ErrConfig, what, v, graph.DefaultPositiveFloor)
			}
		}
		p, err := graph.NewParam(fmt.Sprintf("%s.C%s", d.name, what), init, graph.Positive{}, m, d.din)
		if err != nil {
			return nil, fmt.Errorf("layers: DecoupledGSE %s factors: %w", what, err)
		}
		p.SetTrainable(!fix)
		return p, nil
	}
	if l.CAlpha, err = mk("alpha", c.CAlpha, d.ma, c.FixCAlpha); err != nil {
		return nil, err
	}
	if l.CBeta, err = mk("beta", c.CBeta, d.mb, c.FixCBeta); err != nil {
		return nil, err
	}
	d.basis = gseBases{l}
	return l, nil
}

// Base returns the underlying Decoupled layer (its covariances already use the generalized kernel).
func (l *DecoupledGSE) Base() *Decoupled { return l.Decoupled }

// Params returns the Decoupled layer's Params and the basis length-scale factors.
func (l *DecoupledGSE) Params() []*graph.Param {
	return gp.UniqueParams(l.Decoupled.Params(), []*graph.Param{l.CAlpha, l.CBeta})
}

// hyper returns the prior's σ² and length-scales s [Din] in g.
func (l *DecoupledGSE) hyper(g *graph.Graph) (variance, ls *graph.Node) {
	ls = g.Param(l.se.Lengthscales)
	if len(l.se.Lengthscales.Shape()) == 0 && l.din > 0 { // isotropic: broadcast the shared length-scale
		ls = g.Mul(g.Fill(l.se.Lengthscales.Name()+".ones", 1, l.din), ls)
	}
	return g.Param(l.se.Variance), ls
}

// gseBases is the basisCovariance of DecoupledGSE: eq. 19 between bases and data (c = 1 for data points) and
// between bases.
type gseBases struct{ l *DecoupledGSE }

func (b gseBases) set(g *graph.Graph, set basisSet) (z, c *graph.Node) {
	if set == meanBases {
		return g.Param(b.l.Zalpha), g.Param(b.l.CAlpha)
	}
	return g.Param(b.l.Zbeta), g.Param(b.l.CBeta)
}

func (b gseBases) cross(set basisSet, x *graph.Node) *graph.Node {
	g := x.Graph()
	z, c := b.set(g, set)
	v, s := b.l.hyper(g)
	return g.Transpose(g.GSECross(x, z, c, s, v))
}

func (b gseBases) gram(g *graph.Graph, set basisSet) *graph.Node {
	z, c := b.set(g, set)
	v, s := b.l.hyper(g)
	return g.GSEBasis(z, c, s, v)
}

func (b gseBases) rows(g *graph.Graph, set basisSet, idx *graph.Node) *graph.Node {
	z, c := b.set(g, set)
	v, s := b.l.hyper(g)
	return g.GSEPair(g.TakeRows(z, idx), g.TakeRows(c, idx), z, c, s, v)
}
