package layers

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// OrthConfig configures an orthogonally decoupled layer (NewOrth). The embedded SVGPConfig configures the β
// block exactly as for NewSVGP (Z are the β bases; kernel, q(u_β), mean function, whitening, jitter); its Name
// defaults to "orth".
type OrthConfig struct {
	SVGPConfig
	// Zgamma are the initial γ mean bases [Mγ,Din]. nil (or an empty matrix) means |γ| = 0: the layer is then
	// exactly the wrapped coupled SVGP.
	Zgamma *mat.Dense
	// FixZgamma freezes the γ bases.
	FixZgamma bool
}

// Orth is the orthogonally decoupled layer, ORTH (Salimbeni, Cheng, Boots & Deisenroth 2018, eq. 12;
// MATH.md §8). It wraps a coupled SVGP layer on the β bases, whose q(u_β) = N(m_β, S) (m_β = K_β a_β) gives the
// covariance and the β part of the mean, and adds γ mean bases with weights a_γ [Mγ,Dout] projected orthogonally
// to the span of the β bases:
//
//	μ(x)  = (k_xγ − k_xβ K_β⁻¹ K_βγ) a_γ + μ_SVGP(x),   s(x,x') = s_SVGP(x,x'),
//	KL    = ½ a_γᵀ(K_γ − K_γβ K_β⁻¹ K_βγ) a_γ + KL_SVGP,
//
// summed over outputs. K_β is the SVGP's Kuu (with its fixed jitter, if any) and every K_β⁻¹ goes through the SVGP's Cholesky
// factor L_β (SVGP.Lu): k_xβ K_β⁻¹ K_βγ a_γ = (L_β⁻¹K_βx)ᵀ(L_β⁻¹K_βγ a_γ) and the γ part of the KL is
// ½(a_γᵀK_γ a_γ − ‖L_β⁻¹K_βγ a_γ‖²). Cost per graph O(N·Mγ·D + N·Mβ² + Mβ³ + Mβ·Mγ·D); nothing is cached
// across graphs.
//
// ORTHNAT (eqs. 16–17): the natural-gradient step on (j_β, Θ) is exactly the coupled natural step on
// q(u_β) = N(K_β a_β, S), which is the wrapped SVGP's GaussianQ (BetaQ). So ORTHNAT is train.NatGrad on BetaQ()
// plus Adam on a_γ and every other Param (the paper replaces the γ update (17) by Adam). With a_γ held fixed the
// γ part only shifts the mean and adds a KL term that does not depend on q(u_β), so the ELBO depends on q(u_β)
// as a coupled SVGP's does and the hook's step is the coupled one (with a Gaussian likelihood, γ = 1 and the
// full batch it lands on the optimal q(u_β) given a_γ). In the whitened parameterisation BetaQ is q(v),
// u_β = L_β v; natural steps are invariant under that linear change of variable.
type Orth struct {
	// Beta is the wrapped coupled SVGP layer on the β bases.
	Beta *SVGP
	// Zgamma [Mγ,Din] and Agamma [Mγ,Dout] (initially zero) are the γ bases and weights; both nil when |γ| = 0.
	Zgamma, Agamma *graph.Param
}

var _ gp.Layer = (*Orth)(nil)

// NewOrth returns an orthogonally decoupled layer. It fails like NewSVGP on the β block, with a *ops.ShapeError
// when Zgamma's width is not Din, and with an error wrapping ErrConfig when Zgamma has a non-finite entry.
func NewOrth(c OrthConfig) (*Orth, error) {
	beta, zg, ag, err := newBetaGamma("orth", c.SVGPConfig, c.Zgamma, c.FixZgamma)
	if err != nil {
		return nil, err
	}
	return &Orth{Beta: beta, Zgamma: zg, Agamma: ag}, nil
}

// BetaQ returns q(u_β), the wrapped SVGP's GaussianQ: give it to train.NatGrad for ORTHNAT (see Orth).
func (o *Orth) BetaQ() *gp.GaussianQ { return o.Beta.Q }

// NumGamma returns Mγ (0 when there are no γ bases).
func (o *Orth) NumGamma() int { return gammaRows(o.Zgamma) }

// InputDim returns Din.
func (o *Orth) InputDim() int { return o.Beta.InputDim() }

// OutputDim returns Dout.
func (o *Orth) OutputDim() int { return o.Beta.OutputDim() }

// Params returns the SVGP's Params, then Zgamma and Agamma (when |γ| > 0), without duplicates.
func (o *Orth) Params() []*graph.Param {
	return gp.UniqueParams(o.Beta.Params(), gammaParams(o.Zgamma, o.Agamma))
}

// Predict returns the marginal means and variances [N,Dout] of q(f(x)).
func (o *Orth) Predict(x *graph.Node) (mean, variance *graph.Node) {
	if o.Zgamma == nil {
		return o.Beta.Predict(x)
	}
	a, mean, vars := o.Beta.moments(x, false)
	return x.Graph().Add(mean, o.gammaMean(x, a)), vars[0]
}

// PredictFull returns the means [N,Dout] and one covariance [N,N] per output (the SVGP's).
func (o *Orth) PredictFull(x *graph.Node) (*graph.Node, []*graph.Node) {
	if o.Zgamma == nil {
		return o.Beta.PredictFull(x)
	}
	a, mean, covs := o.Beta.moments(x, true)
	return x.Graph().Add(mean, o.gammaMean(x, a)), covs
}

// gammaMean returns K_xγ a_γ − aᵀ(L_β⁻¹K_βγ a_γ) [N,Dout], with a = L_β⁻¹K_βx [Mβ,N].
func (o *Orth) gammaMean(x, a *graph.Node) *graph.Node {
	g := x.Graph()
	kgx := o.Beta.Kernel.K(g.Param(o.Zgamma), x) // [Mγ,N]
	return g.Sub(g.MatMul(kgx, g.Param(o.Agamma), true, false), g.MatMul(a, gammaCross(g, o.Beta, o.Zgamma, o.Agamma), true, false))
}

// KL returns KL_SVGP + ½ Σ_p a_γpᵀ(K_γ − K_γβ K_β⁻¹ K_βγ) a_γp.
func (o *Orth) KL(g *graph.Graph) *graph.Node {
	kl := o.Beta.KL(g)
	if o.Zgamma == nil {
		return kl
	}
	ca := gammaCross(g, o.Beta, o.Zgamma, o.Agamma)
	return g.Add(kl, g.Scale(g.Sub(gammaQuad(g, o.Beta, o.Zgamma, o.Agamma), g.Dot(ca, ca)), 0.5))
}

// newBetaGamma validates the configuration shared by Orth and Hybrid and builds the β SVGP and the γ Params.
func newBetaGamma(kind string, c SVGPConfig, zgamma *mat.Dense, fix bool) (*SVGP, *graph.Param, *graph.Param, error) {
	if c.Name == "" {
		c.Name = kind
	}
	if c.Z != nil && !gammaFinite(c.Z) {
		return nil, nil, nil, fmt.Errorf("%w: %s: non-finite β inducing inputs Z", ErrConfig, kind)
	}
	beta, err := NewSVGP(c)
	if err != nil {
		return nil, nil, nil, err
	}
	if zgamma == nil || zgamma.IsEmpty() {
		return beta, nil, nil, nil
	}
	mg, din := zgamma.Dims()
	if din != beta.InputDim() {
		return nil, nil, nil, &ops.ShapeError{Op: "layers.New" + kind, Want: fmt.Sprintf("Zgamma with %d columns (Din)", beta.InputDim()), Got: fmt.Sprint(din)}
	}
	if !gammaFinite(zgamma) {
		return nil, nil, nil, fmt.Errorf("%w: %s: non-finite γ bases Zgamma", ErrConfig, kind)
	}
	zg, err := graph.NewParam(c.Name+".Zgamma", mat.DenseCopyOf(zgamma).RawMatrix().Data, graph.Identity{}, mg, din)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s γ bases: %w", ErrConfig, kind, err)
	}
	zg.SetTrainable(!fix)
	ag, err := graph.NewParam(c.Name+".Agamma", make([]float64, mg*beta.OutputDim()), graph.Identity{}, mg, beta.OutputDim())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s γ weights: %w", ErrConfig, kind, err)
	}
	return beta, zg, ag, nil
}

func gammaFinite(m *mat.Dense) bool {
	r, c := m.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := m.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

func gammaRows(p *graph.Param) int {
	if p == nil {
		return 0
	}
	return p.Shape()[0]
}

func gammaParams(zg, ag *graph.Param) []*graph.Param {
	if zg == nil {
		return nil
	}
	return []*graph.Param{zg, ag}
}

type gammaKey struct {
	zg   *graph.Param
	what string
}

// gammaCross returns L_β⁻¹K_βγ a_γ [Mβ,Dout], built once per graph.
func gammaCross(g *graph.Graph, beta *SVGP, zg, ag *graph.Param) *graph.Node {
	return g.Memo(gammaKey{zg, "cross"}, func() *graph.Node {
		kbg := beta.Kernel.K(g.Param(beta.Z), g.Param(zg)) // [Mβ,Mγ]
		return g.TriSolve(beta.Lu(g), g.MatMul(kbg, g.Param(ag), false, false), false, false)
	})
}

// gammaQuad returns Σ_p a_γpᵀ K_γ a_γp (no jitter: K_γ is never factorised).
func gammaQuad(g *graph.Graph, beta *SVGP, zg, ag *graph.Param) *graph.Node {
	z, a := g.Param(zg), g.Param(ag)
	return g.Dot(a, g.MatMul(beta.Kernel.K(z, z), a, false, false))
}
