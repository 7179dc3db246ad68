package layers

import (
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// MeanForm selects how a Decoupled layer parameterises its mean (Havasi, Hernández-Lobato & Murillo-Fuentes 2018,
// Sec. 2.3 and Table 1; MATH.md §10). The weights live in the Param Decoupled.A [Mα,Dout] in every form; what
// they mean depends on the form. K_α = K(α,α) + εI and L_α = chol(K_α) carry the layer's jitter ε.
type MeanForm int

const (
	// MeanCB is Cheng & Boots' mean μ = K_xα a with KL mean term ½aᵀK_α a (MATH.md §6); A holds a (a₀ with
	// Jacobi). It is the default and the only form that supports Jacobi and MeanBasisBatch. Cost O(D·N·Mα).
	MeanCB MeanForm = iota
	// MeanGP is the sparse-GP mean μ = K_xα K_α⁻¹ m with KL mean term ½mᵀK_α⁻¹m (Havasi et al. μ̃_GP); A holds
	// m, the mean of q(f(α)). Computed as μ = K_xα L_α⁻ᵀ(L_α⁻¹m), ½‖L_α⁻¹m‖²: cost O(D·N·Mα + Mα³).
	MeanGP
	// MeanGPCentred is the centred (whitened) sparse-GP mean μ = K_xα L_α⁻ᵀ m' with KL mean term ½‖m'‖²
	// (Havasi et al. μ̃_GPcent, the form of their experiments); A holds m' = L_α⁻¹m. Cost O(D·N·Mα + Mα³).
	MeanGPCentred
)

// String returns the constant's name ("MeanForm(k)" for an unknown k).
func (f MeanForm) String() string {
	switch f {
	case MeanCB:
		return "MeanCB"
	case MeanGP:
		return "MeanGP"
	case MeanGPCentred:
		return "MeanGPCentred"
	}
	return fmt.Sprintf("MeanForm(%d)", int(f))
}

// CovForm selects how a Decoupled layer parameterises its covariance (Havasi et al. 2018, Sec. 2.3 and Table 2;
// MATH.md §10, whose erratum applies: the paper's Table 2 swaps the labels, and its "Σ_GP" is the S-form). The
// per-output lower-triangular Params Decoupled.LB [Mβ,Mβ] hold the factor of B or of S.
type CovForm int

const (
	// CovB is Cheng & Boots' B-form σ² = k_xx − k_xβ(B_p⁻¹ + K_β)⁻¹k_βx with B_p = L_B,p L_B,pᵀ and KL part
	// ½log|H_p| − ½tr(K_β L_B,p H_p⁻¹ L_B,pᵀ) (MATH.md §6); LB[p] holds L_B,p (L₀,p with Jacobi). The default.
	CovB CovForm = iota
	// CovS is the sparse-GP S-form σ² = k_xx − k_xβ K_β⁻¹(K_β − S_p)K_β⁻¹k_βx with S_p = L_p L_pᵀ and KL part
	// ½[tr(K_β⁻¹S_p) − Mβ − log|S_p| + log|K_β|]: exactly the unwhitened SVGP's covariance and KL on the bases β
	// (MATH.md §3); LB[p] holds L_p. Havasi et al.'s experiments use it with MeanGPCentred.
	CovS
	// CovSWhitened is the S-form in whitened coordinates, as MeanGPCentred is μ̃_GP's: S_p = L_β V_p V_pᵀ L_βᵀ
	// (L_β = chol K_β), so that σ²_p = k_xx − ‖L_β⁻¹k_βx‖² + ‖V_pᵀL_β⁻¹k_βx‖² and the KL part is
	// ½[‖V_p‖²_F − Mβ − log|V_pV_pᵀ|]; LB[p] holds V_p. The same variational family and bound as CovS (V_p =
	// L_β⁻¹L_p), but the prior is V_p = I whatever the hyperparameters, so q need not follow K_β as they move:
	// the reason Havasi et al. (Sec. 2.3) give for centring the mean, applied to the covariance (Hensman et al.
	// 2015's whitening of SVGP). gpzoo's decoupled deep GPs use it with MeanGPCentred (issue 39: it trains
	// faster and deeper models gain from their depth).
	CovSWhitened
)

// sForm reports whether f is one of the S-forms (CovS, CovSWhitened): the covariance of an SVGP on β.
func (f CovForm) sForm() bool { return f == CovS || f == CovSWhitened }

// String returns the constant's name ("CovForm(k)" for an unknown k).
func (f CovForm) String() string {
	switch f {
	case CovB:
		return "CovB"
	case CovS:
		return "CovS"
	case CovSWhitened:
		return "CovSWhitened"
	}
	return fmt.Sprintf("CovForm(%d)", int(f))
}

// checkForms validates the parameterisation options of c: known forms, and Jacobi and MeanBasisBatch only where
// they are defined. Jacobi preconditions a and L_B (Cheng & Boots App. A.1), so it needs MeanCB and CovB; the
// sampled mean term estimates ½aᵀK_α a, so it needs MeanCB (with any covariance form).
func (c *DecoupledConfig) checkForms() error {
	if c.MeanForm < MeanCB || c.MeanForm > MeanGPCentred {
		return fmt.Errorf("%w: Decoupled: unknown %v", ErrConfig, c.MeanForm)
	}
	if c.CovForm < CovB || c.CovForm > CovSWhitened {
		return fmt.Errorf("%w: Decoupled: unknown %v", ErrConfig, c.CovForm)
	}
	if c.Jacobi && (c.MeanForm != MeanCB || c.CovForm != CovB) {
		return fmt.Errorf("%w: Decoupled: Jacobi preconditions a and L_B, so it needs MeanCB and CovB, got %v and %v", ErrConfig, c.MeanForm, c.CovForm)
	}
	if c.SPrior && !c.CovForm.sForm() {
		return fmt.Errorf("%w: Decoupled: SPrior sets S, so it needs CovS or CovSWhitened, got %v", ErrConfig, c.CovForm)
	}
	if c.MeanBasisBatch != 0 && c.MeanForm != MeanCB {
		return fmt.Errorf("%w: Decoupled: MeanBasisBatch estimates ½aᵀK_α a, so it needs MeanCB, got %v", ErrConfig, c.MeanForm)
	}
	return nil
}

// initialFactor returns the initial L_B,p (or L_p, V_p) shared by every output [Mβ,Mβ]: LBScale·I, or with SPrior
// the prior's: the Cholesky factor of K_β + jitter·I at the kernel's initial hyperparameters (CovS) or I
// (CovSWhitened).
func (l *Decoupled) initialFactor(c DecoupledConfig) ([]float64, error) {
	mb := l.mb
	lb := make([]float64, mb*mb)
	if !c.SPrior || c.CovForm == CovSWhitened {
		scale := c.LBScale
		switch {
		case c.SPrior:
			scale = 1
		case scale == 0:
			scale = DefaultLBScale
		}
		for i := 0; i < mb; i++ {
			lb[i*mb+i] = scale
		}
		return lb, nil
	}
	kb, err := gp.KernelMatrix(c.Kernel, c.Zbeta, c.Zbeta)
	if err != nil {
		return nil, fmt.Errorf("layers: Decoupled prior S: %w", err)
	}
	for i := 0; i < mb; i++ {
		kb.Set(i, i, kb.At(i, i)+l.jitter)
	}
	if _, err := ops.CholeskyLower(lb, kb.RawMatrix().Data, mb, ops.JitterPolicy{}); err != nil {
		return nil, fmt.Errorf("layers: Decoupled prior S: %w", err)
	}
	return lb, nil
}

// MeanForm returns the parameterisation of the mean.
func (l *Decoupled) MeanForm() MeanForm { return l.meanForm }

// CovForm returns the parameterisation of the covariance.
func (l *Decoupled) CovForm() CovForm { return l.covForm }

// paramNames returns the names of A and of LB[p] for the layer's forms: "a" and "LB<p>" for the defaults (as
// before the forms existed), "m" (MeanGP), "mcent" (MeanGPCentred) and "LS<p>" (CovS), so that logs and
// non-finite reports say which quantity a Param holds.
func paramNames(mf MeanForm, cf CovForm) (a, lb string) {
	a, lb = "a", "LB"
	switch mf {
	case MeanGP:
		a = "m"
	case MeanGPCentred:
		a = "mcent"
	}
	switch cf {
	case CovS:
		lb = "LS"
	case CovSWhitened:
		lb = "LV"
	}
	return a, lb
}

// Lalpha returns L_α = chol(K(α,α) + jitter·I) [Mα,Mα], built once per graph. Only the MeanGP and MeanGPCentred
// forms use it.
func (l *Decoupled) Lalpha(g *graph.Graph) *graph.Node {
	return g.Memo(decMemoKey{l, "Lalpha", 0}, func() *graph.Node {
		return g.Cholesky(g.AddDiag(l.basis.gram(g, meanBases), l.jitterNode(g)))
	})
}

// centredMean returns m' [Mα,Dout] of the sparse-GP mean forms: L_α⁻¹m (MeanGP) or A itself (MeanGPCentred).
func (l *Decoupled) centredMean(g *graph.Graph) *graph.Node {
	return g.Memo(decMemoKey{l, "mcent", 0}, func() *graph.Node {
		m := g.Param(l.A)
		if l.meanForm == MeanGPCentred {
			return m
		}
		return g.TriSolve(l.Lalpha(g), m, false, false)
	})
}

// gpWeights returns the weights a = L_α⁻ᵀm' [Mα,Dout] of the sparse-GP mean forms, so that μ = K_xα a
// (a = K_α⁻¹m for MeanGP).
func (l *Decoupled) gpWeights(g *graph.Graph) *graph.Node {
	return g.TriSolve(l.Lalpha(g), l.centredMean(g), false, true)
}

// gpMeanTerm returns ½‖m'‖²_F = ½ Σ_p m_pᵀK_α⁻¹m_p, the KL mean term of MeanGP and MeanGPCentred.
func (l *Decoupled) gpMeanTerm(g *graph.Graph) *graph.Node {
	m := l.centredMean(g)
	return g.Scale(g.Dot(m, m), 0.5)
}

// FactorS returns output p's factor [Mβ,Mβ] of the S-forms: L_p of S_p = L_p L_pᵀ (CovS) or V_p of
// S_p = L_β V_p V_pᵀ L_βᵀ (CovSWhitened); with CovB the graph fails with ErrConfig.
func (l *Decoupled) FactorS(g *graph.Graph, p int) *graph.Node {
	if !l.covForm.sForm() {
		return g.Fail(fmt.Errorf("%w: Decoupled %s: FactorS needs CovS or CovSWhitened, the layer has %v", ErrConfig, l.name, l.covForm))
	}
	return g.Param(l.LB[p])
}

// sProjection returns P = L_β⁻¹K_βx [Mβ,N] for the S-forms.
func (l *Decoupled) sProjection(kbx *graph.Node) *graph.Node {
	g := kbx.Graph()
	return g.TriSolve(l.Lbeta(g), kbx, false, false)
}

// sRelFactor returns R_p [Mβ,Mβ] (lower triangular) with σ²_p = k_xx − colsum(P²) + colsum((R_pᵀP)²) for
// P = L_β⁻¹K_βx. CovS: R_p = L_β⁻¹L_p, built once per graph and shared by the variances and the KL
// (tr(K_β⁻¹S_p) = ‖R_p‖²_F): L_pᵀK_β⁻¹K_βx = L_pᵀL_β⁻ᵀP = R_pᵀP, so GPflow's base_conditional (MATH.md §3
// unwhitened, L_pᵀ(L_β⁻ᵀP)) needs no second solve with L_β on all N columns. CovSWhitened: R_p = V_p itself
// (S_p = L_βV_pV_pᵀL_βᵀ; MATH.md §3 whitened).
func (l *Decoupled) sRelFactor(g *graph.Graph, p int) *graph.Node {
	if l.covForm == CovSWhitened {
		return l.FactorS(g, p)
	}
	return g.Memo(decMemoKey{l, "R", p}, func() *graph.Node {
		return g.TriSolve(l.Lbeta(g), l.FactorS(g, p), false, false)
	})
}

// sVars returns the S-form marginal variances [N,Dout]: k_xx − colsum(P²) + colsum((R_pᵀP)²), the last term for
// all outputs in one fused op (TriQuadCols).
func (l *Decoupled) sVars(kbx, kxx *graph.Node) *graph.Node {
	g := kbx.Graph()
	pr := l.sProjection(kbx)
	base := g.Sub(kxx, g.SumRowsSq(pr)) // k_xx − k_xβK_β⁻¹k_βx [N]
	rs := make([]*graph.Node, l.dout)
	for p := range rs {
		rs[p] = l.sRelFactor(g, p)
	}
	return g.AddCol(g.TriQuadCols(pr, rs...), base) // ‖R_pᵀP_n‖² = ‖L_pᵀK_β⁻¹k_βx‖² added to base [N,Dout]
}

// sCovs returns the S-form covariances K_xx − PᵀP + (R_pᵀP)ᵀ(R_pᵀP) [N,N], one per output.
func (l *Decoupled) sCovs(kbx, kxx *graph.Node) []*graph.Node {
	g := kbx.Graph()
	pr := l.sProjection(kbx)
	base := g.Sub(kxx, g.MatMul(pr, pr, true, false))
	covs := make([]*graph.Node, l.dout)
	for p := range covs {
		b := g.MatMul(l.sRelFactor(g, p), pr, true, false)
		covs[p] = g.Add(base, g.MatMul(b, b, true, false))
	}
	return covs
}

// sCovKL returns Σ_p KL[N(0,S_p) ‖ N(0,K_β)] ≥ 0, the covariance part of the S-form KL: Σ_p ½[‖L_β⁻¹L_p‖²_F −
// Mβ − log|S_p| + log|K_β|] (CovS), or Σ_p ½[‖V_p‖²_F − Mβ − log|V_pV_pᵀ|] (CovSWhitened, which needs no K_β).
func (l *Decoupled) sCovKL(g *graph.Graph) *graph.Node {
	if l.covForm == CovSWhitened {
		var sum *graph.Node
		for p := 0; p < l.dout; p++ {
			v := l.FactorS(g, p)
			t := g.Sub(g.Dot(v, v), g.LogDetChol(v))
			if sum == nil {
				sum = t
			} else {
				sum = g.Add(sum, t)
			}
		}
		return g.Scale(g.AddConst(sum, -float64(l.mb*l.dout)), 0.5)
	}
	lb := l.Lbeta(g)
	sum := g.Scale(g.LogDetChol(lb), float64(l.dout)) // Σ_p log|K_β|
	for p := 0; p < l.dout; p++ {
		u := l.sRelFactor(g, p) // L_β⁻¹L_p
		sum = g.Add(sum, g.Sub(g.Dot(u, u), g.LogDetChol(l.FactorS(g, p))))
	}
	return g.Scale(g.AddConst(sum, -float64(l.mb*l.dout)), 0.5)
}
