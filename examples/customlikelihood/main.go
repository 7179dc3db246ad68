// Command customlikelihood adds a likelihood gpzoo does not have, from outside the library: a Laplace
// likelihood p(y | f) = exp(−|y − f|/b)/(2b) with a trainable scale b, defined in one file (laplace.go) with
// gpzoo's exported API only and registered in its init (a Spec kind, so that model files rebuild it, and a
// likelihood family, so that everything listing likelihoods by name offers it).
//
// The program builds a Gaussian and a Laplace likelihood by name through the registry, trains a sparse
// variational GP with each through the normal loop (train.Train) on data whose noise has heavy tails (20% of the
// points are gross outliers), and compares their test errors: the Gaussian likelihood pays (y − f)²/(2σ²) for
// an outlier, so the outliers pull its mean and inflate its noise variance, while the Laplace likelihood pays
// |y − f|/b and follows the bulk of the data. It then saves the Laplace model to a model file, loads it as a
// program that never saw the training code would (the registered kind rebuilds the likelihood), and checks that
// the loaded model predicts bit for bit what the trained one predicts.
//
//	go run ./examples/customlikelihood [-iters N] [-dir DIR]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	_ "github.com/gpzoo/gpzoo/gp/likelihoods" // registers the built-in likelihoods ("gaussian", …)
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

func main() {
	iters := flag.Int("iters", 2000, "training steps of each model")
	dir := flag.String("dir", "", "write the model file into this folder and keep it (default: a temporary folder, removed at exit)")
	flag.Parse()
	if err := run(os.Stdout, *iters, *dir); err != nil {
		log.Fatal(err)
	}
}

// The data: y = truth(x) + ε, x uniform on [−3, 3]; ε ~ N(0, noiseStd²) for most points and N(0, outlierStd²)
// for a fraction outlierFrac of them.
const (
	nTrain, nTest = 500, 200
	noiseStd      = 0.1
	outlierStd    = 3.0
	outlierFrac   = 0.2
	inducing      = 20
	batch         = 100
)

func truth(x float64) float64 { return math.Sin(2*x) + 0.3*x }

// sample draws n inputs and their noisy targets.
func sample(rng *rand.Rand, n int) (x, y *mat.Dense, f []float64) {
	x, y, f = mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil), make([]float64, n)
	for i := range f {
		xi := 6*rng.Float64() - 3
		eps := noiseStd * rng.NormFloat64()
		if rng.Float64() < outlierFrac {
			eps = outlierStd * rng.NormFloat64()
		}
		f[i] = truth(xi)
		x.Set(i, 0, xi)
		y.Set(i, 0, f[i]+eps)
	}
	return x, y, f
}

// run is the program: it writes what it shows to w and keeps the model file in dir (a temporary folder when
// dir is empty).
func run(w io.Writer, iters int, dir string) error {
	var names []string
	for _, f := range gp.LikelihoodFamilies() {
		names = append(names, f.Name)
	}
	fam, ok := gp.LookupLikelihood(FamilyLaplace)
	if !ok {
		return fmt.Errorf("%s is not registered", FamilyLaplace)
	}
	fmt.Fprintf(w, "registered likelihoods: %s\n  %s: %s\n", strings.Join(names, ", "), fam.Name, fam.Doc)

	rng := rand.New(rand.NewPCG(26, 5))
	x, y, _ := sample(rng, nTrain)
	xTest, yTest, fTest := sample(rng, nTest)
	z, err := gp.KMeans(x, inducing, 25, rng)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "data: y = sin(2x) + 0.3x + ε on x ∈ [−3, 3], %d training and %d test points; ε ~ N(0, %g²), but N(0, %g²) for %.0f%% of the points (outliers)\n",
		nTrain, nTest, noiseStd, outlierStd, 100*outlierFrac)
	fmt.Fprintf(w, "SVGP with %d inducing inputs, %d Adam steps on minibatches of %d, once per likelihood:\n", inducing, iters, batch)
	fmt.Fprintf(w, "  %-40s %10s %10s %18s\n", "likelihood (trained)", "RMSE vs f", "MAE vs y", "test log density")

	var rmse [2]float64
	var trained *models.SVGP
	for i, name := range []string{"gaussian", FamilyLaplace} {
		m, err := newSVGP(name, z)
		if err != nil {
			return err
		}
		// The same minibatches for both models.
		if _, err := train.Train(m, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: iters, BatchSize: batch, Optimizer: &train.Adam{LR: 0.02}}); err != nil {
			return fmt.Errorf("training with %s: %w", name, err)
		}
		p, err := predict(m, xTest, yTest)
		if err != nil {
			return err
		}
		var se, ae, ld float64
		for j := range fTest {
			se += (p.mean[j] - fTest[j]) * (p.mean[j] - fTest[j])
			ae += math.Abs(p.mean[j] - yTest.At(j, 0))
			ld += p.logDensity[j]
		}
		rmse[i] = math.Sqrt(se / nTest)
		fmt.Fprintf(w, "  %-40s %10.4f %10.4f %18.4f\n", m.Likelihood, rmse[i], ae/nTest, ld/nTest)
		trained = m
	}
	if ratio := rmse[0] / rmse[1]; ratio > 1.5 {
		fmt.Fprintf(w, "the Laplace fit is %.1f× closer to the noise-free function: an outlier costs it |y − f|/b, not (y − f)²/(2σ²),\n"+
			"so the outliers neither pull its mean nor inflate its noise as much as the Gaussian's\n", ratio)
	} else {
		fmt.Fprintf(w, "after %d steps the two fits are not yet apart (RMSE ratio %.2f; train longer with -iters)\n", iters, ratio)
	}

	if dir == "" {
		tmp, err := os.MkdirTemp("", "gpzoo-customlikelihood")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	path := filepath.Join(dir, "laplace.gpz")
	if err := modelfile.SaveFile(path, &modelfile.File{Model: trained, Meta: map[string]string{"example": "customlikelihood"}}); err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "saved the Laplace model: %s, %d bytes; its likelihood's kind: %s\n", filepath.Base(path), info.Size(), KindLaplace)

	file, err := modelfile.LoadFile(path, gp.BuildOptions{})
	if err != nil {
		return err
	}
	loaded, ok := file.Model.(*models.SVGP)
	if !ok {
		return fmt.Errorf("loaded a %T, want an SVGP", file.Model)
	}
	before, err := predict(trained, xTest, yTest)
	if err != nil {
		return err
	}
	after, err := predict(loaded, xTest, yTest)
	if err != nil {
		return err
	}
	same := before.equal(after)
	fmt.Fprintf(w, "loaded it back as %T with %v: predictions bit for bit identical: %v\n", loaded.Likelihood, loaded.Likelihood, same)
	if !same {
		return fmt.Errorf("the loaded model predicts differently")
	}
	return nil
}

// newSVGP returns a whitened SVGP with an SE kernel, inducing inputs z and the likelihood of the registered
// family name.
func newSVGP(name string, z *mat.Dense) (*models.SVGP, error) {
	fam, ok := gp.LookupLikelihood(name)
	if !ok {
		return nil, fmt.Errorf("no likelihood family %q", name)
	}
	lik, err := fam.New(gp.LikelihoodOptions{Outputs: 1})
	if err != nil {
		return nil, err
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		return nil, err
	}
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: mat.DenseCopyOf(z)})
	if err != nil {
		return nil, err
	}
	return models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: nTrain})
}

// prediction holds a model's predictions at test inputs.
type prediction struct {
	fMean, fVar, mean, variance, logDensity []float64
}

func (p prediction) equal(q prediction) bool {
	return slices.Equal(p.fMean, q.fMean) && slices.Equal(p.fVar, q.fVar) && slices.Equal(p.mean, q.mean) &&
		slices.Equal(p.variance, q.variance) && slices.Equal(p.logDensity, q.logDensity)
}

// predict returns m's latent marginals at x (the layer's Predict in a forward graph), the likelihood's
// predictive mean and variance there, and the predictive log density of y.
func predict(m *models.SVGP, x, y *mat.Dense) (prediction, error) {
	n, d := x.Dims()
	g := graph.New(graph.Options{})
	mean, variance := m.Layer.Predict(g.Input("x", n, d))
	prog, err := g.CompileForward(map[string]*graph.Node{"mean": mean, "var": variance})
	if err != nil {
		return prediction{}, err
	}
	defer prog.Close()
	if err := prog.Set("x", mat.DenseCopyOf(x).RawMatrix().Data); err != nil {
		return prediction{}, err
	}
	if err := prog.Run(); err != nil {
		return prediction{}, err
	}
	p := prediction{fMean: slices.Clone(prog.Output("mean")), fVar: slices.Clone(prog.Output("var"))}
	if p.mean, p.variance, err = m.Likelihood.PredictMeanVar(p.fMean, p.fVar, n); err != nil {
		return prediction{}, err
	}
	if p.logDensity, err = m.Likelihood.PredictLogDensity(p.fMean, p.fVar, mat.DenseCopyOf(y).RawMatrix().Data, n); err != nil {
		return prediction{}, err
	}
	return p, nil
}
