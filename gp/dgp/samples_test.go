package dgp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/models"
	"gonum.org/v1/gonum/mat"
)

// LayerSamples: with ε = 0 every layer's "sample" is the composition of the layers' means; with noise, many
// samples of the last layer average to the mixture mean of Predict and spread by its variance.
func TestLayerSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	x, _ := gptest.ToyRegression(rng, 12, 3, 1)
	ls := build(t, x, []int{2}, 1, 5, false, 7)
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.1), NumData: 12, Noise: dgp.ZeroNoise})
	if err != nil {
		t.Fatal(err)
	}
	zero, err := deep.LayerSamples(x, 2, nil, dgp.ZeroNoise)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := models.PredictLayer(ls[0], x, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := models.PredictLayer(ls[1], h, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 2; k++ {
		closeDense(t, "layer 0", zero[0][k], h, 1e-12)
		closeDense(t, "layer 1", zero[1][k], f, 1e-12)
	}
	const s = 4000
	samples, err := deep.LayerSamples(x, s, rand.New(rand.NewPCG(5, 5)), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := deep.Predict(x, gp.PredictOptions{Samples: 2000, Rand: rand.New(rand.NewPCG(6, 6))})
	if err != nil {
		t.Fatal(err)
	}
	mm, mv := p.FMean, p.FVar
	for i := 0; i < 12; i++ {
		sum, sq := 0.0, 0.0
		for k := 0; k < s; k++ {
			v := samples[1][k].At(i, 0)
			sum += v
			sq += v * v
		}
		mean := sum / s
		variance := sq/s - mean*mean
		if se := math.Sqrt(mv.At(i, 0) / s); math.Abs(mean-mm.At(i, 0)) > 6*se+1e-3 {
			t.Errorf("row %d: sample mean %.5f, mixture mean %.5f (se %.2g)", i, mean, mm.At(i, 0), se)
		}
		if math.Abs(variance-mv.At(i, 0)) > 0.15*mv.At(i, 0)+1e-6 {
			t.Errorf("row %d: sample variance %.5g, mixture variance %.5g", i, variance, mv.At(i, 0))
		}
	}
	if _, err := deep.LayerSamples(mat.NewDense(2, 2, nil), 1, rng, nil); err == nil {
		t.Error("wrong input width: no error")
	}
	if _, err := deep.LayerSamples(x, 1, nil, nil); err == nil {
		t.Error("no Rand and no Noise: no error")
	}
}
