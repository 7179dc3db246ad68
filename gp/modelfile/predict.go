package modelfile

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// ErrNoTrainingData is returned by File.Predict for a model whose predictions need the training data (exact
// GP, SGPR) when the File has none.
var ErrNoTrainingData = errors.New("modelfile: the model needs its training data (TrainX, TrainY) to predict")

// PredictOptions configures File.Predict. Zero values mean defaults.
type PredictOptions struct {
	// Samples is the number of propagated test samples of a deep GP (default dgp.DefaultTestSamples; ignored by
	// the other families).
	Samples int
	// Rand draws every Monte-Carlo number of the prediction: a deep GP's propagation noise and a Monte-Carlo
	// likelihood's (softmax) predictive draws. nil means a new rand.NewPCG(1, 2) generator at every call, so
	// repeated calls give the same numbers. Prediction never uses the model's own (training) generators.
	Rand *rand.Rand
	// ChunkRows bounds the rows of one prediction run: test rows for GPR, SGPR and SVGP (default: the family's,
	// gp.DefaultPredictChunk or models.DefaultChunk), samples × test rows for a deep GP (default
	// dgp.DefaultChunkRows).
	ChunkRows int
}

// Prediction is the predictive distribution at test inputs, in the original units of the data.
type Prediction struct {
	// Mean and Var are the predictive mean and variance of y [N,P] (observation noise included), in original
	// units: the standardised values v become v·YStd + YMean and variances v·YStd². Std is the predictive
	// standard deviation √Var, computed as √v·YStd: it stays finite where Var overflows float64 (targets of
	// magnitude beyond about 1e154), so scores and users should prefer it. nil for classifiers.
	Mean, Var, Std *mat.Dense
	// Probs are the class probabilities [N,K] of a classifier (robust-max, softmax). A Bernoulli model gives
	// [N,2P]: columns 2j and 2j+1 are p(y_j = 0) and p(y_j = 1) (so [N,2] for one label column). nil for
	// regression.
	Probs *mat.Dense
}

// Predict returns the predictive distribution at x [N,D], given in the original units of the training data:
// x is standardised with f.Standardizer (when set) and the predictions are mapped back. Exact GPs and SGPR
// predict from f.TrainX and f.TrainY (ErrNoTrainingData when nil); SVGP models through their layer and
// likelihood; deep GPs from o.Samples propagated samples. Monte-Carlo draws come from o.Rand only, so the
// same options give the same numbers, and a loaded model predicts bit for bit as the saved one did.
//
// Errors: a *ops.ShapeError when x's width is not the model's input dimension, or the standardizer's target
// width is not the model's output width; a *ops.NonFiniteError naming the row and column of the first NaN or
// ±Inf input; ErrNoTrainingData; an error for a model family Predict does not know; and the model's own
// prediction errors.
func (f *File) Predict(x *mat.Dense, o PredictOptions) (*Prediction, error) {
	if f == nil || f.Model == nil {
		return nil, errors.New("modelfile: Predict: no model")
	}
	d, err := predictInputDim(f.Model)
	if err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, &ops.ShapeError{Op: "modelfile.Predict", Want: fmt.Sprintf("inputs [N,%d] with N ≥ 1", d), Got: "no inputs"}
	}
	n, c := x.Dims()
	if c != d {
		return nil, &ops.ShapeError{Op: "modelfile.Predict", Want: fmt.Sprintf("inputs with %d columns (the model's input dimension)", d), Got: fmt.Sprintf("[%d,%d]", n, c)}
	}
	xs := mat.DenseCopyOf(x)
	if err := ops.CheckFinite("modelfile.Predict inputs", xs.RawMatrix().Data, d); err != nil {
		return nil, err
	}
	if f.Standardizer != nil {
		if xs, err = f.Standardizer.ApplyX(xs); err != nil {
			return nil, fmt.Errorf("modelfile: Predict: standardising the inputs: %w", err)
		}
	}
	rng := o.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	var mean, variance *mat.Dense
	var lik gp.Likelihood
	switch m := f.Model.(type) {
	case *gp.GPR:
		if f.TrainX == nil || f.TrainY == nil {
			return nil, ErrNoTrainingData
		}
		pr, err := m.Predict(f.TrainX, f.TrainY, xs, gp.PredictOptions{Chunk: o.ChunkRows})
		if err != nil {
			return nil, err
		}
		mean, variance = pr.Mean, addNoise(pr.Mean, pr.Var, m.NoiseVariance())
	case *models.SGPR:
		if f.TrainX == nil || f.TrainY == nil {
			return nil, ErrNoTrainingData
		}
		pr, err := m.Predict(f.TrainX, f.TrainY, xs, models.PredictOptions{Chunk: o.ChunkRows})
		if err != nil {
			return nil, err
		}
		mean, variance = pr.Mean, addNoise(pr.Mean, pr.Var, m.NoiseVariance())
	case *models.SVGP:
		if lik, err = withRand(m.Likelihood, rng); err != nil {
			return nil, err
		}
		fm, fv, err := m.PredictF(xs, models.PredictOptions{Chunk: o.ChunkRows})
		if err != nil {
			return nil, err
		}
		mu, v, err := lik.PredictMeanVar(fm.RawMatrix().Data, fv.RawMatrix().Data, n)
		if err != nil {
			return nil, err
		}
		p := len(mu) / n
		mean, variance = mat.NewDense(n, p, mu), mat.NewDense(n, p, v)
	case *dgp.DGP:
		if lik, err = withRand(m.Likelihood, rng); err != nil {
			return nil, err
		}
		// PredictOptions.Rand supplies the test noise; a Monte-Carlo likelihood needs the same layers with the
		// prediction's generator.
		pd := m
		if lik != m.Likelihood {
			if pd, err = dgp.New(dgp.Config{Layers: m.Layers, Likelihood: lik, NumData: m.NumData, Samples: m.Samples(), Noise: dgp.ZeroNoise}); err != nil {
				return nil, err
			}
		}
		if mean, variance, err = pd.PredictY(xs, dgp.PredictOptions{Samples: o.Samples, Rand: rng, ChunkRows: o.ChunkRows}); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("modelfile: Predict: cannot predict with a %T", f.Model)
	}
	switch lik.(type) {
	case *likelihoods.Bernoulli:
		return &Prediction{Probs: bernoulliProbs(mean)}, nil
	case interface{ NumClasses() int }:
		return &Prediction{Probs: mean}, nil
	}
	sd, err := f.unstandardize(mean, variance)
	if err != nil {
		return nil, err
	}
	return &Prediction{Mean: mean, Var: variance, Std: sd}, nil
}

// predictInputDim returns the input dimension D of the model families Predict knows.
func predictInputDim(m Model) (int, error) {
	switch m := m.(type) {
	case *gp.GPR:
		if m != nil && m.Kernel != nil {
			return m.Kernel.InputDim(), nil
		}
	case *models.SGPR:
		if m != nil && m.Kernel != nil {
			return m.Kernel.InputDim(), nil
		}
	case *models.SVGP:
		if m != nil && m.Layer != nil && m.Likelihood != nil {
			return m.Layer.InputDim(), nil
		}
	case *dgp.DGP:
		if m != nil && len(m.Layers) > 0 && m.Likelihood != nil {
			return m.InputDim(), nil
		}
	default:
		return 0, fmt.Errorf("modelfile: Predict: cannot predict with a %T", m)
	}
	return 0, fmt.Errorf("modelfile: Predict: incomplete %T (nil kernel, layer or likelihood)", m)
}

// withRand returns lik with its Monte-Carlo draws from rng (likelihoods with a WithRand method, such as the
// softmax; the training generator's state is not part of a model file), or lik itself.
func withRand(lik gp.Likelihood, rng *rand.Rand) (gp.Likelihood, error) {
	if mc, ok := lik.(interface {
		WithRand(*rand.Rand) (gp.Likelihood, error)
	}); ok {
		return mc.WithRand(rng)
	}
	return lik, nil
}

// addNoise returns the predictive variance of y [N,P]: the latent variance of row i (shared by the outputs)
// plus the noise variance.
func addNoise(mean *mat.Dense, latent []float64, noise float64) *mat.Dense {
	n, p := mean.Dims()
	v := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		row := v.RawRowView(i)
		for j := range row {
			row[j] = latent[i] + noise
		}
	}
	return v
}

// bernoulliProbs returns [N,2P] with columns 2j, 2j+1 = 1 − p_j, p_j for the probabilities p [N,P] of y_j = 1.
func bernoulliProbs(p1 *mat.Dense) *mat.Dense {
	n, p := p1.Dims()
	out := mat.NewDense(n, 2*p, nil)
	for i := 0; i < n; i++ {
		src, dst := p1.RawRowView(i), out.RawRowView(i)
		for j, v := range src {
			dst[2*j], dst[2*j+1] = 1-v, v
		}
	}
	return out
}

// unstandardize maps the standardised predictive mean and variance [N,P] back to original units in place, and
// returns the standard deviations in original units.
func (f *File) unstandardize(mean, variance *mat.Dense) (*mat.Dense, error) {
	n, p := mean.Dims()
	sd := mat.NewDense(n, p, nil)
	s := f.Standardizer
	if s == nil {
		for i := 0; i < n; i++ {
			for j, v := range variance.RawRowView(i) {
				sd.Set(i, j, math.Sqrt(v))
			}
		}
		return sd, nil
	}
	if len(s.YMean) != p || len(s.YStd) != p {
		return nil, &ops.ShapeError{Op: "modelfile.Predict", Want: fmt.Sprintf("a standardizer of %d target columns (the model's outputs)", p), Got: fmt.Sprintf("%d means, %d deviations", len(s.YMean), len(s.YStd))}
	}
	for i := 0; i < n; i++ {
		m, v, d := mean.RawRowView(i), variance.RawRowView(i), sd.RawRowView(i)
		for j := range m {
			m[j] = s.InverseMean(j, m[j])
			d[j] = s.InverseStd(j, v[j])
			v[j] = s.InverseVar(j, v[j])
		}
	}
	return sd, nil
}
