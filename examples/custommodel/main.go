// Command custommodel builds a model in Go code instead of picking a zoo entry: a composite kernel
// (squared-exponential × periodic + linear) inside a sparse variational GP layer with a Gaussian likelihood,
// trained by train.Train with an evaluation callback that reports the test RMSE as training goes. The data are a
// noisy periodic signal of period 1.3 on a linear trend; the program prints the test RMSE during training and
// the kernel it learned (the period should come out near 1.3).
//
//	go run ./examples/custommodel [-iters N]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// truePeriod, trueSlope and noiseStd generate the data: y = sin(2πx/truePeriod)·exp(−x/20) + trueSlope·x + ε.
const (
	truePeriod = 1.3
	trueSlope  = 0.3
	noiseStd   = 0.1
)

// signal draws n inputs uniform on [0, 10] and their noisy targets.
func signal(rng *rand.Rand, n int) (x, y *mat.Dense) {
	x, y = mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		v := 10 * rng.Float64()
		x.Set(i, 0, v)
		y.Set(i, 0, math.Sin(2*math.Pi*v/truePeriod)*math.Exp(-v/20)+trueSlope*v+noiseStd*rng.NormFloat64())
	}
	return x, y
}

func main() {
	iters := flag.Int("iters", 1500, "training steps")
	flag.Parse()
	rng := rand.New(rand.NewPCG(7, 1))
	x, y := signal(rng, 1000)
	xTest, yTest := signal(rng, 300)

	// The kernel: a locally periodic part (SE × periodic, the SE letting the oscillation change slowly) plus a
	// linear part for the trend. Each factory call gets a name so the hyperparameters are told apart.
	se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "envelope", InputDim: 1, Lengthscales: []float64{5}})
	if err != nil {
		log.Fatal(err)
	}
	per, err := gp.NewPeriodic(gp.KernelConfig{Name: "periodic", InputDim: 1, Period: 1.2, Lengthscales: []float64{1}})
	if err != nil {
		log.Fatal(err)
	}
	lin, err := gp.NewLinear(gp.KernelConfig{Name: "trend", InputDim: 1, Variance: 0.1})
	if err != nil {
		log.Fatal(err)
	}
	locallyPeriodic, err := gp.NewProduct(se, per)
	if err != nil {
		log.Fatal(err)
	}
	kern, err := gp.NewSum(locallyPeriodic, lin)
	if err != nil {
		log.Fatal(err)
	}

	// The model: an SVGP layer on 40 k-means inducing inputs and a Gaussian likelihood.
	z, err := gp.KMeans(x, 40, 25, rng)
	if err != nil {
		log.Fatal(err)
	}
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: z})
	if err != nil {
		log.Fatal(err)
	}
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.1})
	if err != nil {
		log.Fatal(err)
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: 1000})
	if err != nil {
		log.Fatal(err)
	}

	// The loop: Adam on minibatches of 200, with an evaluation every tenth of the run.
	eval := func(step int) (map[string]float64, error) {
		pred, err := model.Predict(xTest, gp.PredictOptions{})
		if err != nil {
			return nil, err
		}
		mean := pred.YMean
		rmse := 0.0
		for i := 0; i < 300; i++ {
			d := mean.At(i, 0) - yTest.At(i, 0)
			rmse += d * d
		}
		rmse = math.Sqrt(rmse / 300)
		fmt.Printf("  step %5d: test RMSE %.4f\n", step, rmse)
		return map[string]float64{"rmse": rmse}, nil
	}
	fmt.Printf("training SVGP (M=40) with kernel SE×Periodic + Linear for %d steps (noise std %.2f: the best RMSE possible)\n", *iters, noiseStd)
	res, err := train.Train(model, x, y, rng, train.Config{Iters: *iters, BatchSize: 200, Optimizer: &train.Adam{LR: 0.01},
		EvalEvery: max(1, *iters/10), Eval: eval})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("trained in %.1fs; ELBO per point %.4f\n", res.Seconds, -res.FinalLoss()/1000)
	fmt.Printf("learned period %.3f (true %.1f), noise std %.3f (true %.2f)\n", per.Extra.Value()[0], truePeriod,
		math.Sqrt(lik.Variance()), noiseStd)
	fmt.Printf("kernel: (%v × %v) + %v\n", se, per, lin)
}
