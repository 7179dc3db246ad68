package dgp_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/train"
)

// BenchmarkDGPStep times one training step (sampled forward pass, backward pass, Adam) of a 2-layer DGP on
// 8-dimensional inputs: hidden width 8, minibatch 1024, S = 1, coupled layers with M = 200 (the issue's
// configuration) and decoupled layers (μ_GPcent, S-form) with Ma = 500, Mb = 100 (Havasi et al.'s sizes).
func BenchmarkDGPStep(b *testing.B) {
	const d, batch = 8, 1024
	for _, fam := range []string{"coupled-M200", "decoupled-Ma500-Mb100"} {
		b.Run(fam, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(2, 2))
			x, y := gptest.ToyRegression(rng, batch, d, 1)
			ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{8}, Rand: rng, KMeansIters: 3,
				NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
					k := gp.Kernel(gptest.ARDKernel(b, s.InputDim))
					if s.Inner {
						var err error
						if k, err = dgp.InnerKernel(k, fmt.Sprint("white", s.Index)); err != nil {
							return nil, err
						}
					}
					name := fmt.Sprint("layer", s.Index)
					if fam == "coupled-M200" {
						z, err := s.Inducing(200)
						if err != nil {
							return nil, err
						}
						return layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: k, Z: z, OutputDim: s.OutputDim, Mean: s.Mean})
					}
					za, err := s.Inducing(500)
					if err != nil {
						return nil, err
					}
					zb, err := s.Inducing(100)
					if err != nil {
						return nil, err
					}
					return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: k, Zalpha: za, Zbeta: zb,
						OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS})
				}})
			if err != nil {
				b.Fatal(err)
			}
			m, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(b, 0.1), NumData: 10 * batch, Rand: rand.New(rand.NewPCG(3, 3))})
			if err != nil {
				b.Fatal(err)
			}
			gptest.BenchStep(b, m, x, y, (&train.Adam{LR: 1e-3}).Step)
		})
	}
}
