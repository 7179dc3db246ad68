package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// noiseOnlyGPR returns a GPR on 30 noisy points of sin(x) whose only trainable Param is the noise variance.
func noiseOnlyGPR(t *testing.T) (*gp.GPR, *mat.Dense, *mat.Dense) {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 2))
	n := 30
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 5*float64(i)/float64(n-1))
		y.Set(i, 0, math.Sin(x.At(i, 0))+0.3*rng.NormFloat64())
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range k.Params() {
		p.SetTrainable(false)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k})
	if err != nil {
		t.Fatal(err)
	}
	return m, x, y
}

// TestMAPMovesTowardThePrior: with a log-normal prior on the noise variance centred at ten times its maximum
// likelihood estimate, the MAP estimate (L-BFGS, and full-batch Adam to the same point) lies strictly between the
// two, where the log posterior log p(y | σ²) + log p(σ²) (evaluated apart from the training graph) is stationary;
// a start outside a prior's support is a *graph.SupportError.
func TestMAPMovesTowardThePrior(t *testing.T) {
	t.Parallel()
	ml, x, y := noiseOnlyGPR(t)
	if _, err := train.TrainLBFGS(ml, x, y, train.LBFGSConfig{Iters: 200}); err != nil {
		t.Fatal(err)
	}
	s2ML := ml.NoiseVariance()
	prior, err := gp.NewLogNormalPrior(math.Log(10*s2ML), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	logPost := func(m *gp.GPR, s2 float64) float64 {
		if err := m.Noise.Set([]float64{s2}); err != nil {
			t.Fatal(err)
		}
		lml, err := m.LogMarginalLikelihoodValue(x, y, graph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lp, _ := prior.LogDensity(s2)
		return lml + lp
	}
	fit := func(adam bool) float64 {
		m, _, _ := noiseOnlyGPR(t)
		if err := m.Noise.SetPrior(prior); err != nil {
			t.Fatal(err)
		}
		if adam {
			_, err = train.Train(m, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: 3000, Optimizer: &train.Adam{LR: 0.02}})
		} else {
			_, err = train.TrainLBFGS(m, x, y, train.LBFGSConfig{Iters: 200})
		}
		if err != nil {
			t.Fatal(err)
		}
		s2 := m.NoiseVariance()
		if !(s2 > 1.2*s2ML && s2 < 10*s2ML/1.2) {
			t.Errorf("adam %t: MAP noise variance %.5g, ML %.5g, prior median %.5g: want strictly between", adam, s2, s2ML, 10*s2ML)
		}
		f0 := logPost(m, s2)
		for _, h := range []float64{-1e-3, 1e-3} {
			if f := logPost(m, s2*(1+h)); f > f0+1e-9 {
				t.Errorf("adam %t: log posterior %.12g at %.6g exceeds %.12g at the MAP %.6g", adam, f, s2*(1+h), f0, s2)
			}
		}
		return s2
	}
	lb, ad := fit(false), fit(true)
	t.Logf("noise variance: ML %.5g, prior median %.5g, MAP %.5g (L-BFGS), %.5g (Adam)", s2ML, 10*s2ML, lb, ad)
	if math.Abs(lb-ad) > 1e-3*lb {
		t.Errorf("MAP by L-BFGS %.8g, by Adam %.8g", lb, ad)
	}

	m, _, _ := noiseOnlyGPR(t)
	u, err := gp.NewUniformPrior(5, 6)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Noise.SetPrior(u); err != nil {
		t.Fatal(err)
	}
	var se *graph.SupportError
	if _, err := train.TrainLBFGS(m, x, y, train.LBFGSConfig{Iters: 5}); !errors.As(err, &se) || se.Param != "likelihood.variance" {
		t.Errorf("start outside the support: %v, want a *graph.SupportError", err)
	}
	if _, err := train.Train(m, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: 5}); !errors.As(err, &se) {
		t.Errorf("Train from outside the support: %v, want a *graph.SupportError", err)
	}
}
