package layers

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// DefaultLBScale is the initial factor of B = L_B L_Bᵀ (or of S = L Lᵀ with CovS) when DecoupledConfig.LBScale
// is zero: L_B = 0.1·I, a small reduction of the prior variance (B = 0 is the prior, which the LowerTriangular
// transform cannot reach); with CovS, S = 0.01·I.
const DefaultLBScale = 0.1

// DecoupledConfig configures a decoupled-basis layer. Zero values mean defaults.
type DecoupledConfig struct {
	// Name prefixes the layer's parameter names (default "decoupled").
	Name string
	// Kernel is the prior covariance shared by all outputs (required). The bases use the same kernel (the paper's
	// generalized SE-ARD basis kernel, App. C eq. 19, is not implemented).
	Kernel gp.Kernel
	// Zalpha are the initial mean bases α [Mα,Din] (required).
	Zalpha *mat.Dense
	// Zbeta are the initial covariance bases β [Mβ,Din] (required).
	Zbeta *mat.Dense
	// OutputDim is Dout (default 1).
	OutputDim int
	// Mean is the prior mean function; nil means zero.
	Mean gp.MeanFunction
	// Jitter is added to the diagonals of K_α and K_β wherever they enter (default DefaultJitter).
	Jitter float64
	// FixZalpha and FixZbeta freeze the bases.
	FixZalpha, FixZbeta bool
	// LBScale is the initial factor L_B,p = LBScale·I of every output (default DefaultLBScale). With Jacobi it
	// initialises L₀ instead; with CovS it initialises the factor of S, L_p = LBScale·I. For CovS layers inside a
	// deep GP use LBScale = 1e-5 (S ≈ 0, so inner layers start nearly deterministic; Salimbeni & Deisenroth 2017,
	// MATH.md §9).
	LBScale float64
	// SPrior (CovS only) starts every S_p at the prior covariance K_β + jitter·I instead of LBScale²·I: the
	// unwhitened counterpart of a whitened q = N(0, I), for the last layer of a deep GP or a single layer
	// (S = I would put a large ½tr(K_β⁻¹) into the KL of an ill-conditioned K_β).
	SPrior bool
	// Weights are the initial contents of Param A, row-major [Mα,Dout]: a (a₀ with Jacobi) for MeanCB, m for
	// MeanGP, m' for MeanGPCentred. nil means zeros.
	Weights []float64
	// MeanForm selects the mean parameterisation (default MeanCB, Cheng & Boots'; see MeanForm).
	MeanForm MeanForm
	// CovForm selects the covariance parameterisation (default CovB, Cheng & Boots'; see CovForm). Havasi et al.
	// (2018) train decoupled deep GPs with MeanGPCentred and CovS. Online basis growth (train.BasisGrowth)
	// deactivates bases by zeroing rows of A and L_B, which leaves q unchanged only with MeanCB and CovB.
	CovForm CovForm
	// Jacobi parameterises a = diag(K_α + εI)⁻¹ a₀ and L_B = diag(K_β + εI)⁻¹ L₀ (App. A.1), with a₀ and L₀ the
	// Params A and LB. It needs MeanCB and CovB (NewDecoupled returns an error wrapping ErrConfig otherwise).
	Jacobi bool
	// MeanBasisBatch b > 0 replaces the O(Mα²) term ½aᵀK_α a of KL by its unbiased estimate from b mean bases
	// drawn without replacement at every run: ½(Mα/b) Σ_{i∈I} a_iᵀ(K_{iα} a). 0 means the exact term. It needs
	// MeanCB (NewDecoupled returns an error wrapping ErrConfig otherwise).
	MeanBasisBatch int
	// Rand is the generator of the mean-basis subsets (required when MeanBasisBatch > 0; must not be used
	// concurrently while a graph runs).
	Rand *rand.Rand
}

// Decoupled is the decoupled-basis variational GP layer DECOUPLED of Cheng & Boots (2017, eqs. 7–9; MATH.md §6),
// with Dout independent outputs sharing the kernel and both basis sets:
//
//	μ_p(x)  = k_xα a_p (+ mean function),
//	σ²_p(x) = k_xx − k_xβ L_B,p H_p⁻¹ L_B,pᵀ k_βx,  H_p = I + L_B,pᵀ K_β L_B,p  (footnote 9),
//	KL      = Σ_p ½ a_pᵀK_α a_p + ½ log|H_p| − ½ tr(K_β L_B,p H_p⁻¹ L_B,pᵀ)  (eq. 9).
//
// K_α and K_β carry the jitter (K + εI) everywhere they appear, so that with α = β = Z, a = K_β⁻¹m and
// B = S⁻¹ − K_β⁻¹ the layer equals the unwhitened SVGP layer with the same jitter exactly. No inverse is formed:
// with W_p = L_βᵀL_B,p (L_β = chol(K_β)), H_p = I + W_pᵀW_p, C_p = chol(H_p), V_p = C_p⁻¹L_B,pᵀK_βx,
// σ²_p = k_xx − colsum(V_p²), log|H_p| = 2Σ log C_p,ii and tr(·) = ‖C_p⁻¹W_pᵀ‖²_F.
//
// These are the default forms MeanCB and CovB. DecoupledConfig.MeanForm and CovForm select the alternatives of
// Havasi et al. (2018, Sec. 2.3, Tables 1–2; MATH.md §10): the sparse-GP means μ = K_xα K_α⁻¹m (MeanGP) and
// μ = K_xα L_α⁻ᵀm' (MeanGPCentred), and the S-form covariance of the unwhitened SVGP on β (CovS), in all six
// combinations. KL is always the mean term plus the covariance part, summed over outputs.
type Decoupled struct {
	Kernel gp.Kernel
	Zalpha *graph.Param // [Mα,Din]
	Zbeta  *graph.Param // [Mβ,Din]
	// A [Mα,Dout] holds the mean weights: a (a₀ with Jacobi) for MeanCB, m for MeanGP, m' = L_α⁻¹m for
	// MeanGPCentred.
	A *graph.Param
	// LB holds, per output, a lower-triangular [Mβ,Mβ] factor: L_B,p (L₀,p with Jacobi) for CovB, L_p of
	// S_p = L_p L_pᵀ for CovS.
	LB   []*graph.Param
	Mean gp.MeanFunction

	meanForm MeanForm
	covForm  CovForm
	jitter   float64
	jacobi   bool
	batch    int
	rng      *rand.Rand
	ma, mb   int
	din      int
	dout     int
	name     string
	basis    basisCovariance
}

var _ gp.Layer = (*Decoupled)(nil)

// NewDecoupled returns a decoupled-basis layer.
func NewDecoupled(c DecoupledConfig) (*Decoupled, error) {
	if c.Kernel == nil {
		return nil, fmt.Errorf("%w: Decoupled: nil Kernel", ErrConfig)
	}
	if c.Zalpha == nil || c.Zbeta == nil {
		return nil, fmt.Errorf("%w: Decoupled: nil bases Zalpha or Zbeta", ErrConfig)
	}
	ma, din := c.Zalpha.Dims()
	mb, dinb := c.Zbeta.Dims()
	if din != c.Kernel.InputDim() || dinb != din {
		return nil, &ops.ShapeError{Op: "layers.NewDecoupled", Want: fmt.Sprintf("Zalpha and Zbeta with %d columns (the kernel's InputDim)", c.Kernel.InputDim()), Got: fmt.Sprintf("%d and %d", din, dinb)}
	}
	if !decFinite(mat.DenseCopyOf(c.Zalpha).RawMatrix().Data) || !decFinite(mat.DenseCopyOf(c.Zbeta).RawMatrix().Data) || !decFinite(c.Weights) {
		return nil, fmt.Errorf("%w: Decoupled: non-finite bases or weights", ErrConfig)
	}
	dout := c.OutputDim
	if dout == 0 {
		dout = 1
	}
	if dout < 0 {
		return nil, fmt.Errorf("%w: Decoupled: OutputDim %d", ErrConfig, c.OutputDim)
	}
	if c.Mean != nil && c.Mean.OutputDim() != dout {
		return nil, fmt.Errorf("%w: Decoupled: mean function has %d outputs, layer %d", ErrConfig, c.Mean.OutputDim(), dout)
	}
	if c.Jitter < 0 || math.IsNaN(c.Jitter) || math.IsInf(c.Jitter, 0) {
		return nil, fmt.Errorf("%w: Decoupled: jitter %g", ErrConfig, c.Jitter)
	}
	if c.LBScale < 0 || math.IsNaN(c.LBScale) || math.IsInf(c.LBScale, 0) {
		return nil, fmt.Errorf("%w: Decoupled: LBScale %g", ErrConfig, c.LBScale)
	}
	if c.MeanBasisBatch < 0 || c.MeanBasisBatch > ma {
		return nil, fmt.Errorf("%w: Decoupled: MeanBasisBatch %d not in [0, Mα = %d]", ErrConfig, c.MeanBasisBatch, ma)
	}
	if c.MeanBasisBatch > 0 && c.Rand == nil {
		return nil, fmt.Errorf("%w: Decoupled: MeanBasisBatch %d needs a Rand", ErrConfig, c.MeanBasisBatch)
	}
	if err := c.checkForms(); err != nil {
		return nil, err
	}
	if c.Weights != nil && len(c.Weights) != ma*dout {
		return nil, fmt.Errorf("%w: Decoupled: %d initial weights, want Mα·Dout = %d", ErrConfig, len(c.Weights), ma*dout)
	}
	name := c.Name
	if name == "" {
		name = "decoupled"
	}
	l := &Decoupled{Kernel: c.Kernel, Mean: c.Mean, meanForm: c.MeanForm, covForm: c.CovForm, jitter: c.Jitter, jacobi: c.Jacobi,
		batch: c.MeanBasisBatch, rng: c.Rand, ma: ma, mb: mb, din: din, dout: dout, name: name}
	l.basis = kernelBases{l}
	if l.jitter == 0 {
		l.jitter = DefaultJitter
	}
	var err error
	if l.Zalpha, err = graph.NewParam(name+".Zalpha", mat.DenseCopyOf(c.Zalpha).RawMatrix().Data, graph.Identity{}, ma, din); err != nil {
		return nil, fmt.Errorf("layers: Decoupled mean bases: %w", err)
	}
	l.Zalpha.SetTrainable(!c.FixZalpha)
	if l.Zbeta, err = graph.NewParam(name+".Zbeta", mat.DenseCopyOf(c.Zbeta).RawMatrix().Data, graph.Identity{}, mb, din); err != nil {
		return nil, fmt.Errorf("layers: Decoupled covariance bases: %w", err)
	}
	l.Zbeta.SetTrainable(!c.FixZbeta)
	w := c.Weights
	if w == nil {
		w = make([]float64, ma*dout)
	}
	aName, lbName := paramNames(c.MeanForm, c.CovForm)
	if l.A, err = graph.NewParam(name+"."+aName, w, graph.Identity{}, ma, dout); err != nil {
		return nil, fmt.Errorf("layers: Decoupled weights: %w", err)
	}
	lb, err := l.initialFactor(c)
	if err != nil {
		return nil, err
	}
	for p := 0; p < dout; p++ {
		pp, err := graph.NewParam(fmt.Sprintf("%s.%s%d", name, lbName, p), lb, graph.LowerTriangular{}, mb, mb)
		if err != nil {
			return nil, fmt.Errorf("layers: Decoupled covariance factor: %w", err)
		}
		l.LB = append(l.LB, pp)
	}
	return l, nil
}

// Jitter returns the constant added to the diagonals of K_α and K_β.
func (l *Decoupled) Jitter() float64 { return l.jitter }

// NumMeanBases returns Mα; NumCovBases Mβ.
func (l *Decoupled) NumMeanBases() int { return l.ma }

// NumCovBases returns Mβ.
func (l *Decoupled) NumCovBases() int { return l.mb }

// MeanBasisBatch returns b (0: the exact mean term).
func (l *Decoupled) MeanBasisBatch() int { return l.batch }

// InputDim returns Din.
func (l *Decoupled) InputDim() int { return l.din }

// MeanFunction returns the prior mean function (nil: zero; gp.MeanFunctionLayer).
func (l *Decoupled) MeanFunction() gp.MeanFunction { return l.Mean }

// OutputDim returns Dout.
func (l *Decoupled) OutputDim() int { return l.dout }

// Params returns the kernel's hyperparameters, the bases, A, the factors LB and the mean function's.
func (l *Decoupled) Params() []*graph.Param {
	var mp []*graph.Param
	if l.Mean != nil {
		mp = l.Mean.Params()
	}
	return gp.UniqueParams(l.Kernel.Params(), []*graph.Param{l.Zalpha, l.Zbeta, l.A}, l.LB, mp)
}

// basisSet names one of a Decoupled layer's two basis sets.
type basisSet int

const (
	meanBases basisSet = iota // α
	covBases                  // β
)

// basisCovariance computes the covariances that involve a Decoupled layer's bases: the prior kernel by default
// (kernelBases); DecoupledGSE substitutes the generalized SE-ARD kernel (Cheng & Boots 2017, App. C eq. 19).
// Both give K(z, z)'s diagonal as the prior variance, so diagonals (Jacobi) still come from the kernel.
type basisCovariance interface {
	cross(set basisSet, x *graph.Node) *graph.Node                  // K(bases, x) [M,N]
	gram(g *graph.Graph, set basisSet) *graph.Node                  // K(bases, bases) [M,M], without jitter
	rows(g *graph.Graph, set basisSet, idx *graph.Node) *graph.Node // K(bases[idx], bases) [b,M]
}

// kernelBases is the default basisCovariance: the prior kernel on the bases.
type kernelBases struct{ l *Decoupled }

func (k kernelBases) z(g *graph.Graph, set basisSet) *graph.Node {
	if set == meanBases {
		return g.Param(k.l.Zalpha)
	}
	return g.Param(k.l.Zbeta)
}

func (k kernelBases) cross(set basisSet, x *graph.Node) *graph.Node {
	return k.l.Kernel.K(k.z(x.Graph(), set), x)
}

func (k kernelBases) gram(g *graph.Graph, set basisSet) *graph.Node {
	z := k.z(g, set)
	return k.l.Kernel.K(z, z)
}

func (k kernelBases) rows(g *graph.Graph, set basisSet, idx *graph.Node) *graph.Node {
	z := k.z(g, set)
	return k.l.Kernel.K(g.TakeRows(z, idx), z)
}

type decMemoKey struct {
	l    *Decoupled
	what string
	p    int
}

func (l *Decoupled) jitterNode(g *graph.Graph) *graph.Node {
	return g.Memo(decMemoKey{l, "jitter", 0}, func() *graph.Node { return g.Scalar(l.name+".jitter", l.jitter) })
}

// Kbeta returns K_β = K(β,β) + jitter·I [Mβ,Mβ], built once per graph.
func (l *Decoupled) Kbeta(g *graph.Graph) *graph.Node {
	return g.Memo(decMemoKey{l, "Kbeta", 0}, func() *graph.Node {
		return g.AddDiag(l.basis.gram(g, covBases), l.jitterNode(g))
	})
}

// Lbeta returns chol(K_β) [Mβ,Mβ], built once per graph.
func (l *Decoupled) Lbeta(g *graph.Graph) *graph.Node {
	return g.Memo(decMemoKey{l, "Lbeta", 0}, func() *graph.Node { return g.Cholesky(l.Kbeta(g)) })
}

// Weights returns the weights a [Mα,Dout] of the mean μ = K_xα a in g, whatever the MeanForm: A itself
// (diag(K_α + εI)⁻¹a₀ with Jacobi) for MeanCB, K_α⁻¹m = L_α⁻ᵀ(L_α⁻¹m) for MeanGP, L_α⁻ᵀm' for MeanGPCentred.
func (l *Decoupled) Weights(g *graph.Graph) *graph.Node {
	return g.Memo(decMemoKey{l, "a", 0}, func() *graph.Node {
		if l.meanForm != MeanCB {
			return l.gpWeights(g)
		}
		a := g.Param(l.A)
		if !l.jacobi {
			return a
		}
		d := g.AddConst(l.Kernel.KDiag(g.Param(l.Zalpha)), l.jitter)
		return g.MulCol(a, g.Recip(d))
	})
}

// FactorB returns output p's L_B,p [Mβ,Mβ] in g (diag(K_β + εI)⁻¹L₀,p with Jacobi), B_p = L_B,p L_B,pᵀ (CovB);
// with CovS the graph fails with ErrConfig (see FactorS).
func (l *Decoupled) FactorB(g *graph.Graph, p int) *graph.Node {
	if l.covForm != CovB {
		return g.Fail(fmt.Errorf("%w: Decoupled %s: FactorB needs CovB, the layer has %v", ErrConfig, l.name, l.covForm))
	}
	return g.Memo(decMemoKey{l, "LB", p}, func() *graph.Node {
		lb := g.Param(l.LB[p])
		if !l.jacobi {
			return lb
		}
		d := g.AddConst(l.Kernel.KDiag(g.Param(l.Zbeta)), l.jitter)
		return g.MulCol(lb, g.Recip(d))
	})
}

// w returns W_p = L_βᵀ L_B,p [Mβ,Mβ].
func (l *Decoupled) w(g *graph.Graph, p int) *graph.Node {
	return g.Memo(decMemoKey{l, "W", p}, func() *graph.Node {
		return g.MatMul(l.Lbeta(g), l.FactorB(g, p), true, false)
	})
}

// cholH returns C_p = chol(H_p), H_p = I + L_B,pᵀK_βL_B,p = I + W_pᵀW_p, built once per graph.
func (l *Decoupled) cholH(g *graph.Graph, p int) *graph.Node {
	return g.Memo(decMemoKey{l, "C", p}, func() *graph.Node {
		w := l.w(g, p)
		return g.Cholesky(g.AddDiag(g.MatMul(w, w, true, false), g.Scalar(fmt.Sprintf("%s.one", l.name), 1)))
	})
}

func (l *Decoupled) checkInput(x *graph.Node) {
	if s := x.Shape(); len(s) != 2 || s[1] != l.din {
		x.Graph().Fail(&ops.ShapeError{Op: "Decoupled layer " + l.name, Want: fmt.Sprintf("inputs [N,%d]", l.din), Got: fmt.Sprint(s)})
	}
}

func (l *Decoupled) mean(x *graph.Node) *graph.Node {
	g := x.Graph()
	mu := g.MatMul(l.basis.cross(meanBases, x), l.Weights(g), true, false) // K_αxᵀ a [N,Dout]
	if l.Mean != nil {
		mu = g.Add(mu, l.Mean.Mean(x))
	}
	return mu
}

// v returns V_p = C_p⁻¹ L_B,pᵀ K_βx [Mβ,N].
func (l *Decoupled) v(kbx *graph.Node, p int) *graph.Node {
	g := kbx.Graph()
	return g.TriSolve(l.cholH(g, p), g.MatMul(l.FactorB(g, p), kbx, true, false), false, false)
}

// Predict returns the marginal means and variances [N,Dout] of q(f(x)).
func (l *Decoupled) Predict(x *graph.Node) (mean, variance *graph.Node) {
	g := x.Graph()
	l.checkInput(x)
	kbx := l.basis.cross(covBases, x)
	kxx := l.Kernel.KDiag(x)
	if l.covForm.sForm() {
		return l.mean(x), l.sVars(kbx, kxx)
	}
	vars := make([]*graph.Node, l.dout)
	for p := range vars {
		vars[p] = g.Sub(kxx, g.SumRowsSq(l.v(kbx, p)))
	}
	if l.dout == 1 {
		return l.mean(x), g.Reshape(vars[0], rowsOf(x), 1)
	}
	return l.mean(x), g.StackCols(vars...)
}

// PredictFull returns the means [N,Dout] and, per output, the covariance [N,N]: K_xx − V_pᵀV_p (CovB) or
// K_xx − K_xβK_β⁻¹(K_β − S_p)K_β⁻¹K_βx (CovS).
func (l *Decoupled) PredictFull(x *graph.Node) (*graph.Node, []*graph.Node) {
	g := x.Graph()
	l.checkInput(x)
	kbx := l.basis.cross(covBases, x)
	kxx := l.Kernel.K(x, x)
	if l.covForm.sForm() {
		return l.mean(x), l.sCovs(kbx, kxx)
	}
	covs := make([]*graph.Node, l.dout)
	for p := range covs {
		v := l.v(kbx, p)
		covs[p] = g.Sub(kxx, g.MatMul(v, v, true, false))
	}
	return l.mean(x), covs
}

// KL returns Σ_p KL_p: MeanTerm plus CovKL (eq. 9 for MeanCB and CovB). With MeanBasisBatch b > 0 the mean term
// is the unbiased estimate ½(Mα/b) Σ_{i∈I} a_iᵀ(K_α a)_i over b mean bases I drawn afresh at every run (so the KL
// node is random; its expectation is ExactKL); otherwise it is exact.
func (l *Decoupled) KL(g *graph.Graph) *graph.Node {
	if l.batch == 0 {
		return l.ExactKL(g)
	}
	return g.Add(l.MeanTermEstimate(g), l.CovKL(g))
}

// ExactKL returns Σ_p KL_p with the exact mean term: MeanTerm plus CovKL.
func (l *Decoupled) ExactKL(g *graph.Graph) *graph.Node { return g.Add(l.MeanTerm(g), l.CovKL(g)) }

// MeanTerm returns the KL mean term exactly: ½ Σ_p a_pᵀ(K_α + εI)a_p (MeanCB), ½ Σ_p m_pᵀK_α⁻¹m_p = ½‖L_α⁻¹m‖²_F
// (MeanGP) or ½‖m'‖²_F (MeanGPCentred).
func (l *Decoupled) MeanTerm(g *graph.Graph) *graph.Node {
	if l.meanForm != MeanCB {
		return l.gpMeanTerm(g)
	}
	a := l.Weights(g)
	return g.Scale(g.Dot(a, g.MatMul(g.AddDiag(l.basis.gram(g, meanBases), l.jitterNode(g)), a, false, false)), 0.5)
}

// MeanTermEstimate returns ½(Mα/b) Σ_{i∈I} a_iᵀ((K_α + εI)a)_i for a subset I of b = MeanBasisBatch mean bases
// drawn uniformly without replacement from Rand at every run (one draw shared by α_I and a_I): unbiased for
// MeanTerm, at cost O(b·Mα·(Din + Dout)). With b = Mα it equals MeanTerm up to round-off. Needs b > 0.
func (l *Decoupled) MeanTermEstimate(g *graph.Graph) *graph.Node {
	if l.batch <= 0 || l.rng == nil {
		return g.Fail(fmt.Errorf("%w: Decoupled %s: MeanTermEstimate needs MeanBasisBatch > 0 and a Rand", ErrConfig, l.name))
	}
	z := g.Param(l.Zalpha)
	a := l.Weights(g)
	idx := g.SampleIndices(z, l.rng, l.ma, l.batch)
	ai := g.TakeRows(a, idx)
	// (K_α + εI)_{Iα} a = K(α_I, α) a + ε a_I.
	t := g.Add(g.MatMul(l.basis.rows(g, meanBases, idx), a, false, false), g.Mul(ai, l.jitterNode(g)))
	return g.Scale(g.Dot(ai, t), 0.5*float64(l.ma)/float64(l.batch))
}

// CovKL returns the covariance part of KL (≥ 0): Σ_p ½ log|H_p| − ½ tr(K_β L_B,p H_p⁻¹ L_B,pᵀ) =
// Σ_p Σ_i log C_p,ii − ½‖C_p⁻¹W_pᵀ‖²_F (CovB), or Σ_p ½[tr(K_β⁻¹S_p) − Mβ − log|S_p| + log|K_β|] (CovS).
func (l *Decoupled) CovKL(g *graph.Graph) *graph.Node {
	if l.covForm.sForm() {
		return l.sCovKL(g)
	}
	var sum *graph.Node
	for p := 0; p < l.dout; p++ {
		c := l.cholH(g, p)
		u := g.TriSolve(c, g.Transpose(l.w(g, p)), false, false)
		term := g.Scale(g.Sub(g.LogDetChol(c), g.Dot(u, u)), 0.5)
		if sum == nil {
			sum = term
		} else {
			sum = g.Add(sum, term)
		}
	}
	return sum
}

func decFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
