package modelfile

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// ErrNoTrainingData is returned by File.Predict for a model whose predictions need the training data (exact
// GP, SGPR) when it holds none (gp.ErrNoTrainingData).
var ErrNoTrainingData = gp.ErrNoTrainingData

// Prediction is the predictive distribution at test inputs, in the original units of the data.
type Prediction struct {
	// Mean and Var are the predictive mean and variance of y [N,P] (observation noise included), in original
	// units: the standardised values v become v·YStd + YMean and variances v·YStd². Std is the predictive
	// standard deviation √Var, computed as √v·YStd: it stays finite where Var overflows float64 (targets of
	// magnitude beyond about 1e154), so scores and users should prefer it. nil for classifiers.
	Mean, Var, Std *mat.Dense
	// Probs are the class probabilities [N,K] of a classifier (robust-max, softmax). A Bernoulli model gives
	// [N,2P]: columns 2j and 2j+1 are p(y_j = 0) and p(y_j = 1) (so [N,2] for one label column). nil for
	// regression. (gp.Prediction.Probs, unchanged: labels are never standardised.)
	Probs *mat.Dense
}

// Predict returns the predictive distribution at x [N,D], given in the original units of the training data:
// x is standardised with f.Standardizer (when set), the model predicts through gp.Predictor (every family:
// exact GPs and SGPR from the training data they hold, SVGP through its layer and likelihood, deep GPs from
// o.Samples propagated samples) and the predictions are mapped back. Monte-Carlo draws come from o.Rand only
// (nil: a fresh rand.NewPCG(1, 2) at every call), so the same options give the same numbers, and a loaded model
// predicts bit for bit as the saved one did. o.Full and o.Draws are refused (their values are in the model's
// standardised units: call the model's Predict).
//
// Errors: a *ops.ShapeError when x's width is not the model's input dimension, or the standardizer's target
// width is not the model's output width; a *ops.NonFiniteError naming the row and column of the first NaN or
// ±Inf input; ErrNoTrainingData; an error for a model that is not a gp.Predictor; and the model's own
// prediction errors.
func (f *File) Predict(x *mat.Dense, o gp.PredictOptions) (*Prediction, error) {
	if f == nil || f.Model == nil {
		return nil, errors.New("modelfile: Predict: no model")
	}
	m, ok := f.Model.(gp.Predictor)
	if !ok {
		return nil, fmt.Errorf("modelfile: Predict: cannot predict with a %T (not a gp.Predictor)", f.Model)
	}
	if o.Full || o.Draws > 0 {
		return nil, fmt.Errorf("%w: modelfile: Predict gives marginals in original units (Full and Draws: call the model's Predict)", gp.ErrUnsupported)
	}
	if err := gp.CheckInputs("modelfile.Predict", x, m.InputDim()); err != nil {
		return nil, err
	}
	xs := mat.DenseCopyOf(x)
	if f.Standardizer != nil {
		var err error
		if xs, err = f.Standardizer.ApplyX(xs); err != nil {
			return nil, fmt.Errorf("modelfile: Predict: standardising the inputs: %w", err)
		}
	}
	p, err := m.Predict(xs, o)
	if err != nil {
		return nil, err
	}
	if p.Probs != nil {
		return &Prediction{Probs: p.Probs}, nil
	}
	mean, variance := p.YMean, p.YVar
	sd, err := f.unstandardize(mean, variance)
	if err != nil {
		return nil, err
	}
	return &Prediction{Mean: mean, Var: variance, Std: sd}, nil
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
