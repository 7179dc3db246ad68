package variational

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
)

// SVGPDim is the input dimension of the SVGP benchmarks (kin8nm's).
const SVGPDim = 8

// SVGP returns one SVGP training step: M inducing inputs uniform in [−2, 2)^8, minibatch B of ToyRegression
// data with D = 8 (kin8nm's shape), one output, Gaussian likelihood, whitened coupled layer; forward, backward
// and an Adam update. Its Flops are SVGPFlops(M, B).
func SVGP(m, batch int) (*benchmodels.Step, error) {
	const d = SVGPDim
	rng := rand.New(rand.NewPCG(1, 1))
	k, err := benchmodels.ARDKernel(d)
	if err != nil {
		return nil, err
	}
	l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: benchmodels.RandomBases(rng, m, d)})
	if err != nil {
		return nil, err
	}
	s, err := LayerStep(l, batch)
	if err != nil {
		return nil, err
	}
	s.Flops = SVGPFlops(m, batch)
	return s, nil
}

// LayerStep returns one training step (forward, backward, Adam) of an SVGP model built around layer l (D = 8
// inputs, one output) on a minibatch of ToyRegression data with Gaussian likelihood, the data set 10 batches
// long.
func LayerStep(l gp.Layer, batch int) (*benchmodels.Step, error) {
	rng := rand.New(rand.NewPCG(2, 2))
	x, y := benchmodels.ToyRegression(rng, batch, SVGPDim, 1)
	lik, err := gaussian()
	if err != nil {
		return nil, err
	}
	m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: 10 * batch})
	if err != nil {
		return nil, err
	}
	return adamStep(m, x, y)
}
