// Command classification trains a sparse variational GP classifier (Bernoulli likelihood, natural gradients on
// q(u), Adam on the rest) on a synthetic two-class problem with a circular boundary and prints its test accuracy.
//
//	go run ./examples/classification [-iters N]
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// circle draws n points uniform in [−2, 2]² labelled 1 inside the circle of radius 1.2.
func circle(rng *rand.Rand, n int) (*mat.Dense, *mat.Dense) {
	x, y := mat.NewDense(n, 2, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		a, b := 4*rng.Float64()-2, 4*rng.Float64()-2
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		if a*a+b*b < 1.44 {
			y.Set(i, 0, 1)
		}
	}
	return x, y
}

func main() {
	iters := flag.Int("iters", 500, "training steps")
	flag.Parse()
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := circle(rng, 2000)
	xTest, yTest := circle(rng, 500)
	n, _ := x.Dims()
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		log.Fatal(err)
	}
	z, err := gp.KMeans(x, 30, 25, rng) // inducing inputs
	if err != nil {
		log.Fatal(err)
	}
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: z}) // whitened by default
	if err != nil {
		log.Fatal(err)
	}
	lik, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{}) // labels in {0, 1}
	if err != nil {
		log.Fatal(err)
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: n})
	if err != nil {
		log.Fatal(err)
	}
	natgrad, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{layer.Q}, Gamma: 0.1})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := train.Train(model, x, y, rng, train.Config{Iters: *iters, BatchSize: 256, Hooks: []train.Hook{natgrad}}); err != nil {
		log.Fatal(err)
	}
	pred, err := model.Predict(xTest, gp.PredictOptions{}) // in chunks
	if err != nil {
		log.Fatal(err)
	}
	probs := pred.Probs // [N,2]: p(y=0), p(y=1)
	correct := 0
	for i := 0; i < 500; i++ {
		if (probs.At(i, 1) > 0.5) == (yTest.At(i, 0) == 1) {
			correct++
		}
	}
	fmt.Printf("test accuracy %.3f on 500 points (kernel %v)\n", float64(correct)/500, kern)
}
