package gp

import (
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// Likelihood is an observation model p(y | f) for latent values f [N,L] and observations y [N,P].
// (For most likelihoods L = P; a multiclass likelihood has L = K classes and P = 1 label column.)
type Likelihood interface {
	// LatentDim returns L, the number of latent functions for P observed columns (error if P is unsupported).
	LatentDim(p int) (int, error)
	// VariationalExpectations returns, for each row n, E_{q(f_n)}[log p(y_n | f_n)] summed over the row's
	// outputs, where q(f_n) = Π_l N(fMean[n,l], fVar[n,l]): a vector [N]. Errors are recorded in the graph.
	VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node
	// PredictMeanVar returns the predictive mean and variance of y [n,Y] (row-major) given latent marginals
	// fMean, fVar [n,L], Y = PredictiveDim(lik, L): the P target columns (P = L but for a PredictiveDimer such as
	// the heteroscedastic Gaussian, L = 2P); for classifiers the mean holds class probabilities (Bernoulli: p(y=1)
	// per label column; multiclass: [n,K], Y = L = K).
	PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error)
	// PredictLogDensity returns log p(y_n) = log ∫ p(y_n | f) q(f_n) df for each row [n].
	PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error)
	// Params returns the likelihood's parameters (e.g. the Gaussian noise variance).
	Params() []*graph.Param
	// String names the likelihood and its parameters.
	String() string
}

// PredictiveDimer is implemented by a likelihood whose predictive distribution is not one column per latent
// function: the heteroscedastic Gaussian's 2P latents (a mean and a log noise variance per target column) give
// P columns of y. Its latent columns 0 … Y−1 are then the locations of the Y predictive columns (in the targets'
// units), the others latents of its own (in units of their own).
type PredictiveDimer interface {
	// PredictiveDim returns Y, the width of PredictMeanVar's mean and variance (and of PredictLogDensity's y)
	// for l latent columns; an error for an l the likelihood cannot take.
	PredictiveDim(l int) (int, error)
}

// PredictiveDim returns Y, the width of lik's predictive mean and variance (PredictMeanVar; a Prediction's YMean
// and YVar) for l latent columns: lik.PredictiveDim(l) for a PredictiveDimer, else l — one predictive column per
// latent function: the P target columns of the Gaussian, Student-t, Poisson and Bernoulli likelihoods (P = L),
// the K class probabilities of the multiclass ones (robust-max, softmax: L = K for one label column). Errors: a
// *ops.ShapeError for l < 1 or a nil lik, the PredictiveDimer's own.
func PredictiveDim(lik Likelihood, l int) (int, error) {
	if lik == nil || l < 1 {
		return 0, &ops.ShapeError{Op: "gp.PredictiveDim", Want: "a likelihood and L ≥ 1 latent columns", Got: fmt.Sprintf("%v, L = %d", lik, l)}
	}
	if pd, ok := lik.(PredictiveDimer); ok {
		return pd.PredictiveDim(l)
	}
	return l, nil
}

// LikelihoodFamilyOf returns the registered family of lik (RegisterLikelihood): the one whose Kind is the kind
// of lik's Spec, the first by name if several share it; false when lik describes no Spec or no family has its
// kind. Callers learn from it what the targets are (Classes, RawTargets) without knowing the likelihood's type.
func LikelihoodFamilyOf(lik Likelihood) (LikelihoodFamily, bool) {
	d, ok := lik.(Describer)
	if !ok {
		return LikelihoodFamily{}, false
	}
	s, err := d.Spec()
	if err != nil {
		return LikelihoodFamily{}, false
	}
	for _, f := range LikelihoodFamilies() { // by name: the first of families sharing a kind
		if f.Kind == s.Kind {
			return f, true
		}
	}
	return LikelihoodFamily{}, false
}
