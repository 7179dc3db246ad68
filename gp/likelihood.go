package gp

import "github.com/gpzoo/gpzoo/graph"

// Likelihood is an observation model p(y | f) for latent values f [N,L] and observations y [N,P].
// (For most likelihoods L = P; a multiclass likelihood has L = K classes and P = 1 label column.)
type Likelihood interface {
	// LatentDim returns L, the number of latent functions for P observed columns (error if P is unsupported).
	LatentDim(p int) (int, error)
	// VariationalExpectations returns, for each row n, E_{q(f_n)}[log p(y_n | f_n)] summed over the row's
	// outputs, where q(f_n) = Π_l N(fMean[n,l], fVar[n,l]): a vector [N]. Errors are recorded in the graph.
	VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node
	// PredictMeanVar returns the predictive mean and variance of y [n,P] (row-major) given latent marginals
	// fMean, fVar [n,L]. For classifiers the mean holds class probabilities (P = 1: p(y=1); multiclass: [n,K]).
	PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error)
	// PredictLogDensity returns log p(y_n) = log ∫ p(y_n | f) q(f_n) df for each row [n].
	PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error)
	// Params returns the likelihood's parameters (e.g. the Gaussian noise variance).
	Params() []*graph.Param
	// String names the likelihood and its parameters.
	String() string
}
