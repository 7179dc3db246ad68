package models_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// noisySine returns n inputs uniform on [0, 6] and targets sin(x) + N(0, 0.1²).
func noisySine(rng *rand.Rand, n int) (x, y *mat.Dense) {
	x, y = mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		v := 6 * rng.Float64()
		x.Set(i, 0, v)
		y.Set(i, 0, math.Sin(v)+0.1*rng.NormFloat64())
	}
	return x, y
}

// Train a sparse variational GP in Go: an SVGP layer (SE kernel, 20 k-means inducing inputs) and a Gaussian
// likelihood make the model, train.Train fits it with Adam on minibatches, Predict (gp.Predictor) predicts. The printed values
// are rounded so that the pure-Go and OpenBLAS builds agree.
func ExampleNewSVGP() {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := noisySine(rng, 500)
	z, err := gp.KMeans(x, 20, 25, rng)
	if err != nil {
		fmt.Println(err)
		return
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		fmt.Println(err)
		return
	}

	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: z})
	if err != nil {
		fmt.Println(err)
		return
	}
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.1})
	if err != nil {
		fmt.Println(err)
		return
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: 500})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := train.Train(model, x, y, rng, train.Config{Iters: 1000, BatchSize: 100}); err != nil {
		fmt.Println(err)
		return
	}
	pred, err := model.Predict(mat.NewDense(2, 1, []float64{1.5, 4.5}), gp.PredictOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	mean, variance := pred.YMean, pred.YVar // y's: the latent f's are pred.FMean, pred.FVar

	for i, v := range []float64{1.5, 4.5} {
		m, sd := mean.At(i, 0), math.Sqrt(variance.At(i, 0)) // sd includes the noise (0.1)
		fmt.Printf("y(%.1f) ≈ %.1f, sd %.1f; sin(%.1f) within 2 sd: %t\n", v, m, sd, v, math.Abs(m-math.Sin(v)) < 2*sd)
	}
	// Output:
	// y(1.5) ≈ 1.0, sd 0.1; sin(1.5) within 2 sd: true
	// y(4.5) ≈ -1.0, sd 0.1; sin(4.5) within 2 sd: true
}
