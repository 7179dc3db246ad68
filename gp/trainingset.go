package gp

import (
	"fmt"

	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// TrainingSet holds the training data x [N,D] and y [N,P] a model's predictions condition on: the DataHolder
// plumbing of GPR and models.SGPR. The zero value holds none.
type TrainingSet struct {
	x, y *mat.Dense
}

// Data returns the data held (nil, nil when unset).
func (t *TrainingSet) Data() (x, y *mat.Dense) { return t.x, t.y }

// Set copies x [N,d] and y [N,P] in after CheckTrainingData(op, x, y, d); both nil unset them.
func (t *TrainingSet) Set(op string, x, y *mat.Dense, d int) error {
	if x == nil && y == nil {
		t.x, t.y = nil, nil
		return nil
	}
	if _, _, err := CheckTrainingData(op, x, y, d); err != nil {
		return err
	}
	t.x, t.y = mat.DenseCopyOf(x), mat.DenseCopyOf(y)
	return nil
}

// OutputDim returns P, the width of the targets held (mean's width without data; 0 without either).
func (t *TrainingSet) OutputDim(mean MeanFunction) int {
	switch {
	case t.y != nil:
		_, p := t.y.Dims()
		return p
	case mean != nil:
		return mean.OutputDim()
	}
	return 0
}

// CheckTrainingData returns the sizes of training data x [n,d] and y [n,p], or an error naming op: one wrapping
// ErrConfig for nil data, a *ops.ShapeError for other shapes, a *ops.NonFiniteError for NaN or ±Inf.
func CheckTrainingData(op string, x, y *mat.Dense, d int) (n, p int, err error) {
	if x == nil || y == nil {
		return 0, 0, configErr("%s: nil data (training inputs and targets must be both set or both nil)", op)
	}
	n, dx := x.Dims()
	ny, p := y.Dims()
	if ny != n {
		return 0, 0, &ops.ShapeError{Op: op, Want: "x and y with the same number of rows", Got: fmt.Sprintf("%d and %d", n, ny)}
	}
	if dx != d {
		return 0, 0, &ops.ShapeError{Op: op, Want: fmt.Sprintf("x with %d columns", d), Got: fmt.Sprint(dx)}
	}
	if err := ops.CheckFinite(op+" inputs", x.RawMatrix().Data, d); err != nil {
		return 0, 0, err
	}
	if err := ops.CheckFinite(op+" targets", y.RawMatrix().Data, p); err != nil {
		return 0, 0, err
	}
	return n, p, nil
}

// GaussianPrediction returns the Prediction of a model with Gaussian noise of variance noise whose P latent
// outputs share their variances latent [Ns] and, when o asks for a full covariance or joint draws, the covariance
// cov returns (called only then): FMean = mean [Ns,P], FVar, YMean = mean, YVar = FVar + noise, FCov and Draws
// as o asks. op names the caller in DrawJoint's errors. GPR's and models.SGPR's Predict end here.
func GaussianPrediction(op string, mean *mat.Dense, latent []float64, noise float64, o PredictOptions, cov func() (*mat.SymDense, error)) (*Prediction, error) {
	ns, p := mean.Dims()
	out := &Prediction{FMean: mean, FVar: mat.NewDense(ns, p, nil), YMean: mat.DenseCopyOf(mean), YVar: mat.NewDense(ns, p, nil)}
	for i := 0; i < ns; i++ {
		fv, yv := out.FVar.RawRowView(i), out.YVar.RawRowView(i)
		for j := range fv {
			fv[j], yv[j] = latent[i], latent[i]+noise
		}
	}
	if o.OutputCov { // the outputs are independent
		out.OutputCov = DiagonalOutputCov(out.FVar)
	}
	if !o.Full && o.Draws == 0 {
		return out, nil
	}
	c, err := cov()
	if err != nil {
		return nil, err
	}
	covs := make([]*mat.SymDense, p)
	for j := range covs {
		covs[j] = c
	}
	if o.Full {
		out.FCov = covs
	}
	if o.Draws > 0 {
		if out.Draws, err = DrawJoint(mean, covs, o.Draws, o.Rng(), o.Graph.Jitter); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	return out, nil
}
