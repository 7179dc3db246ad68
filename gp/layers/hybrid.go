package layers

import (
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// HybridConfig configures a hybrid decoupled layer (NewHybrid). The embedded SVGPConfig configures the β block
// exactly as for NewSVGP; its Name defaults to "hybrid".
type HybridConfig struct {
	SVGPConfig
	// Zgamma are the initial γ mean bases [Mγ,Din]. nil (or an empty matrix) means |γ| = 0: the layer is then
	// exactly the wrapped coupled SVGP.
	Zgamma *mat.Dense
	// FixZgamma freezes the γ bases.
	FixZgamma bool
}

// Hybrid is the hybrid decoupled layer, HYBRID (Cheng & Boots 2017, App. A.3; Salimbeni et al. 2018, eq. 11;
// MATH.md §7): a coupled SVGP on the β bases with q(u_β) = N(m_β, S) plus γ mean bases with weights a_γ
// [Mγ,Dout], not orthogonalised:
//
//	μ(x) = k_xβ K_β⁻¹ m_β + k_xγ a_γ (= μ_SVGP(x) + k_xγ a_γ),   s(x,x') = s_SVGP(x,x'),
//	KL   = KL_SVGP(m_β, S) + m_βᵀK_β⁻¹K_βγ a_γ + ½ a_γᵀK_γ a_γ,
//
// summed over outputs. With c = L_β⁻¹K_βγ a_γ (L_β the SVGP's Cholesky factor of its Kuu) the cross term
// is vᵀc when whitened (m_β = L_β v, the GaussianQ mean is v) and (L_β⁻¹m_β)ᵀc when unwhitened. The mean part of
// the KL is ½‖μ‖²_H of the RKHS mean, so the KL stays ≥ 0. Unlike Orth, the γ weights and the β mean are
// correlated (the cross term), so a natural step on q(u_β) alone is only conditional on a_γ.
type Hybrid struct {
	// Beta is the wrapped coupled SVGP layer on the β bases.
	Beta *SVGP
	// Zgamma [Mγ,Din] and Agamma [Mγ,Dout] (initially zero) are the γ bases and weights; both nil when |γ| = 0.
	Zgamma, Agamma *graph.Param
}

var _ gp.Layer = (*Hybrid)(nil)

// NewHybrid returns a hybrid decoupled layer. It fails like NewOrth.
func NewHybrid(c HybridConfig) (*Hybrid, error) {
	beta, zg, ag, err := newBetaGamma("hybrid", c.SVGPConfig, c.Zgamma, c.FixZgamma)
	if err != nil {
		return nil, err
	}
	return &Hybrid{Beta: beta, Zgamma: zg, Agamma: ag}, nil
}

// NumGamma returns Mγ (0 when there are no γ bases).
func (h *Hybrid) NumGamma() int { return gammaRows(h.Zgamma) }

// InputDim returns Din.
func (h *Hybrid) InputDim() int { return h.Beta.InputDim() }

// OutputDim returns Dout.
func (h *Hybrid) OutputDim() int { return h.Beta.OutputDim() }

// Params returns the SVGP's Params, then Zgamma and Agamma (when |γ| > 0), without duplicates.
func (h *Hybrid) Params() []*graph.Param {
	return gp.UniqueParams(h.Beta.Params(), gammaParams(h.Zgamma, h.Agamma))
}

// Predict returns the marginal means and variances [N,Dout] of q(f(x)).
func (h *Hybrid) Predict(x *graph.Node) (mean, variance *graph.Node) {
	if h.Zgamma == nil {
		return h.Beta.Predict(x)
	}
	mean, variance = h.Beta.Predict(x)
	return x.Graph().Add(mean, h.gammaMean(x)), variance
}

// PredictFull returns the means [N,Dout] and one covariance [N,N] per output (the SVGP's).
func (h *Hybrid) PredictFull(x *graph.Node) (*graph.Node, []*graph.Node) {
	if h.Zgamma == nil {
		return h.Beta.PredictFull(x)
	}
	mean, covs := h.Beta.PredictFull(x)
	return x.Graph().Add(mean, h.gammaMean(x)), covs
}

// gammaMean returns K_xγ a_γ [N,Dout].
func (h *Hybrid) gammaMean(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.MatMul(h.Beta.Kernel.K(g.Param(h.Zgamma), x), g.Param(h.Agamma), true, false)
}

// KL returns KL_SVGP + Σ_p [m_βpᵀK_β⁻¹K_βγ a_γp + ½ a_γpᵀK_γ a_γp].
func (h *Hybrid) KL(g *graph.Graph) *graph.Node {
	kl := h.Beta.KL(g)
	if h.Zgamma == nil {
		return kl
	}
	m := h.Beta.Q.MeanNode(g) // whitened: v with m_β = L_β v
	if !h.Beta.Whitened() {
		m = g.TriSolve(h.Beta.Lu(g), m, false, false) // L_β⁻¹m_β
	}
	cross := g.Dot(m, gammaCross(g, h.Beta, h.Zgamma, h.Agamma))
	return g.Add(kl, g.Add(cross, g.Scale(gammaQuad(g, h.Beta, h.Zgamma, h.Agamma), 0.5)))
}
