package likelihoods

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

// KindSoftmax is the Spec kind of a softmax likelihood (gp.Spec).
const KindSoftmax = "likelihood/softmax"

func init() {
	gp.RegisterKind(KindSoftmax, buildSoftmax)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name:    "softmax",
		Kind:    KindSoftmax,
		Doc:     "K ≥ 2 class labels, softmax link, Monte-Carlo expectations",
		Classes: true,
		New: func(o gp.LikelihoodOptions) (gp.Likelihood, error) {
			return asLikelihood(NewSoftmax(SoftmaxConfig{NumClasses: o.Classes, Rand: o.Rng()}))
		},
	})
}

// Defaults of SoftmaxConfig.
const (
	// DefaultSoftmaxSamples is S, the Monte-Carlo samples per data point in the variational expectations: an
	// unbiased estimate whose noise adds to the minibatch noise of stochastic training (each step draws afresh).
	DefaultSoftmaxSamples = 10
	// DefaultSoftmaxPredictSamples is the Monte-Carlo samples per row of the predictive probabilities: a standard
	// error of at most 0.5/√1000 ≈ 0.016 on each probability.
	DefaultSoftmaxPredictSamples = 1000
)

// SoftmaxConfig configures a Softmax likelihood. Zero values mean defaults, except NumClasses and Rand
// (required).
type SoftmaxConfig struct {
	// NumClasses is K ≥ 2, the number of classes and of latent functions (required).
	NumClasses int
	// NumSamples is S, the Monte-Carlo samples per data point of the variational expectations (default
	// DefaultSoftmaxSamples).
	NumSamples int
	// PredictSamples is the Monte-Carlo samples per row of PredictMeanVar and PredictLogDensity (default
	// DefaultSoftmaxPredictSamples).
	PredictSamples int
	// Rand is the generator of every Monte-Carlo draw, in the graph and in prediction (required). It must not be
	// used concurrently.
	Rand *rand.Rand
}

// Softmax is the multiclass likelihood p(y = k | f) = softmax(f)_k with K latent functions and one label column
// y holding the class 0..K−1 (as float64). Its variational expectations are Monte-Carlo estimates with the
// reparameterisation f = μ + √v ⊙ ε (ops.SoftmaxMCVE), the noise ε drawn afresh at every run from the injected
// generator (graph.Graph.StandardNormal); so the ELBO is stochastic and reproducible from the generator's seed.
// It has no parameters.
type Softmax struct {
	k, s, predS int
	rng         *rand.Rand
}

var (
	_ gp.Likelihood      = (*Softmax)(nil)
	_ gp.ClassLikelihood = (*Softmax)(nil)
)

// NewSoftmax returns a softmax likelihood. It returns an error wrapping gp.ErrConfig if NumClasses < 2,
// NumSamples or PredictSamples is negative, or Rand is nil.
func NewSoftmax(cfg SoftmaxConfig) (*Softmax, error) {
	if cfg.NumClasses < 2 {
		return nil, likConfigErr("Softmax: NumClasses %d must be ≥ 2", cfg.NumClasses)
	}
	if cfg.Rand == nil {
		return nil, likConfigErr("Softmax: nil Rand (the Monte-Carlo generator is required)")
	}
	if cfg.NumSamples < 0 || cfg.PredictSamples < 0 {
		return nil, likConfigErr("Softmax: NumSamples %d and PredictSamples %d must be ≥ 0", cfg.NumSamples, cfg.PredictSamples)
	}
	sm := &Softmax{k: cfg.NumClasses, s: cfg.NumSamples, predS: cfg.PredictSamples, rng: cfg.Rand}
	if sm.s == 0 {
		sm.s = DefaultSoftmaxSamples
	}
	if sm.predS == 0 {
		sm.predS = DefaultSoftmaxPredictSamples
	}
	return sm, nil
}

// WithRand returns a copy of the likelihood whose Monte-Carlo draws come from rng (nil: an error); it has no
// parameters to share.
func (sm *Softmax) WithRand(rng *rand.Rand) (gp.Likelihood, error) {
	if rng == nil {
		return nil, likConfigErr("Softmax.WithRand: nil Rand")
	}
	c := *sm
	c.rng = rng
	return &c, nil
}

// NumClasses returns K.
func (sm *Softmax) NumClasses() int { return sm.k }

// NumSamples returns S, the Monte-Carlo samples per data point of the variational expectations.
func (sm *Softmax) NumSamples() int { return sm.s }

// LatentDim returns K for p = 1 label column (error otherwise).
func (sm *Softmax) LatentDim(p int) (int, error) { return classLatentDim("Softmax", sm.k, p) }

// VariationalExpectations returns [N]: the Monte-Carlo estimate (1/S) Σ_s log softmax(μ_n + √v_n ⊙ ε_{s,n})_{y_n}
// for fMean, fVar [N,K] and labels y [N,1], with noise ε [S·N,K] from the Softmax's generator, redrawn at every
// run. Shape errors are recorded in the graph; a bad label is an ops.ErrLabel error when the program runs.
func (sm *Softmax) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	g, ok := classOperands("Softmax", sm.k, fMean, fVar, y)
	if !ok {
		return invalidVE(g)
	}
	eps := g.StandardNormal(fMean, sm.rng, sm.s*fMean.Shape()[0], sm.k)
	return g.SoftmaxMCVE(fMean, fVar, y, eps)
}

// VariationalExpectationsWithNoise is VariationalExpectations with caller-supplied standard-normal noise eps
// [S·N,K] (row s·N + n is sample s of data row n; any S ≥ 1): for common random numbers across evaluations or a
// deterministic objective (e.g. gradient checks with a constant eps).
func (sm *Softmax) VariationalExpectationsWithNoise(fMean, fVar, y, eps *graph.Node) *graph.Node {
	g, ok := classOperands("Softmax", sm.k, fMean, fVar, y)
	if !ok {
		return invalidVE(g)
	}
	return g.SoftmaxMCVE(fMean, fVar, y, eps)
}

// mcProbs returns, for each row, the Monte-Carlo estimate (1/S) Σ_s softmax(μ + √v ⊙ ε_s) [n,K] with S =
// PredictSamples draws from the Softmax's generator (so repeated calls differ unless the generator is reseeded).
func (sm *Softmax) mcProbs(op string, fMean, fVar []float64, n int) ([]float64, error) {
	if err := checkClassMarginals(op, sm.k, fMean, fVar, n); err != nil {
		return nil, err
	}
	k := sm.k
	out := make([]float64, len(fMean))
	sd, f := make([]float64, k), make([]float64, k)
	for i := 0; i < n; i++ {
		mu, p := fMean[i*k:(i+1)*k], out[i*k:(i+1)*k]
		for j := range sd {
			sd[j] = math.Sqrt(math.Max(fVar[i*k+j], 0))
		}
		for s := 0; s < sm.predS; s++ {
			m := math.Inf(-1)
			for j := range f {
				f[j] = mu[j] + sd[j]*sm.rng.NormFloat64()
				m = math.Max(m, f[j])
			}
			sum := 0.0
			for j := range f {
				f[j] = math.Exp(f[j] - m)
				sum += f[j]
			}
			for j := range f {
				p[j] += f[j] / sum
			}
		}
		for j := range p {
			p[j] /= float64(sm.predS)
		}
	}
	return out, nil
}

// PredictMeanVar returns Monte-Carlo class probabilities p(y = k) ≈ (1/S) Σ_s softmax(μ + √v ⊙ ε_s)_k as the mean
// [n,K] (each row sums to 1) and p(1 − p) as the variance [n,K], given fMean, fVar [n,K] (row-major), with S =
// PredictSamples draws per row from the Softmax's generator.
func (sm *Softmax) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	mean, err = sm.mcProbs("Softmax.PredictMeanVar", fMean, fVar, n)
	if err != nil {
		return nil, nil, err
	}
	return mean, indicatorVariance(mean), nil
}

// ClassProbs returns a copy of the Monte-Carlo class probabilities [N,K] (PredictMeanVar's mean;
// gp.ClassLikelihood).
func (*Softmax) ClassProbs(mean *mat.Dense) *mat.Dense { return mat.DenseCopyOf(mean) }

// PredictLogDensity returns log p(y_n) [n] with p(y_n) the Monte-Carlo probability of PredictMeanVar (S =
// PredictSamples draws per row from the Softmax's generator), evaluated in log space as
// logsumexp_s log softmax(f_s)_{y_n} − log S, so a tiny probability does not underflow. It returns an error for
// inconsistent sizes, non-finite values or a bad label.
func (sm *Softmax) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	const op = "Softmax.PredictLogDensity"
	if err := checkClassMarginals(op, sm.k, fMean, fVar, n); err != nil {
		return nil, err
	}
	labels, err := checkLabels(op, sm.k, y, n)
	if err != nil {
		return nil, err
	}
	k := sm.k
	out := make([]float64, n)
	sd, f, lp := make([]float64, k), make([]float64, k), make([]float64, sm.predS)
	for i, c := range labels {
		mu := fMean[i*k : (i+1)*k]
		for j := range sd {
			sd[j] = math.Sqrt(math.Max(fVar[i*k+j], 0))
		}
		for s := range lp {
			for j := range f {
				f[j] = mu[j] + sd[j]*sm.rng.NormFloat64()
			}
			lp[s] = f[c] - ops.LogSumExp(f)
		}
		out[i] = ops.LogSumExp(lp) - math.Log(float64(sm.predS))
	}
	return out, nil
}

// Params returns nil: the softmax likelihood has no parameters.
func (*Softmax) Params() []*graph.Param { return nil }

// String names the likelihood and its sample counts.
func (sm *Softmax) String() string {
	return fmt.Sprintf("Softmax(K=%d, samples=%d, predictSamples=%d)", sm.k, sm.s, sm.predS)
}

// softmaxSpec is the Config of KindSoftmax.
type softmaxSpec struct {
	NumClasses     int `json:"num_classes"`
	NumSamples     int `json:"num_samples"`
	PredictSamples int `json:"predict_samples"`
}

// Spec describes sm: K and its sample counts. Its generator is not part of the Spec: the rebuilt Softmax draws
// from gp.BuildOptions.Rng().
func (sm *Softmax) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindSoftmax, softmaxSpec{NumClasses: sm.k, NumSamples: sm.s, PredictSamples: sm.predS})
}

func buildSoftmax(raw json.RawMessage, children []any, o gp.BuildOptions) (any, error) {
	var c softmaxSpec
	if err := decodeLeaf(KindSoftmax, raw, children, &c); err != nil {
		return nil, err
	}
	if c.NumSamples <= 0 || c.PredictSamples <= 0 {
		return nil, likConfigErr("%s: NumSamples %d and PredictSamples %d must be > 0", KindSoftmax, c.NumSamples, c.PredictSamples)
	}
	return NewSoftmax(SoftmaxConfig{NumClasses: c.NumClasses, NumSamples: c.NumSamples, PredictSamples: c.PredictSamples, Rand: o.Rng()})
}

var _ gp.Describer = (*Softmax)(nil)

// SoftmaxClasses returns K: the softmax link over K latent functions, the capability the exact GP's multi-class
// Laplace approximation needs (approx.SoftmaxLink).
func (sm *Softmax) SoftmaxClasses() int { return sm.k }
