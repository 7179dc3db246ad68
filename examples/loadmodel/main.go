// Command loadmodel shows the model-file round trip: it trains a sparse variational GP on a 1-D toy problem,
// saves it with gp/modelfile (format version, the model's structure, every parameter's exact bits, the data
// standardisation and a checksum), loads it back as a program that never saw the training code would, and
// checks that the loaded model predicts bit for bit what the trained one predicts. With -plot FILE.png (or
// .svg) it draws the predictive mean ± 2σ with the data and the inducing inputs (package plots).
//
//	go run ./examples/loadmodel [-iters N] [-plot FILE.png]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/plots"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

func main() {
	iters := flag.Int("iters", 1500, "training steps")
	plot := flag.String("plot", "", "write the predictive plot to this .png or .svg file")
	flag.Parse()

	// Data in original units: y = 20 + 5 sin(x) + noise, x in [0, 10] (the model file keeps the standardisation).
	rng := rand.New(rand.NewPCG(7, 7))
	n := 400
	raw := &datasets.Dataset{X: mat.NewDense(n, 1, nil), Y: mat.NewDense(n, 1, nil)}
	for i := 0; i < n; i++ {
		x := 10 * rng.Float64()
		raw.X.Set(i, 0, x)
		raw.Y.Set(i, 0, 20+5*math.Sin(x)+0.5*rng.NormFloat64())
	}
	std, err := datasets.FitStandardizer(raw, true)
	check(err)
	d, err := std.Apply(raw)
	check(err)

	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	check(err)
	z, err := gp.KMeans(d.X, 15, 25, rng)
	check(err)
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: z})
	check(err)
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{})
	check(err)
	model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: n})
	check(err)
	_, err = train.Train(model, d.X, d.Y, rng, train.Config{Iters: *iters, BatchSize: 100, Optimizer: &train.Adam{LR: 0.02}})
	check(err)

	dir, err := os.MkdirTemp("", "gpzoo-loadmodel")
	check(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sine.gpz")
	trained := &modelfile.File{Model: model, Standardizer: std, Meta: map[string]string{"example": "loadmodel"}}
	check(modelfile.SaveFile(path, trained))
	info, err := os.Stat(path)
	check(err)
	fmt.Printf("trained an SVGP (M=15) for %d steps and saved it: %s, %d bytes (gpzoo reads model-file versions ≤ %d)\n", *iters, filepath.Base(path), info.Size(), modelfile.FormatVersion)

	loaded, err := modelfile.LoadFile(path, gp.BuildOptions{})
	check(err)
	grid := mat.NewDense(101, 1, nil)
	for i := 0; i <= 100; i++ {
		grid.Set(i, 0, 0.1*float64(i))
	}
	before, err := trained.Predict(grid, modelfile.PredictOptions{})
	check(err)
	after, err := loaded.Predict(grid, modelfile.PredictOptions{})
	check(err)
	same := mat.Equal(before.Mean, after.Mean) && mat.Equal(before.Var, after.Var)
	fmt.Printf("loaded it back (meta %v): predictions bit for bit identical: %v\n", loaded.Meta["example"], same)
	for _, x := range []float64{2.5, 5, 7.5} {
		i := int(math.Round(10 * x))
		fmt.Printf("  y(%.1f) ≈ %.3f ± %.3f (noise-free truth %.3f)\n", x, after.Mean.At(i, 0), 2*math.Sqrt(after.Var.At(i, 0)), 20+5*math.Sin(x))
	}
	if !same {
		log.Fatal("the loaded model predicts differently")
	}
	if *plot != "" {
		xs, mean, sd := make([]float64, 101), make([]float64, 101), make([]float64, 101)
		for i := range xs {
			xs[i], mean[i], sd[i] = grid.At(i, 0), after.Mean.At(i, 0), math.Sqrt(after.Var.At(i, 0))
		}
		zs := make([]float64, 15)
		for i := range zs {
			zs[i] = layer.Z.Value()[i]*std.XStd[0] + std.XMean[0] // back to original units
		}
		check(plots.Predictive1D(*plot, "SVGP on a sine, loaded from its model file", xs, mean, sd, mat.Col(nil, 0, raw.X), mat.Col(nil, 0, raw.Y), zs))
		fmt.Println("wrote", *plot)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
