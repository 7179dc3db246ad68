package variational

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/internal/benchmodels"
)

// The deep-GP benchmark's layer families.
const (
	DGPCoupled   = "coupled-M200"          // coupled SVGP layers, M = 200 (the configuration)
	DGPDecoupled = "decoupled-Ma500-Mb100" // decoupled layers (μ_GPcent, S-form), Ma = 500, Mb = 100 (Havasi et al.)
)

// DGPFamilies are the layer families DGP builds, in the benchmark's order.
var DGPFamilies = []string{DGPCoupled, DGPDecoupled}

// The deep-GP benchmark's shape: input dimension, hidden width, minibatch, samples, inducing inputs of the
// coupled layers and mean and covariance bases of the decoupled ones.
const (
	dgpDim, dgpWidth, dgpBatch, dgpSamples = 8, 8, 1024, 1
	dgpM, dgpMa, dgpMb                     = 200, 500, 100
)

// DGP returns one training step (sampled forward pass, backward pass, Adam) of a 2-layer deep GP on
// ToyRegression data with D = 8: hidden width 8, minibatch 1024, S = 1, inner layers with a white-noise kernel
// term and dgp.Build's mean functions and k-means inducing inputs, layers of the given family (DGPFamilies).
// Its Flops are DGPFlops(family).
func DGP(family string) (*benchmodels.Step, error) {
	const d, batch = dgpDim, dgpBatch
	if family != DGPCoupled && family != DGPDecoupled {
		return nil, fmt.Errorf("variational: unknown deep-GP family %q (want %s or %s)", family, DGPCoupled, DGPDecoupled)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	x, y := benchmodels.ToyRegression(rng, batch, d, 1)
	ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{dgpWidth}, Rand: rng, KMeansIters: 3,
		NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
			k, err := benchmodels.ARDKernel(s.InputDim)
			if err != nil {
				return nil, err
			}
			if s.Inner {
				if k, err = dgp.InnerKernel(k, fmt.Sprint("white", s.Index)); err != nil {
					return nil, err
				}
			}
			name := fmt.Sprint("layer", s.Index)
			if family == DGPCoupled {
				z, err := s.Inducing(dgpM)
				if err != nil {
					return nil, err
				}
				return layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: k, Z: z, OutputDim: s.OutputDim, Mean: s.Mean})
			}
			za, err := s.Inducing(dgpMa)
			if err != nil {
				return nil, err
			}
			zb, err := s.Inducing(dgpMb)
			if err != nil {
				return nil, err
			}
			return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: k, Zalpha: za, Zbeta: zb,
				OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS})
		}})
	if err != nil {
		return nil, err
	}
	lik, err := gaussian()
	if err != nil {
		return nil, err
	}
	m, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: 10 * batch, Samples: dgpSamples, Rand: rand.New(rand.NewPCG(3, 3))})
	if err != nil {
		return nil, err
	}
	s, err := adamStep(m, x, y)
	if err != nil {
		return nil, err
	}
	s.Flops = DGPFlops(family)
	return s, nil
}
