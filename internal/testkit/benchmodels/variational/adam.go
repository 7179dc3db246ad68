package variational

import (
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// adamStep compiles model on the batch x, y with an Adam update (learning rate 10⁻³) per step.
func adamStep(model gp.Model, x, y *mat.Dense) (*benchmodels.Step, error) {
	return benchmodels.NewStep(model, x, y, (&train.Adam{LR: 1e-3}).Step)
}

// gaussian is the benchmarks' likelihood: Gaussian with noise variance 0.1.
func gaussian() (*likelihoods.Gaussian, error) {
	return likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.1})
}
