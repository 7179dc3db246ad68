package models

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KindGPMC is the Spec kind of GPMC.
const KindGPMC = "model/gpmc"

// DefaultGPMCJitter is the jitter GPMC adds to K's diagonal (GPflow's default_jitter).
const DefaultGPMCJitter = 1e-6

// GPMCConfig configures GPMC. Zero values mean defaults.
type GPMCConfig struct {
	Kernel     gp.Kernel     // required
	Likelihood gp.Likelihood // required: any likelihood
	Mean       gp.MeanFunction
	// X [N,D] and Y [N,P] are the training data: the latent values are those of f at X, and predictions
	// condition on them (required).
	X, Y *mat.Dense
	// Jitter is added to K's diagonal before its Cholesky factor (default DefaultGPMCJitter; it is part of the
	// model: f = L v with LLᵀ = K + jitter·I).
	Jitter float64
}

// GPMC is the exact GP with any likelihood in the whitened parameterisation of GPflow's GPMC (Hensman, Matthews,
// Filippone & Ghahramani 2015, "MCMC for variationally sparse Gaussian processes", §2): the latent values at the
// N training inputs are f = m(X) + L v with LLᵀ = K(X, X) + jitter·I and v [N,L] ~ N(0, I), so that
//
//	−log p(y, v | θ) = −Σₙ log p(yₙ | fₙ) + ½‖v‖² + (NL/2) log 2π
//
// is its Loss. The latent values v (Param "gpmc.V") and the hyperparameters θ are sampled jointly (package
// gp/bayes): the whitening decorrelates v from θ, which is what lets a sampler move through both. The likelihood's
// log density enters through its VariationalExpectations at zero variance (the expectation under a point mass is
// the log density itself; quadrature and Monte-Carlo rules are exact there), so any registered likelihood serves.
// Predictions given v and θ are Gaussian in f: μ* = m(x*) + K*ₓL⁻ᵀv, σ²* = k** − ‖L⁻¹Kₓ*‖² (the whitened
// conditional), with y's through the likelihood's predictive.
type GPMC struct {
	Kernel     gp.Kernel
	Likelihood gp.Likelihood
	Mean       gp.MeanFunction
	V          *graph.Param // [N,L], Identity: whitened latent values with the prior N(0, I) inside Loss
	jitter     float64
	data       gp.TrainingSet
}

var (
	_ gp.Predictor    = (*GPMC)(nil)
	_ gp.DataHolder   = (*GPMC)(nil)
	_ gp.Describer    = (*GPMC)(nil)
	_ gp.LatentHolder = (*GPMC)(nil)
)

// NewGPMC returns a GPMC model with v = 0 (f = m(X)).
func NewGPMC(c GPMCConfig) (*GPMC, error) {
	if c.Kernel == nil || c.Likelihood == nil {
		return nil, fmt.Errorf("models: GPMC needs a Kernel and a Likelihood")
	}
	if c.X == nil || c.Y == nil {
		return nil, fmt.Errorf("%w: GPMC needs its training data X and Y", gp.ErrConfig)
	}
	jitter := c.Jitter
	if jitter == 0 {
		jitter = DefaultGPMCJitter
	}
	if !(jitter > 0) || math.IsInf(jitter, 0) {
		return nil, fmt.Errorf("%w: GPMC jitter %v, want finite and > 0", gp.ErrConfig, jitter)
	}
	n, p, err := gp.CheckTrainingData("models.NewGPMC", c.X, c.Y, c.Kernel.InputDim())
	if err != nil {
		return nil, err
	}
	l, err := c.Likelihood.LatentDim(p)
	if err != nil {
		return nil, err
	}
	m := &GPMC{Kernel: c.Kernel, Likelihood: c.Likelihood, Mean: c.Mean, jitter: jitter}
	if m.V, err = graph.NewParam("gpmc.V", make([]float64, n*l), graph.Identity{}, n, l); err != nil {
		return nil, err
	}
	if err := m.SetTrainingData(c.X, c.Y); err != nil {
		return nil, err
	}
	return m, nil
}

// Params returns the kernel's, the mean's, the likelihood's Params and V.
func (m *GPMC) Params() []*graph.Param {
	var mp []*graph.Param
	if m.Mean != nil {
		mp = m.Mean.Params()
	}
	return gp.UniqueParams(m.Kernel.Params(), mp, m.Likelihood.Params(), []*graph.Param{m.V})
}

// LatentParams returns V: its prior N(0, I) is part of Loss (gp.LatentHolder).
func (m *GPMC) LatentParams() []*graph.Param { return []*graph.Param{m.V} }

// Jitter returns the jitter added to K's diagonal.
func (m *GPMC) Jitter() float64 { return m.jitter }

// factor returns L = chol(K(x, x) + jitter·I).
func (m *GPMC) factor(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.Cholesky(g.AddDiag(m.Kernel.K(x, x), g.Scalar("gpmc.jitter", m.jitter)))
}

// Latent returns f = m(x) + L v at the training inputs x [N,D].
func (m *GPMC) Latent(x *graph.Node) *graph.Node {
	g := x.Graph()
	n, l := m.V.Shape()[0], m.V.Shape()[1]
	if s := x.Shape(); len(s) != 2 || s[0] != n || s[1] != m.Kernel.InputDim() {
		return g.Fail(&ops.ShapeError{Op: "GPMC", Want: fmt.Sprintf("x [%d,%d] (the training inputs)", n, m.Kernel.InputDim()), Got: fmt.Sprint(s)})
	}
	f := g.MatMul(m.factor(x), g.Param(m.V), false, false)
	if m.Mean != nil {
		mu := m.Mean.Mean(x)
		if s := mu.Shape(); len(s) != 2 || s[1] != l {
			return g.Fail(&ops.ShapeError{Op: "GPMC mean", Want: fmt.Sprintf("[%d,%d]", n, l), Got: fmt.Sprint(s)})
		}
		f = g.Add(f, mu)
	}
	return f
}

// Loss returns −log p(y | f) + ½‖v‖² + (NL/2) log 2π for the training data x [N,D], y [N,P] (the whole set).
func (m *GPMC) Loss(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	f := m.Latent(x)
	n, l := m.V.Shape()[0], m.V.Shape()[1]
	ve := m.Likelihood.VariationalExpectations(f, g.Zeros("gpmc.fvar", n, l), y)
	v := g.Param(m.V)
	return g.AddConst(g.Sub(g.Scale(g.Dot(v, v), 0.5), g.Sum(ve)), 0.5*float64(n*l)*math.Log(2*math.Pi))
}

// Predict returns the predictive distribution at xs given v and θ (see GPMC): f's marginals [Ns,L] (one variance
// shared by the L latent functions), y's through the likelihood, and on request full covariances and joint
// draws of f (O(Ns²) memory).
func (m *GPMC) Predict(xs *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if m == nil || m.Kernel == nil || m.Likelihood == nil || m.V == nil {
		return nil, fmt.Errorf("models: GPMC.Predict: incomplete model")
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := gp.CheckInputs("GPMC.Predict", xs, m.Kernel.InputDim()); err != nil {
		return nil, err
	}
	x, _ := m.data.Data()
	if x == nil {
		return nil, gp.ErrNoTrainingData
	}
	rng := o.Rng()
	lik, err := gp.LikelihoodWithRand(m.Likelihood, rng)
	if err != nil {
		return nil, err
	}
	n, d := x.Dims()
	l := m.V.Shape()[1]
	res, _, err := chunked("GPMC", xs, o, map[string]*mat.Dense{"x": x}, func(g *graph.Graph, xsn *graph.Node) map[string]*graph.Node {
		mean, variance, _ := m.predictGraph(g, g.Input("x", n, d), xsn, false)
		return map[string]*graph.Node{"mean": mean, "var": variance}
	})
	if err != nil {
		return nil, err
	}
	ns, _ := xs.Dims()
	fm, fv := mat.NewDense(ns, l, res["mean"]), mat.NewDense(ns, l, nil)
	for i := 0; i < ns; i++ {
		v := math.Max(res["var"][i], 0)
		for j := 0; j < l; j++ {
			fv.Set(i, j, v)
		}
	}
	out := &gp.Prediction{FMean: fm, FVar: fv}
	if out.YMean, out.YVar, out.Probs, err = gp.LikelihoodPredictive(lik, fm, fv); err != nil {
		return nil, err
	}
	if o.OutputCov {
		out.OutputCov = gp.DiagonalOutputCov(fv)
	}
	if !o.Full && o.Draws == 0 {
		return out, nil
	}
	g := graph.New(o.Graph)
	xn, xsn := g.Input("x", n, d), g.Input("xs", ns, d)
	_, _, cov := m.predictGraph(g, xn, xsn, true)
	prog, err := g.CompileForward(map[string]*graph.Node{"cov": cov})
	if err != nil {
		return nil, fmt.Errorf("models: GPMC.Predict (full covariance): %w", err)
	}
	defer prog.Close()
	copy(prog.InputData("x"), mat.DenseCopyOf(x).RawMatrix().Data)
	copy(prog.InputData("xs"), mat.DenseCopyOf(xs).RawMatrix().Data)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("models: GPMC.Predict (full covariance): %w", err)
	}
	c := gp.SymFromRowMajor(prog.Output("cov"), ns)
	covs := make([]*mat.SymDense, l)
	for j := range covs {
		covs[j] = c
	}
	if o.Full {
		out.FCov = covs
	}
	if o.Draws > 0 {
		if out.Draws, err = gp.DrawJoint(fm, covs, o.Draws, rng, o.Graph.Jitter); err != nil {
			return nil, fmt.Errorf("models: GPMC.Predict: %w", err)
		}
	}
	return out, nil
}

// predictGraph builds the conditional of f at xs given v: the mean [C,L], the variance [C] and, when full, the
// covariance [C,C].
func (m *GPMC) predictGraph(g *graph.Graph, x, xs *graph.Node, full bool) (mean, variance, cov *graph.Node) {
	a := g.TriSolve(m.factor(x), m.Kernel.K(x, xs), false, false) // L⁻¹Kₓ* [N,C]
	mean = g.MatMul(a, g.Param(m.V), true, false)                 // [C,L]
	if m.Mean != nil {
		mean = g.Add(mean, m.Mean.Mean(xs))
	}
	if full {
		return mean, nil, g.Sub(m.Kernel.K(xs, xs), g.MatMul(a, a, true, false))
	}
	return mean, g.Sub(m.Kernel.KDiag(xs), g.SumRowsSq(a)), nil
}

// TrainingData returns the training data (gp.DataHolder).
func (m *GPMC) TrainingData() (x, y *mat.Dense) { return m.data.Data() }

// SetTrainingData copies the training data in (gp.DataHolder): x [N,D] and y [N,P] with N the rows of V.
func (m *GPMC) SetTrainingData(x, y *mat.Dense) error {
	if x == nil && y == nil {
		return m.data.Set("GPMC", nil, nil, m.Kernel.InputDim())
	}
	if x != nil {
		if r, _ := x.Dims(); r != m.V.Shape()[0] {
			return &ops.ShapeError{Op: "GPMC.SetTrainingData", Want: fmt.Sprintf("%d rows (V's)", m.V.Shape()[0]), Got: fmt.Sprint(r)}
		}
	}
	return m.data.Set("GPMC", x, y, m.Kernel.InputDim())
}

// InputDim returns D.
func (m *GPMC) InputDim() int {
	if m == nil || m.Kernel == nil {
		return 0
	}
	return m.Kernel.InputDim()
}

// OutputDim returns L, the number of latent functions.
func (m *GPMC) OutputDim() int {
	if m == nil || m.V == nil {
		return 0
	}
	return m.V.Shape()[1]
}

// PredictiveDim returns the width of y's predictive (gp.PredictiveDim of the likelihood).
func (m *GPMC) PredictiveDim() int {
	y, err := gp.PredictiveDim(m.Likelihood, m.OutputDim())
	if err != nil {
		return 0
	}
	return y
}

// gpmcSpec is the Config of model/gpmc: the training set's size (V's rows), the latent width and the jitter;
// the children are the kernel, the likelihood and, when HasMean, the mean function.
type gpmcSpec struct {
	NumData int     `json:"num_data"`
	Latent  int     `json:"latent"`
	Outputs int     `json:"outputs"`
	Jitter  float64 `json:"jitter"`
	HasMean bool    `json:"has_mean,omitempty"`
}

// Spec describes the model (its training data are the model file's).
func (m *GPMC) Spec() (gp.Spec, error) {
	x, y := m.data.Data()
	if x == nil {
		return gp.Spec{}, fmt.Errorf("%w: spec of GPMC: no training data", gp.ErrConfig)
	}
	_, p := y.Dims()
	c := gpmcSpec{NumData: m.V.Shape()[0], Latent: m.V.Shape()[1], Outputs: p, Jitter: m.jitter, HasMean: m.Mean != nil}
	children := []any{m.Kernel, m.Likelihood}
	if m.Mean != nil {
		children = append(children, m.Mean)
	}
	return gp.NewSpec(KindGPMC, c, children...)
}

func init() { gp.RegisterKind(KindGPMC, buildGPMC) }

// buildGPMC rebuilds a GPMC with placeholder training data of the right shapes (zeros), which a model file then
// replaces with the stored data (SetTrainingData).
func buildGPMC(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c gpmcSpec
	if err := decodeConfig(KindGPMC, raw, &c); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindGPMC, c.NumData, c.Latent); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindGPMC, c.NumData, c.Outputs); err != nil {
		return nil, err
	}
	if want := 2 + btoi(c.HasMean); len(children) != want {
		return nil, fmt.Errorf("%w: %s has %d children, want %d", gp.ErrConfig, KindGPMC, len(children), want)
	}
	k, err := gp.ChildAs[gp.Kernel](KindGPMC, children, 0)
	if err != nil {
		return nil, err
	}
	lik, err := gp.ChildAs[gp.Likelihood](KindGPMC, children, 1)
	if err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindGPMC, c.NumData, k.InputDim()); err != nil {
		return nil, err
	}
	cfg := GPMCConfig{Kernel: k, Likelihood: lik, Jitter: c.Jitter,
		X: mat.NewDense(c.NumData, k.InputDim(), nil), Y: mat.NewDense(c.NumData, c.Outputs, nil)}
	if c.HasMean {
		if cfg.Mean, err = gp.ChildAs[gp.MeanFunction](KindGPMC, children, 2); err != nil {
			return nil, err
		}
	}
	m, err := NewGPMC(cfg)
	if err != nil {
		return nil, err
	}
	if m.OutputDim() != c.Latent {
		return nil, fmt.Errorf("%w: %s: the likelihood has %d latent functions for %d outputs, the spec %d", gp.ErrConfig, KindGPMC, m.OutputDim(), c.Outputs, c.Latent)
	}
	return m, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
