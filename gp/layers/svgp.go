package layers

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// DefaultJitter is the fixed jitter (absolute, as in GPflow) the SVGP layer added to Kuu's diagonal by default
// before issue 31 (gp.JitterFixed), which model files written then store; SVGPConfig.Jitter = DefaultJitter asks
// for it. The SVGP layer's default is now no fixed jitter (gp.JitterOnFailure). It is still the Decoupled
// layer's default, whose K_α + εI and K_β + εI enter its quadratic forms and preconditioner, not only a Cholesky.
const DefaultJitter = 1e-6

// ErrConfig is the sentinel of invalid layer configurations.
var ErrConfig = errors.New("layers: invalid configuration")

// SVGPConfig configures a coupled SVGP layer. Zero values mean defaults.
type SVGPConfig struct {
	// Name prefixes the layer's parameter names (default "svgp").
	Name string
	// Kernel is the prior covariance shared by all outputs (required).
	Kernel gp.Kernel
	// Z are the initial inducing inputs [M,Din] (required; see gp.KMeans and gp.RandomSubset).
	Z *mat.Dense
	// OutputDim is Dout (default 1).
	OutputDim int
	// Mean is the prior mean function; nil means zero.
	Mean gp.MeanFunction
	// Unwhitened selects q(u) = N(m, S) directly instead of the whitened default.
	Unwhitened bool
	// QDiag makes each S_p diagonal (mean-field).
	QDiag bool
	// QSqrtScale is the initial factor of S: L_p = QSqrtScale·I (default 1; deep-GP inner layers use 1e-5).
	QSqrtScale float64
	// Jitter > 0 is a fixed jitter added to Kuu's diagonal before every factorisation (gp.JitterFixed; layers
	// built before issue 31 used DefaultJitter). 0, the default, adds none (gp.JitterOnFailure): Kuu is
	// factorised as is and the graph's Cholesky adds jitter only if that fails, counted in its CholeskyStats.
	Jitter float64
	// FixZ freezes the inducing inputs.
	FixZ bool
}

// SVGP is the coupled sparse variational GP layer (Hensman et al. 2013, 2015; MATH.md §3):
// whitened, with A = L_u⁻¹K_uf, μ = Aᵀm + mean(x) and σ²_p = k_xx − ‖A‖²_col + ‖L_pᵀA‖²_col;
// unwhitened, with A = K_uu⁻¹K_uf, μ = Aᵀm and σ²_p = k_xx − ‖L_u⁻¹K_uf‖²_col + ‖L_pᵀA‖²_col.
type SVGP struct {
	Kernel gp.Kernel
	Z      *graph.Param // [M,Din]
	Q      *gp.GaussianQ
	Mean   gp.MeanFunction // nil: zero
	whiten bool
	jitter float64
	din    int
	dout   int
	name   string
}

var _ gp.Layer = (*SVGP)(nil)

// NewSVGP returns a coupled SVGP layer.
func NewSVGP(c SVGPConfig) (*SVGP, error) {
	if c.Kernel == nil {
		return nil, fmt.Errorf("%w: SVGP: nil Kernel", ErrConfig)
	}
	if c.Z == nil {
		return nil, fmt.Errorf("%w: SVGP: nil inducing inputs Z", ErrConfig)
	}
	m, din := c.Z.Dims()
	if din != c.Kernel.InputDim() {
		return nil, &ops.ShapeError{Op: "layers.NewSVGP", Want: fmt.Sprintf("Z with %d columns (the kernel's InputDim)", c.Kernel.InputDim()), Got: fmt.Sprint(din)}
	}
	dout := c.OutputDim
	if dout == 0 {
		dout = 1
	}
	if dout < 0 {
		return nil, fmt.Errorf("%w: SVGP: OutputDim %d", ErrConfig, c.OutputDim)
	}
	if c.Mean != nil && c.Mean.OutputDim() != dout {
		return nil, fmt.Errorf("%w: SVGP: mean function has %d outputs, layer %d", ErrConfig, c.Mean.OutputDim(), dout)
	}
	if c.Jitter < 0 || math.IsNaN(c.Jitter) || math.IsInf(c.Jitter, 0) {
		return nil, fmt.Errorf("%w: SVGP: jitter %g (want 0, jitter on failure only, or a finite fixed jitter > 0)", ErrConfig, c.Jitter)
	}
	name := c.Name
	if name == "" {
		name = "svgp"
	}
	l := &SVGP{Kernel: c.Kernel, Mean: c.Mean, whiten: !c.Unwhitened, jitter: c.Jitter, din: din, dout: dout, name: name}
	z := mat.DenseCopyOf(c.Z)
	var err error
	if l.Z, err = graph.NewParam(name+".Z", z.RawMatrix().Data, graph.Identity{}, m, din); err != nil {
		return nil, fmt.Errorf("layers: SVGP inducing inputs: %w", err)
	}
	l.Z.SetTrainable(!c.FixZ)
	if l.Q, err = gp.NewGaussianQ(m, dout, gp.QConfig{Name: name + ".q", Diag: c.QDiag, SqrtScale: c.QSqrtScale}); err != nil {
		return nil, err
	}
	return l, nil
}

// Whitened reports whether the layer is whitened.
func (l *SVGP) Whitened() bool { return l.whiten }

// Jitter returns the fixed jitter added to Kuu's diagonal: > 0 under gp.JitterFixed, 0 under gp.JitterOnFailure
// (Kuu factorised as is; jitter only if that fails).
func (l *SVGP) Jitter() float64 { return l.jitter }

// NumInducing returns M.
func (l *SVGP) NumInducing() int { return l.Q.M() }

// InputDim returns Din.
func (l *SVGP) InputDim() int { return l.din }

// MeanFunction returns the prior mean function (nil: zero; gp.MeanFunctionLayer).
func (l *SVGP) MeanFunction() gp.MeanFunction { return l.Mean }

// OutputDim returns Dout.
func (l *SVGP) OutputDim() int { return l.dout }

// Params returns the kernel's hyperparameters, Z, q's parameters and the mean function's.
func (l *SVGP) Params() []*graph.Param {
	var mp []*graph.Param
	if l.Mean != nil {
		mp = l.Mean.Params()
	}
	return gp.UniqueParams(l.Kernel.Params(), []*graph.Param{l.Z}, l.Q.Params(), mp)
}

type memoKey struct {
	l    *SVGP
	what string
}

// Lu returns the lower Cholesky factor of Kuu = K(Z,Z) [M,M] (+ jitter·I under a fixed jitter; see gp.CholKuu),
// built once per graph.
func (l *SVGP) Lu(g *graph.Graph) *graph.Node {
	return g.Memo(memoKey{l, "Lu"}, func() *graph.Node {
		z := g.Param(l.Z)
		return gp.CholKuu(g, l.Kernel.K(z, z), l.jitter, l.name+".jitter")
	})
}

// projections returns a = L_u⁻¹K_uf [M,N] and the matrix that multiplies q: a itself (whitened) or
// K_uu⁻¹K_uf = L_u⁻ᵀa (unwhitened).
func (l *SVGP) projections(x *graph.Node) (a, proj *graph.Node) {
	g := x.Graph()
	if s := x.Shape(); len(s) != 2 || s[1] != l.din {
		g.Fail(&ops.ShapeError{Op: "SVGP layer " + l.name, Want: fmt.Sprintf("inputs [N,%d]", l.din), Got: fmt.Sprint(s)})
	}
	lu := l.Lu(g)
	a = g.TriSolve(lu, l.Kernel.K(g.Param(l.Z), x), false, false)
	if l.whiten {
		return a, a
	}
	return a, g.TriSolve(lu, a, false, true)
}

func (l *SVGP) mean(x, proj *graph.Node) *graph.Node {
	g := x.Graph()
	mu := g.MatMul(proj, l.Q.MeanNode(g), true, false) // [N,P]
	if l.Mean != nil {
		mu = g.Add(mu, l.Mean.Mean(x))
	}
	return mu
}

// Predict returns the marginal means and variances [N,Dout] of q(f(x)).
func (l *SVGP) Predict(x *graph.Node) (mean, variance *graph.Node) {
	_, mean, v := l.moments(x, false)
	return mean, v[0]
}

// PredictFull returns the means [N,Dout] and, per output, the covariance K_xx − aᵀa + (L_pᵀproj)ᵀ(L_pᵀproj).
func (l *SVGP) PredictFull(x *graph.Node) (*graph.Node, []*graph.Node) {
	_, mean, covs := l.moments(x, true)
	return mean, covs
}

// moments returns a = L_u⁻¹K_ux [M,N], the means [N,Dout] and either the marginal variances (one [N,Dout] node)
// or one full covariance [N,N] per output. Layers that wrap an SVGP (Orth, Hybrid) reuse a for their extra bases.
func (l *SVGP) moments(x *graph.Node, full bool) (a, mean *graph.Node, out []*graph.Node) {
	g := x.Graph()
	a, proj := l.projections(x)
	mean = l.mean(x, proj)
	if full {
		base := g.Sub(l.Kernel.K(x, x), g.MatMul(a, a, true, false))
		out = make([]*graph.Node, l.dout)
		for p := range out {
			b := g.MatMul(l.Q.SqrtNode(g, p), proj, true, false) // L_pᵀ·proj [M,N]
			out[p] = g.Add(base, g.MatMul(b, b, true, false))
		}
		return a, mean, out
	}
	base := g.Sub(l.Kernel.KDiag(x), g.SumRowsSq(a)) // k_xx − ‖L_u⁻¹k_ux‖² [N]
	ls := make([]*graph.Node, l.dout)
	for p := range ls {
		ls[p] = l.Q.SqrtNode(g, p)
	}
	// σ²_p = base + ‖L_pᵀproj‖²_col, all outputs at once [N,Dout] (one fused op: triangular products, no gemm).
	return a, mean, []*graph.Node{g.AddCol(g.TriQuadCols(proj, ls...), base)}
}

// KL returns Σ_p KL[q(u_p) ‖ p(u_p)] (MATH.md §3):
// whitened ½[‖L_p‖²_F + ‖m_p‖² − M] − Σ log L_p,ii; unwhitened
// ½[‖L_u⁻¹L_p‖²_F + ‖L_u⁻¹m_p‖² − M + log|K_uu| − log|S_p|].
func (l *SVGP) KL(g *graph.Graph) *graph.Node {
	m := l.Q.MeanNode(g)
	if l.whiten { // one fused op over every output
		ls := make([]*graph.Node, l.dout)
		for p := range ls {
			ls[p] = l.Q.SqrtNode(g, p)
		}
		return g.WhitenedKL(m, ls...)
	}
	lu := l.Lu(g)
	lm := g.TriSolve(lu, m, false, false)
	quad := g.Dot(lm, lm)
	logdets := g.Scale(g.LogDetChol(lu), float64(l.dout))
	for p := 0; p < l.dout; p++ {
		lp := l.Q.SqrtNode(g, p)
		tr := g.TriSolve(lu, lp, false, false)
		quad = g.Add(quad, g.Dot(tr, tr))
		logdets = g.Add(logdets, g.Neg(g.LogDetChol(lp)))
	}
	return g.Scale(g.AddConst(g.Add(quad, logdets), -float64(l.Q.M()*l.dout)), 0.5)
}

func rowsOf(x *graph.Node) int {
	s := x.Shape()
	if len(s) == 0 {
		return 1
	}
	return s[0]
}
