package approx

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// SoftmaxLink is the capability a multi-class likelihood needs for Multiclass: its link is the softmax over
// SoftmaxClasses() latent functions, p(y = c | f) = softmax(f)_c (gp/likelihoods' Softmax).
type SoftmaxLink interface {
	gp.Likelihood
	SoftmaxClasses() int
}

// KindMulticlass is the Spec kind of a Multiclass.
const KindMulticlass = "model/approx-multiclass"

// MulticlassPredictSamples is the number of Monte-Carlo draws per test row of Multiclass's class probabilities
// (R&W Algorithm 3.4): a standard error of at most 0.5/√4000 ≈ 0.008 on each probability.
const MulticlassPredictSamples = 4000

// MulticlassConfig configures NewMulticlass.
type MulticlassConfig struct {
	Kernel     gp.Kernel   // shared by the C latent functions (required)
	Likelihood SoftmaxLink // the softmax over C ≥ 2 classes (required)
	Laplace    ops.LaplaceOptions
	// X [N,D] and Y [N,1] (labels 0..C−1) are the training data (optional here: SetTrainingData sets them later).
	X, Y *mat.Dense
}

// Multiclass is an exact GP classifier over C classes with the softmax likelihood, by the Laplace approximation
// (Rasmussen & Williams 2006, §3.5, Algorithms 3.3 and 3.4; ops.SoftmaxLaplaceApprox): C latent functions,
// independent a priori with the shared kernel, zero prior mean (the softmax is unchanged by a mean common to the
// classes). Its loss is −log q(y | X) (ops.SoftmaxLaplaceLML, whose gradient reaches every kernel hyperparameter);
// it predicts f*'s C means and C×C covariance per test row (R&W eq. 3.43: the classes co-vary a posteriori) and
// the class probabilities by Monte Carlo over that Gaussian. Dense over C·N, up to ops.MaxSoftmaxLaplaceSize.
type Multiclass struct {
	Kernel     gp.Kernel
	Likelihood SoftmaxLink

	classes int
	laplace ops.LaplaceOptions
	stats   *ops.ApproxStats
	cond    conditioned[ops.SoftmaxApprox]
}

var (
	_ gp.Model      = (*Multiclass)(nil)
	_ gp.Predictor  = (*Multiclass)(nil)
	_ gp.DataHolder = (*Multiclass)(nil)
	_ gp.Describer  = (*Multiclass)(nil)
)

// NewMulticlass returns a multi-class Laplace GP classifier. Errors wrap gp.ErrConfig: a nil kernel or
// likelihood, fewer than 2 classes, invalid options, bad training data.
func NewMulticlass(c MulticlassConfig) (*Multiclass, error) {
	if c.Kernel == nil || c.Likelihood == nil {
		return nil, fmt.Errorf("%w: approx: multi-class: nil kernel or likelihood", gp.ErrConfig)
	}
	k := c.Likelihood.SoftmaxClasses()
	if k < 2 {
		return nil, fmt.Errorf("%w: approx: multi-class: %d classes (want ≥ 2)", gp.ErrConfig, k)
	}
	if err := checkOptions(c.Laplace, ops.EPOptions{}); err != nil {
		return nil, err
	}
	m := &Multiclass{Kernel: c.Kernel, Likelihood: c.Likelihood, classes: k, laplace: c.Laplace, stats: &ops.ApproxStats{}}
	m.laplace.Stats = m.stats
	if (c.X == nil) != (c.Y == nil) {
		return nil, fmt.Errorf("%w: approx: X and Y must be both set or both nil", gp.ErrConfig)
	}
	if err := m.SetTrainingData(c.X, c.Y); err != nil {
		return nil, err
	}
	return m, nil
}

// Params returns the kernel's Params (the softmax has none).
func (m *Multiclass) Params() []*graph.Param {
	return append(append([]*graph.Param(nil), m.Kernel.Params()...), m.Likelihood.Params()...)
}

// Stats returns what the approximations did so far (Newton iterations per call).
func (m *Multiclass) Stats() ops.ApproxStatsSnapshot { return m.stats.Snapshot() }

// LogMarginalLikelihood returns log q(y | X) for x [N,D] and labels y [N,1].
func (m *Multiclass) LogMarginalLikelihood(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	xs, ys := x.Shape(), y.Shape()
	if len(xs) != 2 || xs[1] != m.Kernel.InputDim() || len(ys) != 2 || ys[0] != xs[0] || ys[1] != 1 {
		return g.Fail(&ops.ShapeError{Op: "approx.Multiclass", Want: fmt.Sprintf("x [N,%d] and y [N,1]", m.Kernel.InputDim()), Got: fmt.Sprint(xs, " and ", ys)})
	}
	return g.SoftmaxLaplaceLML(m.classes, m.laplace, m.Kernel.K(x, x), y)
}

// Loss returns −log q(y | X) (the whole data set: train with full batches, L-BFGS).
func (m *Multiclass) Loss(x, y *graph.Node) *graph.Node {
	return x.Graph().Neg(m.LogMarginalLikelihood(x, y))
}

// TrainingData returns the training data the model predicts from (nil, nil when unset).
func (m *Multiclass) TrainingData() (x, y *mat.Dense) { return m.cond.data.Data() }

// SetTrainingData copies x [N,D] and the labels y [N,1] into the model (both nil unset them). Errors: as
// gp.CheckTrainingData, a *ops.ShapeError for more than one target column.
func (m *Multiclass) SetTrainingData(x, y *mat.Dense) error {
	return m.cond.set("approx.Multiclass", x, y, m.Kernel.InputDim())
}

// InputDim returns the kernel's input dimension D.
func (m *Multiclass) InputDim() int {
	if m == nil || m.Kernel == nil {
		return 0
	}
	return m.Kernel.InputDim()
}

// OutputDim returns C, the latent functions.
func (m *Multiclass) OutputDim() int { return m.classes }

// PredictiveDim returns C, the class probabilities.
func (m *Multiclass) PredictiveDim() int { return m.classes }

// Approximation returns the Laplace approximation at the current Params on the training data, from a cold start,
// kept until a Param or the data change. Safe for concurrent use.
func (m *Multiclass) Approximation(o graph.Options) (*ops.SoftmaxApprox, error) {
	return m.cond.approximation(m.Params(), func(x, y *mat.Dense) (*ops.SoftmaxApprox, error) {
		n, _ := x.Dims()
		k, _, err := priorMoments(m.Kernel, nil, x, o)
		if err != nil {
			return nil, err
		}
		q, err := ops.SoftmaxLaplaceApprox(k, mat.Col(nil, 0, y), n, m.classes, m.laplace, nil)
		if err != nil {
			return nil, fmt.Errorf("approx: multi-class Laplace: %w", err)
		}
		return q, nil
	})
}

// Predict returns the predictive distribution at xs [Ns,D]: f*'s C means and variances per row (FMean, FVar
// [Ns,C]; OutputCov the C×C covariances on request), and the class probabilities (Probs, YMean; YVar p(1 − p)),
// each the mean of softmax(f*) over MulticlassPredictSamples draws of f* (softmaxProbs: fixed draws, so a row's
// prediction is deterministic and independent of the other rows). Full and Draws are not supported
// (gp.ErrUnsupported).
func (m *Multiclass) Predict(xs *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if m == nil || m.Kernel == nil || m.Likelihood == nil {
		return nil, fmt.Errorf("%w: approx.Multiclass.Predict: incomplete model", gp.ErrConfig)
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Full || o.Draws > 0 {
		return nil, fmt.Errorf("%w: approx.Multiclass: full covariances and joint draws across rows", gp.ErrUnsupported)
	}
	if err := gp.CheckInputs("approx.Multiclass.Predict", xs, m.Kernel.InputDim()); err != nil {
		return nil, err
	}
	q, err := m.Approximation(o.Graph)
	if err != nil {
		return nil, err
	}
	x, _ := m.cond.data.Data()
	ns, _ := xs.Dims()
	c := m.classes
	fm, fv := mat.NewDense(ns, c, nil), mat.NewDense(ns, c, nil)
	covs := make([]*mat.SymDense, ns)
	err = marginalRuns("approx.Multiclass", m.Kernel, nil, x, xs, o, func(lo, hi, chunk int, prog *graph.Program) error {
		mean, cov, err := q.Predict(prog.Output("kxs"), prog.Output("kss"), chunk)
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			j := i - lo
			s := mat.NewSymDense(c, nil)
			for a := 0; a < c; a++ {
				fm.Set(i, a, mean[j*c+a])
				fv.Set(i, a, math.Max(cov[(j*c+a)*c+a], 0))
				for b := a; b < c; b++ {
					s.SetSym(a, b, 0.5*(cov[(j*c+a)*c+b]+cov[(j*c+b)*c+a]))
				}
			}
			covs[i] = s
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	probs, err := softmaxProbs(fm, covs, o)
	if err != nil {
		return nil, err
	}
	yv := mat.NewDense(ns, c, nil)
	yv.Apply(func(_, _ int, p float64) float64 { return p * (1 - p) }, probs)
	out := &gp.Prediction{FMean: fm, FVar: fv, YMean: mat.DenseCopyOf(probs), YVar: yv, Probs: probs}
	if o.OutputCov {
		out.OutputCov = covs
	}
	return out, nil
}

// softmaxProbs returns each row's E[softmax(f)] for f ~ N(mean row, cov) by Monte Carlo: f = μ + Lε (LLᵀ = cov
// with o's jitter policy) over the same MulticlassPredictSamples standard-normal draws ε for every row, from a
// fixed seed (common random numbers): each row's probabilities are a function of its own latent mean and
// covariance alone, the same in any batch of rows, whatever o.Rand.
func softmaxProbs(mean *mat.Dense, covs []*mat.SymDense, o gp.PredictOptions) (*mat.Dense, error) {
	ns, c := mean.Dims()
	rng := rand.New(rand.NewPCG(0x5eed, uint64(c)))
	eps := make([]float64, MulticlassPredictSamples*c)
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	out := mat.NewDense(ns, c, nil)
	l, f := make([]float64, c*c), make([]float64, c)
	for i := 0; i < ns; i++ {
		for a := 0; a < c; a++ {
			for b := 0; b < c; b++ {
				l[a*c+b] = covs[i].At(a, b)
			}
		}
		if _, err := ops.CholeskyLower(l, l, c, o.Graph.Jitter); err != nil {
			return nil, fmt.Errorf("approx: Multiclass.Predict row %d: the latent covariance: %w", i, err)
		}
		mu, p := mean.RawRowView(i), out.RawRowView(i)
		for s := 0; s < MulticlassPredictSamples; s++ {
			e := eps[s*c : (s+1)*c]
			mx := math.Inf(-1)
			for a := 0; a < c; a++ {
				v := mu[a]
				for b := 0; b <= a; b++ {
					v += l[a*c+b] * e[b]
				}
				f[a] = v
				mx = math.Max(mx, v)
			}
			sum := 0.0
			for a := range f {
				f[a] = math.Exp(f[a] - mx)
				sum += f[a]
			}
			for a := range f {
				p[a] += f[a] / sum
			}
		}
		for a := range p {
			p[a] /= MulticlassPredictSamples
		}
	}
	return out, nil
}

// multiclassSpec is the Config of KindMulticlass: the Laplace options (Stats aside).
type multiclassSpec struct {
	LaplaceTol     float64 `json:"laplace_tol,omitempty"`
	LaplaceMaxIter int     `json:"laplace_max_iter,omitempty"`
	LaplaceCold    bool    `json:"laplace_cold,omitempty"`
}

func init() { gp.RegisterKind(KindMulticlass, buildMulticlass) }

// Spec describes the model: its options (Config), then the kernel and the likelihood (children). The training
// data are not part of a Spec (model files store them).
func (m *Multiclass) Spec() (gp.Spec, error) {
	if m.Kernel == nil || m.Likelihood == nil {
		return gp.Spec{}, fmt.Errorf("%w: spec of approx.Multiclass: nil kernel or likelihood", gp.ErrConfig)
	}
	c := multiclassSpec{LaplaceTol: m.laplace.Tol, LaplaceMaxIter: m.laplace.MaxIter, LaplaceCold: m.laplace.Cold}
	return gp.NewSpec(KindMulticlass, c, m.Kernel, m.Likelihood)
}

func buildMulticlass(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c multiclassSpec
	if err := gp.DecodeConfig(KindMulticlass, raw, &c); err != nil {
		return nil, err
	}
	if len(children) != 2 {
		return nil, fmt.Errorf("%w: %s needs a kernel and a likelihood, got %d children", gp.ErrConfig, KindMulticlass, len(children))
	}
	k, err := gp.ChildAs[gp.Kernel](KindMulticlass, children, 0)
	if err != nil {
		return nil, err
	}
	lik, err := gp.ChildAs[SoftmaxLink](KindMulticlass, children, 1)
	if err != nil {
		return nil, err
	}
	return NewMulticlass(MulticlassConfig{Kernel: k, Likelihood: lik,
		Laplace: ops.LaplaceOptions{Tol: c.LaplaceTol, MaxIter: c.LaplaceMaxIter, Cold: c.LaplaceCold}})
}
