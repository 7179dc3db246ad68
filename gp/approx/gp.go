package approx

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Inference names an approximation of the posterior.
type Inference string

// The approximations.
const (
	// Laplace is the Laplace approximation (R&W §3.4): a Gaussian at the posterior's mode.
	Laplace Inference = "laplace"
	// EP is expectation propagation (R&W §3.6): Gaussian sites matching the tilted marginals' moments.
	EP Inference = "ep"
)

// Inferences lists the approximations by name.
var Inferences = []Inference{Laplace, EP}

// ParseInference returns the Inference named s ("laplace" or "ep"), or an error wrapping gp.ErrConfig.
func ParseInference(s string) (Inference, error) {
	for _, i := range Inferences {
		if string(i) == s {
			return i, nil
		}
	}
	return "", fmt.Errorf("%w: approx: inference %q (want laplace or ep)", gp.ErrConfig, s)
}

// Scalar is what a likelihood needs for the exact GP's approximations: its log density of one observation given
// one latent value as a scalar model (an ops.LaplaceLogLik for the Laplace approximation; any ops.ScalarLogLik for
// EP, whose tilted moments are closed form for an ops.TiltedLogLik and by Gauss–Hermite quadrature otherwise) and
// the Params whose constrained values are the model's θ, in its order. The built-in Bernoulli (probit), Bernoulli
// (logit), Poisson and Student-t likelihoods implement it.
type Scalar interface {
	gp.Likelihood
	ScalarModel() (ops.ScalarLogLik, []*graph.Param)
}

// Config configures New. Zero options mean ops' defaults.
type Config struct {
	// Kernel is the prior covariance (required).
	Kernel gp.Kernel
	// Mean is the prior mean (nil: zero; one output).
	Mean gp.MeanFunction
	// Likelihood is the observation model (required; a Scalar).
	Likelihood gp.Likelihood
	// Inference is Laplace or EP (required).
	Inference Inference
	// Laplace and EP configure the approximations' iterations (Stats is the model's own: ignored here).
	Laplace ops.LaplaceOptions
	EP      ops.EPOptions
	// X [N,D] and Y [N,1] are the training data the approximation and its predictions condition on (optional
	// here: SetTrainingData sets them later; both or neither).
	X, Y *mat.Dense
}

// GP is an exact Gaussian process with a non-Gaussian likelihood, approximated by the Laplace approximation or
// EP (see the package doc).
type GP struct {
	Kernel     gp.Kernel
	Mean       gp.MeanFunction // nil: zero
	Likelihood gp.Likelihood
	Inference  Inference

	model   ops.ScalarLogLik
	theta   []*graph.Param
	laplace ops.LaplaceOptions
	ep      ops.EPOptions
	stats   *ops.ApproxStats
	cond    conditioned[ops.GaussApprox]
}

var (
	_ gp.Model      = (*GP)(nil)
	_ gp.Predictor  = (*GP)(nil)
	_ gp.DataHolder = (*GP)(nil)
	_ gp.Describer  = (*GP)(nil)
)

// New returns an approximated GP. Errors wrap gp.ErrConfig: a nil kernel or likelihood, a likelihood without a
// scalar model (Scalar) or, for the Laplace approximation, without its derivatives (ops.LaplaceLogLik), an
// unknown inference, a mean function of more than one output, invalid options, or bad training data.
func New(c Config) (*GP, error) {
	if c.Kernel == nil || c.Likelihood == nil {
		return nil, fmt.Errorf("%w: approx: nil kernel or likelihood", gp.ErrConfig)
	}
	if _, err := ParseInference(string(c.Inference)); err != nil {
		return nil, err
	}
	sc, ok := c.Likelihood.(Scalar)
	if !ok {
		return nil, fmt.Errorf("%w: approx: likelihood %v has no scalar model for the exact GP's approximations (approx.Scalar): use svgp", gp.ErrConfig, c.Likelihood)
	}
	model, theta := sc.ScalarModel()
	if model == nil || len(theta) != model.NumTheta() {
		return nil, fmt.Errorf("%w: approx: likelihood %v: scalar model with %d parameters for %d Params", gp.ErrConfig, c.Likelihood, nt(model), len(theta))
	}
	if _, ok := model.(ops.LaplaceLogLik); c.Inference == Laplace && !ok {
		return nil, fmt.Errorf("%w: approx: likelihood %v has no second and third derivatives for the Laplace approximation: use --inference ep", gp.ErrConfig, c.Likelihood)
	}
	if l, err := c.Likelihood.LatentDim(1); err != nil || l != 1 {
		return nil, fmt.Errorf("%w: approx: likelihood %v needs %d latent functions for one target column (want 1)", gp.ErrConfig, c.Likelihood, l)
	}
	if c.Mean != nil && c.Mean.OutputDim() != 1 {
		return nil, fmt.Errorf("%w: approx: the mean function has %d outputs, want 1", gp.ErrConfig, c.Mean.OutputDim())
	}
	if err := checkOptions(c.Laplace, c.EP); err != nil {
		return nil, err
	}
	m := &GP{Kernel: c.Kernel, Mean: c.Mean, Likelihood: c.Likelihood, Inference: c.Inference, model: model, theta: theta,
		laplace: c.Laplace, ep: c.EP, stats: &ops.ApproxStats{}}
	m.laplace.Stats, m.ep.Stats = m.stats, m.stats
	if (c.X == nil) != (c.Y == nil) {
		return nil, fmt.Errorf("%w: approx: X and Y must be both set or both nil", gp.ErrConfig)
	}
	if err := m.SetTrainingData(c.X, c.Y); err != nil {
		return nil, err
	}
	return m, nil
}

func nt(m ops.ScalarLogLik) int {
	if m == nil {
		return 0
	}
	return m.NumTheta()
}

// checkOptions refuses negative or non-finite tolerances and counts and a damping above 1.
func checkOptions(l ops.LaplaceOptions, e ops.EPOptions) error {
	bad := func(v float64) bool { return !(v >= 0) || v > 1e300 }
	if bad(l.Tol) || l.MaxIter < 0 || bad(e.Tol) || e.MaxSweeps < 0 || bad(e.Damping) || e.Damping > 1 || e.QuadPoints < 0 || e.QuadPoints > 1000 {
		return fmt.Errorf("%w: approx: options %+v, %+v: want finite tolerances ≥ 0, counts ≥ 0, damping in [0, 1] and at most 1000 quadrature points", gp.ErrConfig, l, e)
	}
	return nil
}

// Params returns the kernel's, the mean's and the likelihood's Params.
func (m *GP) Params() []*graph.Param {
	ps := append([]*graph.Param(nil), m.Kernel.Params()...)
	if m.Mean != nil {
		ps = append(ps, m.Mean.Params()...)
	}
	for _, p := range m.Likelihood.Params() {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	for _, p := range m.theta { // a likelihood whose θ Params are not among its Params
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// Stats returns what the approximations did so far (Newton iterations or EP sweeps per call).
func (m *GP) Stats() ops.ApproxStatsSnapshot { return m.stats.Snapshot() }

// LogMarginalLikelihood returns the approximate log marginal likelihood log q(y | X) for x [N,D] and y [N,1]
// (ops.LaplaceLML or ops.EPLML over K(x, x), m(x) and the likelihood's θ).
func (m *GP) LogMarginalLikelihood(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	xs, ys := x.Shape(), y.Shape()
	if len(xs) != 2 || xs[1] != m.Kernel.InputDim() || len(ys) != 2 || ys[0] != xs[0] || ys[1] != 1 {
		return g.Fail(&ops.ShapeError{Op: "approx.GP", Want: fmt.Sprintf("x [N,%d] and y [N,1]", m.Kernel.InputDim()), Got: fmt.Sprint(xs, " and ", ys)})
	}
	k := m.Kernel.K(x, x)
	var mean *graph.Node
	if m.Mean != nil {
		mean = m.Mean.Mean(x)
	} else {
		mean = g.Zeros("approx.zeromean", xs[0], 1)
	}
	theta := make([]*graph.Node, len(m.theta))
	for i, p := range m.theta {
		theta[i] = g.Param(p)
	}
	if m.Inference == Laplace {
		return g.LaplaceLML(m.model.(ops.LaplaceLogLik), m.laplace, k, mean, y, theta...)
	}
	return g.EPLML(m.model, m.ep, k, mean, y, theta...)
}

// Loss returns −log q(y | X) (the whole data set: train with full batches, L-BFGS).
func (m *GP) Loss(x, y *graph.Node) *graph.Node {
	return x.Graph().Neg(m.LogMarginalLikelihood(x, y))
}

// TrainingData returns the training data the model predicts from (gp.DataHolder; nil, nil when unset).
func (m *GP) TrainingData() (x, y *mat.Dense) { return m.cond.data.Data() }

// SetTrainingData copies x [N,D] and y [N,1] into the model (gp.DataHolder; both nil unset them). Errors: as
// gp.CheckTrainingData, and a *ops.ShapeError for more than one target column.
func (m *GP) SetTrainingData(x, y *mat.Dense) error {
	return m.cond.set("approx.GP", x, y, m.Kernel.InputDim())
}

// InputDim returns the kernel's input dimension D.
func (m *GP) InputDim() int {
	if m == nil || m.Kernel == nil {
		return 0
	}
	return m.Kernel.InputDim()
}

// OutputDim returns 1: one latent function.
func (m *GP) OutputDim() int { return 1 }

// PredictiveDim returns the likelihood's predictive width for one latent function (1).
func (m *GP) PredictiveDim() int {
	y, err := gp.PredictiveDim(m.Likelihood, 1)
	if err != nil {
		return 0
	}
	return y
}

// ErrNoData is returned when the approximation is asked for without training data.
var ErrNoData = errors.New("approx: the model holds no training data")

// Approximation returns the posterior approximation (ops.GaussApprox) at the current Params on the training data,
// computed from a cold start (f = m, τ̃ = 0: the same answer whatever ran before) and kept until a Param or the
// data change. Safe for concurrent use.
func (m *GP) Approximation(o graph.Options) (*ops.GaussApprox, error) {
	return m.cond.approximation(m.Params(), func(x, y *mat.Dense) (*ops.GaussApprox, error) {
		n, _ := x.Dims()
		k, mean, err := priorMoments(m.Kernel, m.Mean, x, o)
		if err != nil {
			return nil, err
		}
		theta := make([]float64, len(m.theta))
		for i, p := range m.theta {
			theta[i] = p.Value()[0]
		}
		yv := mat.Col(nil, 0, y)
		var q *ops.GaussApprox
		if m.Inference == Laplace {
			q, err = ops.LaplaceApprox(k, mean, yv, n, m.model.(ops.LaplaceLogLik), theta, m.laplace, nil)
		} else {
			q, err = ops.EPApprox(k, mean, yv, n, m.model, theta, m.ep, nil, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("approx: %s: %w", m.Inference, err)
		}
		return q, nil
	})
}

// LogMarginalValue returns the approximate log marginal likelihood at the current Params on the training data
// (Approximation's LogZ).
func (m *GP) LogMarginalValue(o graph.Options) (float64, error) {
	q, err := m.Approximation(o)
	if err != nil {
		return 0, err
	}
	return q.LogZ, nil
}

// priorMoments returns the prior covariance K(x, x), symmetrised, and the prior mean m(x) (zeros for a nil
// mean) at the training inputs x.
func priorMoments(kern gp.Kernel, mf gp.MeanFunction, x *mat.Dense, o graph.Options) (k, mean []float64, err error) {
	n, d := x.Dims()
	g := graph.New(o)
	xn := g.Input("x", n, d)
	outs := map[string]*graph.Node{"k": kern.K(xn, xn)}
	if mf != nil {
		outs["m"] = mf.Mean(xn)
	}
	prog, err := g.CompileForward(outs)
	if err != nil {
		return nil, nil, fmt.Errorf("approx: the prior covariance: %w", err)
	}
	defer prog.Close()
	copyRows(prog.InputData("x"), x)
	if err := prog.Run(); err != nil {
		return nil, nil, fmt.Errorf("approx: the prior covariance: %w", err)
	}
	mean = make([]float64, n)
	if mf != nil {
		copy(mean, prog.Output("m"))
	}
	return symmetric(prog.Output("k"), n), mean, nil
}

// symmetric returns (K + Kᵀ)/2 of the row-major n×n k (a copy).
func symmetric(k []float64, n int) []float64 {
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := 0.5 * (k[i*n+j] + k[j*n+i])
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return out
}

// copyRows copies the rows of a into the row-major buffer dst.
func copyRows(dst []float64, a *mat.Dense) {
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		copy(dst[i*c:(i+1)*c], a.RawRowView(i))
	}
}
