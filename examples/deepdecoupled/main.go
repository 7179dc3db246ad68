// Command deepdecoupled stacks decoupled-basis layers into a doubly-stochastic deep GP (Havasi et al. 2018: the
// mean on Mα bases in the centred sparse-GP form μ_GPcent, the covariance in the S form on Mβ ≪ Mα bases) and
// fits it to a one-dimensional step, a function no stationary single-layer GP captures well: the first layer can
// warp the input so that the second sees a sharp change. dgp.Build creates the layers through a factory written
// here (fixed inner mean function, k-means bases, nearly deterministic inner layer). The program prints the test
// log predictive density of the S-sample predictive mixture and of its moment-matched Gaussian (near the step
// the mixture can be bimodal, which one Gaussian cannot be).
//
// With -plot FILE.png (or .svg) it draws 20 joint samples of each layer's output against the input
// (dgp.LayerSamples, plots.LayerSamples): the hidden layer's warping and the output layer's step.
//
//	go run ./examples/deepdecoupled [-iters N] [-plot FILE.png]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/plots"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// noiseStd is the targets' noise around the step y = ±1.
const noiseStd = 0.05

// step draws n inputs uniform on [−2, 2] and noisy targets of the unit step at 0.
func step(rng *rand.Rand, n int) (x, y *mat.Dense) {
	x, y = mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		v := 4*rng.Float64() - 2
		t := -1.0
		if v > 0 {
			t = 1
		}
		x.Set(i, 0, v)
		y.Set(i, 0, t+noiseStd*rng.NormFloat64())
	}
	return x, y
}

// Basis sizes of every layer: Mα mean bases, Mβ covariance bases.
const (
	meanBases = 50
	covBases  = 15
)

func main() {
	iters := flag.Int("iters", 2000, "training steps")
	plot := flag.String("plot", "", "draw per-layer samples to this .png or .svg file")
	flag.Parse()
	rng := rand.New(rand.NewPCG(11, 1))
	x, y := step(rng, 500)
	xTest, yTest := step(rng, 500)

	// One hidden layer of width 1: input → decoupled layer → decoupled layer → Gaussian likelihood.
	factory := func(s dgp.LayerSpec) (gp.Layer, error) {
		name := fmt.Sprintf("layer%d", s.Index)
		se, err := gp.NewSquaredExp(gp.KernelConfig{Name: name + ".se", InputDim: s.InputDim})
		if err != nil {
			return nil, err
		}
		kern, scale := gp.Kernel(se), 1.0
		if s.Inner { // white noise on the kernel and S ≈ 0: the inner layer starts as its (identity) mean function
			if kern, err = dgp.InnerKernel(se, name+".white"); err != nil {
				return nil, err
			}
			scale = dgp.InnerQScale
		}
		za, err := s.Inducing(meanBases)
		if err != nil {
			return nil, err
		}
		zb, err := s.Inducing(covBases)
		if err != nil {
			return nil, err
		}
		return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: kern, Zalpha: za, Zbeta: zb,
			OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS,
			LBScale: scale, SPrior: !s.Inner})
	}
	ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{1}, NewLayer: factory, Rand: rng})
	if err != nil {
		log.Fatal(err)
	}
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.01})
	if err != nil {
		log.Fatal(err)
	}
	// The graph draws the propagation noise from its own generator while it runs.
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: 500, Samples: 5, Rand: rand.New(rand.NewPCG(11, 2))})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("training a 2-layer decoupled deep GP (Mα=%d, Mβ=%d per layer, 5 samples) for %d steps on a noisy step\n",
		meanBases, covBases, *iters)
	res, err := train.Train(deep, x, y, rng, train.Config{Iters: *iters, BatchSize: 250, Optimizer: &train.Adam{LR: 0.01}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("trained in %.1fs; noise std %.3f (true %.2f)\n", res.Seconds, math.Sqrt(lik.Variance()), noiseStd)

	lds, err := deep.LogDensity(xTest, yTest, gp.PredictOptions{Samples: 100, Rand: rand.New(rand.NewPCG(11, 3))})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("test log predictive density per point (500 points, 100 propagated samples):\n")
	fmt.Printf("  mixture of the samples       %.3f\n", stat.Mean(lds.Mixture, nil))
	fmt.Printf("  moment-matched Gaussian      %.3f\n", stat.Mean(lds.MomentMatched, nil))
	if *plot != "" {
		const points, samples = 200, 20
		grid := mat.NewDense(points, 1, nil)
		xs := make([]float64, points)
		for i := range xs {
			xs[i] = mat.Min(xTest) + (mat.Max(xTest)-mat.Min(xTest))*float64(i)/(points-1)
			grid.Set(i, 0, xs[i])
		}
		draws, err := deep.LayerSamples(grid, samples, rand.New(rand.NewPCG(11, 4)), nil)
		if err != nil {
			log.Fatal(err)
		}
		perLayer := make([][][]float64, len(draws)) // first output of each layer: [layer][sample][point]
		for l, ds := range draws {
			for _, d := range ds {
				perLayer[l] = append(perLayer[l], mat.Col(nil, 0, d))
			}
		}
		if err := plots.LayerSamples(*plot, "decoupled deep GP: samples of each layer", xs, perLayer); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", *plot)
	}
}
