package bayes_test

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/mcmc"
	"gonum.org/v1/gonum/mat"
)

// shortRun samples the toy GPR briefly: 2 chains, 10 draws kept.
func shortRun(t *testing.T) (*bayes.Result, *gp.GPR, *mat.Dense, *mat.Dense) {
	t.Helper()
	m, x, y := toyGPR(t, 15, 3)
	res, err := bayes.Sample(m, x, y, bayes.Config{Chains: 2, Seed: 1, Keep: 10, NUTS: mcmc.Options{Warmup: 150, Samples: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return res, m, x, y
}

// TestPosteriorIsTheMixtureOfDraws: the Posterior's prediction is the equal-weight mixture of the GPR's
// predictions with its Params at each kept draw (computed apart: means averaged, variances by the law of total
// variance, to 1e-12), one component per draw; it passes the predictor conformance suite, and its full covariance
// has the mixture's variances on its diagonal.
func TestPosteriorIsTheMixtureOfDraws(t *testing.T) {
	t.Parallel()
	res, m, _, _ := shortRun(t)
	post := res.Posterior
	if post.NumDraws() != 10 || len(res.Chains) != 2 {
		t.Fatalf("%d draws kept, %d chains", post.NumDraws(), len(res.Chains))
	}
	xs := mat.NewDense(7, 1, []float64{-1, 0, 0.7, 2, 2.5, 4.9, 7})
	p, err := post.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Components) != 10 {
		t.Fatalf("%d components, want 10", len(p.Components))
	}
	// The GPR's predictions at each draw, computed with the model itself (its sampled Params set to the draw).
	sampled := post.Sampled()
	saved := make([][]float64, len(sampled))
	for k, j := range sampled {
		saved[k] = slices.Clone(m.Params()[j].Raw())
	}
	var means, vars []*mat.Dense
	for k := 0; k < post.NumDraws(); k++ {
		d, off := post.Draw(k), 0
		for _, j := range sampled {
			q := m.Params()[j]
			copy(q.Raw(), d[off:off+q.Size()])
			off += q.Size()
		}
		pk, err := m.Predict(xs, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		means, vars = append(means, pk.YMean), append(vars, pk.YVar)
	}
	for k, j := range sampled {
		copy(m.Params()[j].Raw(), saved[k])
	}
	for i := 0; i < 7; i++ {
		mu, v := 0.0, 0.0
		for k := range means {
			mu += means[k].At(i, 0) / 10
		}
		for k := range means {
			dm := means[k].At(i, 0) - mu
			v += (vars[k].At(i, 0) + dm*dm) / 10
		}
		if d := math.Abs(p.YMean.At(i, 0) - mu); d > 1e-12*math.Max(1, math.Abs(mu)) {
			t.Errorf("row %d: mixture mean %.15g, want %.15g", i, p.YMean.At(i, 0), mu)
		}
		if d := math.Abs(p.YVar.At(i, 0) - v); d > 1e-12*v {
			t.Errorf("row %d: mixture variance %.15g, want %.15g", i, p.YVar.At(i, 0), v)
		}
	}
	full := gptest.CheckPredictor(t, post, xs, gp.PredictOptions{ChunkRows: 3, Full: true, Draws: 3, OutputCov: true})
	for i := 0; i < 7; i++ {
		if d := math.Abs(full.FCov[0].At(i, i) - full.FVar.At(i, 0)); d > 1e-10*full.FVar.At(i, 0) {
			t.Errorf("row %d: the mixture covariance's diagonal %.12g, its variance %.12g", i, full.FCov[0].At(i, i), full.FVar.At(i, 0))
		}
	}
}

// TestPosteriorModelFile: a Posterior saved with its standardisation and priors loads and predicts the same bits
// through File.Predict, marginals, full covariance and draws alike, from several goroutines at once, and its file
// saves again to the same bytes.
func TestPosteriorModelFile(t *testing.T) {
	t.Parallel()
	res, _, _, y := shortRun(t)
	n, _ := y.Dims()
	std := &datasets.Standardizer{XMean: []float64{0.5}, XStd: []float64{2}, YMean: []float64{10}, YStd: []float64{3}}
	f := &modelfile.File{Model: res.Posterior, Standardizer: std, Meta: map[string]string{"created_by": "test"}}
	var buf bytes.Buffer
	if err := modelfile.Save(&buf, f); err != nil {
		t.Fatal(err)
	}
	first := slices.Clone(buf.Bytes())
	g, err := modelfile.Load(&buf, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Model.(*bayes.Posterior); !ok {
		t.Fatalf("loaded a %T", g.Model)
	}
	x := mat.NewDense(5, 1, []float64{-2, 0, 1, 3, 8})
	opts := modelfile.PredictOptions{FullCov: true, Draws: 2, Seed: 4}
	want, err := f.Predict(x, opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			got, err := g.Predict(x, opts)
			if err != nil {
				errs[w] = err
				return
			}
			if !mat.Equal(got.Mean, want.Mean) || !mat.Equal(got.Var, want.Var) || !mat.Equal(got.Cov[0], want.Cov[0]) || !mat.Equal(got.Draws[1], want.Draws[1]) {
				errs[w] = errors.New("the loaded posterior predicts other bits")
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := modelfile.Save(&again, g); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), first) {
		t.Error("a loaded posterior saves to other bytes")
	}
	if x, _ := g.Model.(gp.DataHolder).TrainingData(); x == nil {
		t.Errorf("the posterior's %d training rows were not kept", n)
	}
}

// TestSampleIsReproducible: the same seed gives the same chains bit for bit with GOMAXPROCS 1 and 2.
func TestSampleIsReproducible(t *testing.T) {
	run := func(procs int) *bayes.Result {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		m, x, y := toyGPR(t, 12, 2)
		res, err := bayes.Sample(m, x, y, bayes.Config{Chains: 3, Seed: 5, Keep: 5, NUTS: mcmc.Options{Warmup: 60, Samples: 40}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(1), run(2)
	for c := range a.Chains {
		for i := range a.Chains[c].Draws {
			if !slices.Equal(a.Chains[c].Draws[i], b.Chains[c].Draws[i]) {
				t.Fatalf("chain %d draw %d differs between GOMAXPROCS 1 and 2", c, i)
			}
		}
	}
}

// TestSampleNeedsPriors: a sampled Param without a prior is refused by name; frozen ones are not sampled.
func TestSampleNeedsPriors(t *testing.T) {
	t.Parallel()
	m, x, y := toyGPR(t, 10, 1)
	if err := m.Noise.SetPrior(nil); err != nil {
		t.Fatal(err)
	}
	var mp *bayes.MissingPriorError
	if _, err := bayes.Sample(m, x, y, bayes.Config{}); !errors.As(err, &mp) || len(mp.Params) != 1 || mp.Params[0] != "likelihood.variance" {
		t.Fatalf("no prior on the noise: %v", err)
	}
	m.Noise.SetTrainable(false)
	res, err := bayes.Sample(m, x, y, bayes.Config{Chains: 1, Keep: 3, NUTS: mcmc.Options{Warmup: 30, Samples: 20}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Posterior.Sampled(); len(got) != 1 || len(res.Diagnostics.Params) != 1 || res.Diagnostics.Params[0].Name != "squaredexp.lengthscales" {
		t.Errorf("sampled %v, summaries %+v: want the length-scale alone", got, res.Diagnostics.Params)
	}
}
