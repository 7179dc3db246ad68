package models_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
)

// With Z = X and a Gaussian likelihood, one natural-gradient step with γ = 1 from q = prior lands on the optimal
// q: the ELBO equals the exact log marginal likelihood (relative 1e-6) and the predictions equal the exact GP's,
// whitened and unwhitened, and from a tiny initial factor (GPflow's test_natural_gradient cases).
func TestNatGradOneStepEqualsExactGP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		unwhitened bool
		scale      float64
	}{{"whitened", false, 1}, {"unwhitened", true, 1}, {"tiny-qsqrt", false, 1e-3}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(6, 6))
			x, y := toy(rng, 20, 2, 2)
			k := kernel(t, 2)
			const noise = 0.08
			l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: x, OutputDim: 2, Jitter: 1e-12,
				Unwhitened: c.unwhitened, QSqrtScale: c.scale})
			if err != nil {
				t.Fatal(err)
			}
			lik := gaussian(t, noise)
			m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: 20})
			if err != nil {
				t.Fatal(err)
			}
			ng, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{l.Q}, Gamma: 1})
			if err != nil {
				t.Fatal(err)
			}
			g := graph.New(graph.Options{})
			xn, yn := g.Input("x", 20, 2), g.Input("y", 20, 2)
			prog, err := g.Compile(m.Loss(xn, yn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			if err := prog.Set("x", x.RawMatrix().Data); err != nil {
				t.Fatal(err)
			}
			if err := prog.Set("y", y.RawMatrix().Data); err != nil {
				t.Fatal(err)
			}
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			if err := ng.AfterBackward(&train.Step{Index: 0, Loss: prog.Loss(), Grads: prog, Program: prog}); err != nil {
				t.Fatal(err)
			}
			elbo := value(t, m.ELBO, x, y)
			lml := exactLML(t, k, noise, x, y) // two outputs: the exact GP sums their log likelihoods
			if math.Abs(elbo-lml) > 1e-6*math.Abs(lml) {
				t.Errorf("after one natural step: ELBO %.10g, exact log p(y) %.10g", elbo, lml)
			}
			xs, _ := toy(rng, 6, 2, 1)
			got, err := m.Predict(xs, gp.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fm, fv := got.FMean, got.FVar
			gpr, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: noise, X: x, Y: y})
			if err != nil {
				t.Fatal(err)
			}
			want, err := gpr.Predict(xs, gp.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 6; i++ {
				for p := 0; p < 2; p++ {
					if math.Abs(fm.At(i, p)-want.FMean.At(i, p)) > 1e-5 || math.Abs(fv.At(i, p)-want.FVar.At(i, p)) > 1e-5 {
						t.Errorf("row %d output %d: SVGP %v ± %v, exact %v ± %v", i, p, fm.At(i, p), fv.At(i, p), want.FMean.At(i, p), want.FVar.At(i, p))
					}
				}
			}
		})
	}
}
