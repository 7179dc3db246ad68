package serve

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/mcmc"
	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

// TestInferPosterior: a NUTS posterior over a GPR's hyperparameters (a mixture over draws, package gp/bayes) is
// served like any model: its mean and variance, its full covariance and joint samples are the model file's bits.
func TestInferPosterior(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	n := 25
	x, y := mat.NewDense(n, 2, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		a, b := 2*rng.Float64()-1, 2*rng.Float64()-1
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y.Set(i, 0, math.Sin(3*a)+b+0.1*rng.NormFloat64())
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	var rules []gp.PriorRule
	for _, s := range []string{"lengthscale=lognormal(0,1)", "variance=lognormal(0,1)", "noise=lognormal(-2,1)"} {
		r, err := gp.ParsePriorRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	if _, err := gp.AssignPriors(m.Params(), rules); err != nil {
		t.Fatal(err)
	}
	res, err := bayes.Sample(m, x, y, bayes.Config{Chains: 2, Seed: 2, Keep: 8, NUTS: mcmc.Options{Warmup: 100, Samples: 50}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "posterior.gpz")
	if err := modelfile.SaveFile(path, &modelfile.File{Model: res.Posterior}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, Config{MaxDelay: 1}, named(t, "post", path))
	rows := testRows(4, 3)
	res1 := ts.infer(t, "post", matrixRequest(rows, nil))
	want := direct(t, path, rows, modelfile.PredictOptions{})
	if o := output(t, res1, "mean"); !sameBits(o.Data, flat(want.Mean)) {
		t.Errorf("mean %v, want %v", o.Data, flat(want.Mean))
	}
	if o := output(t, res1, "variance"); !sameBits(o.Data, flat(want.Var)) {
		t.Errorf("variance %v, want %v", o.Data, flat(want.Var))
	}
	res2 := ts.infer(t, "post", matrixRequest(rows, oip.Parameters{"full_cov": true, "samples": json.Number("2"), "seed": json.Number("5")}))
	want2 := direct(t, path, rows, modelfile.PredictOptions{FullCov: true, Draws: 2, Seed: 5})
	var cov, draws []float64
	for _, c := range want2.Cov {
		cov = append(cov, flat(mat.DenseCopyOf(c))...)
	}
	for _, d := range want2.Draws {
		draws = append(draws, flat(d)...)
	}
	if o := output(t, res2, "covariance"); !sameBits(o.Data, cov) {
		t.Error("the served covariance differs from the model file's")
	}
	if o := output(t, res2, "samples"); !sameBits(o.Data, draws) {
		t.Error("the served samples differ from the model file's")
	}
}
