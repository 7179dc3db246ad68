package gp

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Predictor is the one prediction contract of gpzoo's model families: exact GPR and SGPR (which hold their
// training data, see DataHolder), SVGP with any layer and likelihood, deep GPs, ADVGP and the VBKS model
// average. Model files, the zoo, the CLI (and servers or workers built on them) predict through it only.
//
// Predictions are in the units the model was trained in (standardised data, for the zoo and the CLI): mapping
// back to original units is the caller's (gp/modelfile does it).
type Predictor interface {
	// Predict returns the predictive distribution at the rows of x [N,InputDim]. Errors: a *ops.ShapeError
	// when x is nil, empty or not InputDim wide; a *ops.NonFiniteError naming the row and column of the first
	// NaN or ±Inf input; ErrNoTrainingData for a model that conditions on training data it does not hold;
	// ErrUnsupported for an option the family cannot honour (o.Full for a deep GP, say); the model's own errors.
	// The same options (o.Rand in the same state, or nil) give the same bits.
	Predict(x *mat.Dense, o PredictOptions) (*Prediction, error)
	// InputDim returns D, the width of the inputs (0 for an incomplete model, which then refuses every input).
	InputDim() int
	// OutputDim returns L, the width of the Prediction's FMean and FVar: the number of latent functions, which is
	// the targets' width P for most likelihoods, the number of classes K for the multiclass ones and 2P for the
	// heteroscedastic Gaussian (a mean and a log noise variance per target). 0 when the model cannot tell yet (an
	// exact GP or SGPR without training data and without a mean function).
	OutputDim() int
	// PredictiveDim returns Y, the width of the Prediction's YMean and YVar: what the model's likelihood makes of
	// L latent columns (gp.PredictiveDim(likelihood, L)): the targets' width P (L for the Gaussian and the other
	// one-latent-per-target likelihoods, L/2 for the heteroscedastic Gaussian), or the K class probabilities of a
	// multiclass likelihood (Y = L = K). 0 when the model cannot tell.
	PredictiveDim() int
}

// DefaultPredictChunk is the number of test rows the exact GP predicts per graph run when
// PredictOptions.ChunkRows is zero.
const DefaultPredictChunk = 1024

// Errors of Predict.
var (
	// ErrNoTrainingData: the model's predictions condition on training data (exact GP, SGPR) and it holds none
	// (see DataHolder).
	ErrNoTrainingData = errors.New("gp: the model needs its training data to predict (SetTrainingData)")
	// ErrUnsupported: the model family cannot honour a PredictOptions field (for example Full for a deep GP,
	// whose predictive distribution is not Gaussian).
	ErrUnsupported = errors.New("gp: prediction option not supported by this model")
)

// PredictOptions configures Predictor.Predict. Zero values mean defaults; every family reads the fields that
// concern it and ignores the others (but refuses Full or Draws when it cannot honour them).
type PredictOptions struct {
	// Samples is the number of samples a deep GP propagates through its layers per test row (default
	// dgp.DefaultTestSamples; a one-layer deep GP uses 1). Ignored by the other families.
	Samples int
	// Rand draws every Monte-Carlo number of the prediction: a deep GP's propagation noise, a Monte-Carlo
	// likelihood's predictive draws (softmax) and Draws. nil means a new rand.New(rand.NewPCG(1, 2)) at every
	// call, so repeated calls give the same numbers. Prediction never draws from a model's own (training)
	// generators.
	Rand *rand.Rand
	// ChunkRows bounds the rows of one prediction run (memory): test rows for GPR, SGPR and SVGP (default
	// DefaultPredictChunk for GPR, models.DefaultChunk for the others), samples × test rows for a deep GP
	// (default dgp.DefaultChunkRows; its propagation noise is drawn run by run, so the draws depend on it).
	ChunkRows int
	// Full asks for the full N×N covariance of each latent function at the test rows (Prediction.FCov), computed
	// in one run over all rows: memory is O(N²). Gaussian predictives only (GPR, SGPR, SVGP, ADVGP, and the VBKS
	// average as a mixture); a deep GP returns ErrUnsupported.
	Full bool
	// OutputCov asks for the covariance between the latent functions at each test row (Prediction.OutputCov, one
	// L×L matrix per row): Σ_l W_pl W_p'l v_l(x) for a layer with correlated outputs (gp.CorrelatedLayer: an LMC),
	// diagonal (FVar's row) for independent outputs, the mixture's covariance for a mixture predictive (a deep
	// GP's samples, whose outputs co-vary through the shared hidden samples). Unlike Full, it is computed row by
	// row: memory O(N·L²).
	OutputCov bool
	// Draws is the number of joint samples of the latent functions at the test rows to return
	// (Prediction.Draws): from the full Gaussian predictive for GPR, SGPR, SVGP and ADVGP (O(N²) memory, as
	// Full), by propagating samples through every layer for a deep GP (each row drawn given the previous layer's
	// sample of that row, as in training: not joint across rows), from the kernel drawn by its weight for the
	// VBKS average. 0: none.
	Draws int
	// Graph configures the prediction graphs (the Cholesky jitter policy).
	Graph graph.Options
	// RowRand, when set, gives each test row its own generator (RowRand(i) for row i of x, called once per row
	// and call): a family whose marginals draw per-row Monte-Carlo numbers (a deep GP's propagation) draws row
	// i's from it, in an order that does not depend on the other rows, so that with a fixed ChunkRows a row's
	// prediction does not depend on the rows predicted with it. Other numbers (a Monte-Carlo likelihood's, Draws)
	// still come from Rand.
	RowRand func(row int) *rand.Rand
	// Programs, when set, keeps the compiled prediction programs of the marginal predictions (one per shape) for
	// the next calls: a model predicted many times (a server's) compiles its graphs once. One cache serves one
	// model, whose structure and training data must not change while the cache is in use (its Params may: a
	// program reads them at every run). nil: every call compiles its own programs. The results are the same bits
	// either way.
	Programs *graph.ProgramCache
}

// Rng returns o.Rand, or a new generator rand.New(rand.NewPCG(1, 2)) when it is nil.
func (o PredictOptions) Rng() *rand.Rand {
	if o.Rand != nil {
		return o.Rand
	}
	return rand.New(rand.NewPCG(1, 2))
}

// Check returns an error wrapping ErrConfig for negative Samples or Draws.
func (o PredictOptions) Check() error {
	if o.Samples < 0 || o.Draws < 0 {
		return configErr("PredictOptions: Samples %d and Draws %d must be ≥ 0", o.Samples, o.Draws)
	}
	return nil
}

// Prediction is a predictive distribution at N test rows, in the units the model was trained in.
type Prediction struct {
	// FMean and FVar are the marginal mean and variance of the latent functions f [N,L]. For a mixture
	// predictive (a deep GP's propagated samples, the VBKS average) they are the mixture's mean and variance,
	// i.e. the moment-matched Gaussian's; the components are in Components.
	FMean, FVar *mat.Dense
	// YMean and YVar are the likelihood's predictive mean and variance [N,Y] given f's marginals
	// (Likelihood.PredictMeanVar; Y = Predictor.PredictiveDim, which the likelihood decides: L, or the P target
	// columns of a likelihood with several latents per target): for regression the mean and variance of y,
	// observation noise included; for a classifier the class probabilities and the variances p(1 − p) of the
	// class indicators. For a mixture they
	// are the mixture's moments of the components' YMean and YVar (law of total variance).
	YMean, YVar *mat.Dense
	// Probs are the class probabilities of a classifier's likelihood (ClassLikelihood), nil for regression. A
	// K-class likelihood (robust-max, softmax) gives [N,K], a copy of YMean. A Bernoulli likelihood over P label
	// columns gives [N,2P]: columns 2j and 2j+1 are p(y_j = 0) and p(y_j = 1), so [N,2] for one label column
	// (YMean holds only p(y_j = 1)).
	Probs *mat.Dense
	// FCov holds, when PredictOptions.Full is set, the full covariance [N,N] of each latent function (L
	// entries; GPR's outputs share one kernel and one matrix). nil otherwise.
	FCov []*mat.SymDense
	// OutputCov holds, when PredictOptions.OutputCov is set, the covariance [L,L] between the latent functions at
	// each test row (N entries): its diagonal is the row of FVar. nil otherwise.
	OutputCov []*mat.SymDense
	// Draws holds PredictOptions.Draws joint samples of the latent functions, each [N,L]. nil otherwise.
	Draws []*mat.Dense
	// Components are the components of a mixture predictive, nil for a single Gaussian one: a deep GP's S
	// propagated samples (weight 1/S each: the last layer's marginals given one sample of the hidden layers) or
	// the VBKS average's kernels (weight q*(k), Label the kernel's expression).
	Components []Component
}

// Component is one Gaussian (in f) component of a mixture predictive: its weight and its marginals, as in
// Prediction.
type Component struct {
	Weight                   float64
	Label                    string
	FMean, FVar, YMean, YVar *mat.Dense
}

// ClassLikelihood is implemented by likelihoods of class labels (Bernoulli, robust-max, softmax): the
// capability a Predictor checks to fill Prediction.Probs.
type ClassLikelihood interface {
	// ClassProbs returns the class probabilities (Prediction.Probs' layout) from the likelihood's predictive
	// mean [N,L] (PredictMeanVar's mean).
	ClassProbs(mean *mat.Dense) *mat.Dense
}

// DataHolder is implemented by models whose predictions condition on their training data (exact GPR, SGPR).
// They take it at construction, after fitting or from a model file; gp/modelfile saves and restores it.
type DataHolder interface {
	// TrainingData returns the training inputs [N,D] and targets [N,P] (both nil when unset). The matrices are
	// the model's: do not modify them.
	TrainingData() (x, y *mat.Dense)
	// SetTrainingData copies x [N,D] and y [N,P] into the model (both nil: unset). Errors: a *ops.ShapeError
	// for inconsistent shapes, a *ops.NonFiniteError naming a NaN or ±Inf, ErrConfig for one nil matrix.
	SetTrainingData(x, y *mat.Dense) error
}

// CheckInputs returns a *ops.ShapeError when x is nil, empty or not d columns wide, and a *ops.NonFiniteError
// naming the row and column of its first NaN or ±Inf; op names the caller in the error.
func CheckInputs(op string, x *mat.Dense, d int) error {
	if x == nil || x.IsEmpty() {
		return &ops.ShapeError{Op: op, Want: fmt.Sprintf("inputs [N,%d] with N ≥ 1", d), Got: "no inputs"}
	}
	n, c := x.Dims()
	if c != d || d == 0 {
		return &ops.ShapeError{Op: op, Want: fmt.Sprintf("inputs with %d columns (the model's input dimension)", d), Got: fmt.Sprintf("[%d,%d]", n, c)}
	}
	for i := 0; i < n; i++ {
		if err := ops.CheckFinite(op+" inputs", x.RawRowView(i), c); err != nil {
			var nf *ops.NonFiniteError
			if errors.As(err, &nf) {
				nf.Row = i
			}
			return err
		}
	}
	return nil
}

// LikelihoodWithRand returns lik drawing its Monte-Carlo numbers from rng when it draws any (a likelihood with
// a WithRand(*rand.Rand) (Likelihood, error) method, such as the softmax), or lik itself.
func LikelihoodWithRand(lik Likelihood, rng *rand.Rand) (Likelihood, error) {
	if mc, ok := lik.(interface {
		WithRand(*rand.Rand) (Likelihood, error)
	}); ok {
		return mc.WithRand(rng)
	}
	return lik, nil
}

// LikelihoodPredictive returns lik's predictive mean and variance of y [N,Y] (PredictMeanVar; Y = PredictiveDim) at the latent
// marginals fMean, fVar [N,L], and the class probabilities of a ClassLikelihood (nil otherwise).
func LikelihoodPredictive(lik Likelihood, fMean, fVar *mat.Dense) (mean, variance, probs *mat.Dense, err error) {
	n, _ := fMean.Dims()
	mu, v, err := lik.PredictMeanVar(mat.DenseCopyOf(fMean).RawMatrix().Data, mat.DenseCopyOf(fVar).RawMatrix().Data, n)
	if err != nil {
		return nil, nil, nil, err
	}
	p := len(mu) / n
	mean, variance = mat.NewDense(n, p, mu), mat.NewDense(n, p, v)
	if c, ok := lik.(ClassLikelihood); ok {
		probs = c.ClassProbs(mean)
	}
	return mean, variance, probs, nil
}

// DrawJoint returns s joint samples [N,L] of latent functions with marginal means mean [N,L] and full
// covariances covs (one [N,N] per column): for each sample and each column l, mean[:,l] + C_l·ε with C_l the
// lower Cholesky factor of covs[l] (jitter retried as policy says) and ε ~ N(0, I) drawn from rng, N numbers
// per column, columns in order.
func DrawJoint(mean *mat.Dense, covs []*mat.SymDense, s int, rng *rand.Rand, policy ops.JitterPolicy) ([]*mat.Dense, error) {
	n, l := mean.Dims()
	if len(covs) != l {
		return nil, &ops.ShapeError{Op: "gp.DrawJoint", Want: fmt.Sprintf("%d covariances", l), Got: fmt.Sprint(len(covs))}
	}
	chol := make([][]float64, l)
	for p, c := range covs {
		if r := c.SymmetricDim(); r != n {
			return nil, &ops.ShapeError{Op: "gp.DrawJoint", Want: fmt.Sprintf("covariances [%d,%d]", n, n), Got: fmt.Sprintf("[%d,%d]", r, r)}
		}
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i*n+j] = c.At(i, j)
			}
		}
		chol[p] = make([]float64, n*n)
		if _, err := ops.CholeskyLower(chol[p], a, n, policy); err != nil {
			return nil, fmt.Errorf("gp: drawing samples of output %d: %w", p, err)
		}
	}
	out := make([]*mat.Dense, s)
	eps := make([]float64, n)
	for k := range out {
		f := mat.DenseCopyOf(mean)
		for p := 0; p < l; p++ {
			for i := range eps {
				eps[i] = rng.NormFloat64()
			}
			lc := chol[p]
			for i := 0; i < n; i++ {
				acc := 0.0
				for j := 0; j <= i; j++ {
					acc += lc[i*n+j] * eps[j]
				}
				f.Set(i, p, f.At(i, p)+acc)
			}
		}
		out[k] = f
	}
	return out, nil
}

// SymFromRowMajor returns the symmetric matrix (a + aᵀ)/2 of the row-major n×n a.
func SymFromRowMajor(a []float64, n int) *mat.SymDense {
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(a[i*n+j]+a[j*n+i]))
		}
	}
	return sym
}

// DiagonalOutputCov returns the covariances between the outputs of a predictive whose outputs are independent:
// at each row of fvar [N,L], diag(fvar's row) (Prediction.OutputCov).
func DiagonalOutputCov(fvar *mat.Dense) []*mat.SymDense {
	n, l := fvar.Dims()
	out := make([]*mat.SymDense, n)
	for i := range out {
		out[i] = mat.NewSymDense(l, nil)
		for j := 0; j < l; j++ {
			out[i].SetSym(j, j, fvar.At(i, j))
		}
	}
	return out
}

// OutputCovFromRows returns the covariances between the outputs from their row-major [N, L·L] values (a
// CorrelatedLayer's PredictOutputCov), each symmetrised as (a + aᵀ)/2.
func OutputCovFromRows(vals []float64, n, l int) []*mat.SymDense {
	out := make([]*mat.SymDense, n)
	for i := range out {
		out[i] = SymFromRowMajor(vals[i*l*l:(i+1)*l*l], l)
	}
	return out
}

// MixtureOutputCov returns the covariance between the outputs at each row of a mixture of predictives with
// weights w, means means[k] [N,L] and covariances covs[k] (one [L,L] per row): Σ_k w_k (C_k + (μ_k − μ)(μ_k −
// μ)ᵀ) with μ = mean [N,L], the mixture's (the law of total covariance).
func MixtureOutputCov(w []float64, means []*mat.Dense, covs [][]*mat.SymDense, mean *mat.Dense) []*mat.SymDense {
	n, l := mean.Dims()
	out := make([]*mat.SymDense, n)
	d := make([]float64, l)
	for i := range out {
		c := mat.NewSymDense(l, nil)
		for k, wk := range w {
			for a := range d {
				d[a] = means[k].At(i, a) - mean.At(i, a)
			}
			for a := 0; a < l; a++ {
				for b := a; b < l; b++ {
					c.SetSym(a, b, c.At(a, b)+wk*(covs[k][i].At(a, b)+d[a]*d[b]))
				}
			}
		}
		out[i] = c
	}
	return out
}

// Cached is a model whose predictions read state computed from its training data and parameters at some cost
// (the CG exact GP of package gp/cg: α = K̂⁻¹y and its LOVE cache), which model files store beside the data so
// that a loaded model predicts at once.
type Cached interface {
	// PredictionCache returns the state by name, computing it first if it is not current.
	PredictionCache() (map[string][]float64, error)
	// SetPredictionCache restores state PredictionCache returned (an error when it does not belong to the
	// model's current parameters and training data).
	SetPredictionCache(map[string][]float64) error
}
