package bayes_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/mcmc"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

func bernoulliGPMC(t *testing.T, x, y *mat.Dense, ell float64) *models.GPMC {
	t.Helper()
	_, d := x.Dims()
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = ell
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Lengthscales: ls})
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.NewGPMC(models.GPMCConfig{Kernel: k, Likelihood: lik, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGPMCLatentPosteriorAgainstQuadrature: with the hyperparameters fixed, NUTS over GPMC's whitened values on two
// labelled points gives the posterior means and standard deviations of f = L v within 3.5 Monte-Carlo standard
// errors of a 400 × 400 grid quadrature of p(f | y) ∝ N(f; 0, K + 10⁻⁶I) Φ(f₁) Φ(−f₂).
func TestGPMCLatentPosteriorAgainstQuadrature(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(2, 1, []float64{0, 0.7})
	y := mat.NewDense(2, 1, []float64{1, 0})
	m := bernoulliGPMC(t, x, y, 1)
	for _, p := range m.Kernel.Params() {
		p.SetTrainable(false)
	}
	res, err := bayes.Sample(m, x, y, bayes.Config{Chains: 4, Seed: 3, NUTS: mcmc.Options{Warmup: 500, Samples: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	// K and its factor, as GPMC builds them.
	k12 := math.Exp(-0.5 * 0.7 * 0.7)
	kk := [2][2]float64{{1 + models.DefaultGPMCJitter, k12}, {k12, 1 + models.DefaultGPMCJitter}}
	l11 := math.Sqrt(kk[0][0])
	l21 := kk[1][0] / l11
	l22 := math.Sqrt(kk[1][1] - l21*l21)
	det := kk[0][0]*kk[1][1] - k12*k12
	logPost := func(f1, f2 float64) float64 {
		q := (kk[1][1]*f1*f1 - 2*k12*f1*f2 + kk[0][0]*f2*f2) / det
		return -0.5*q + ops.LogPhiFloat(f1) + ops.LogPhiFloat(-f2)
	}
	const g = 400
	lo, hi := -7.0, 7.0
	var w, s1, s2 [2]float64
	total := 0.0
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			f := [2]float64{lo + (hi-lo)*(float64(i)+0.5)/g, lo + (hi-lo)*(float64(j)+0.5)/g}
			p := math.Exp(logPost(f[0], f[1]))
			total += p
			for k := range 2 {
				w[k] += p * f[k]
				s2[k] += p * f[k] * f[k]
			}
		}
	}
	for k := range 2 {
		s1[k] = w[k] / total
		sd := math.Sqrt(s2[k]/total - s1[k]*s1[k])
		draws := make([][]float64, len(res.Chains))
		for c, ch := range res.Chains {
			for _, v := range ch.Draws { // f = L v
				f := l11 * v[0]
				if k == 1 {
					f = l21*v[0] + l22*v[1]
				}
				draws[c] = append(draws[c], f)
			}
		}
		s := mcmc.Summarize(draws)
		t.Logf("f%d: mean %.4f ± %.4f (quadrature %.4f), sd %.4f ± %.4f (quadrature %.4f), R̂ %.4f", k+1, s.Mean, s.MCSEMean, s1[k], s.SD, s.MCSESD, sd, s.Rhat)
		if math.Abs(s.Mean-s1[k]) > 3.5*s.MCSEMean || math.Abs(s.SD-sd) > 3.5*s.MCSESD || !(s.Rhat < 1.01) {
			t.Errorf("f%d: mean %.4f, sd %.4f, R̂ %.4f; quadrature mean %.4f, sd %.4f", k+1, s.Mean, s.SD, s.Rhat, s1[k], sd)
		}
	}
}

// TestGPMCBernoulli is the GPMC path on a small Bernoulli set (30 points in 1-D, labels from the sign of
// sin(2x)): NUTS over the length-scale and variance (log-normal priors) and the 30 whitened values jointly
// converges (R̂ < 1.05 for every value, no more than 1% divergent transitions), and the posterior predictive
// classifies the training points (at least 80% right) with probabilities in (0, 1) that change side where
// sin(2x) does; its model file predicts the same probabilities.
func TestGPMCBernoulli(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	n := 30
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 3*rng.Float64())
		if math.Sin(2*x.At(i, 0))+0.3*rng.NormFloat64() > 0 {
			y.Set(i, 0, 1)
		}
	}
	m := bernoulliGPMC(t, x, y, 1)
	if _, err := gp.AssignPriors(m.Params(), mustRules(t, "lengthscale=lognormal(0,1)", "variance=lognormal(0,1)")); err != nil {
		t.Fatal(err)
	}
	res, err := bayes.Sample(m, x, y, bayes.Config{Chains: 4, Seed: 11, Keep: 40, NUTS: mcmc.Options{Warmup: 300, Samples: 300}})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	t.Logf("\n%s", d.Report())
	if d.Latent == nil || d.Latent.Count != n || len(d.Params) != 2 {
		t.Fatalf("diagnostics of %d hyperparameters and %+v latent values", len(d.Params), d.Latent)
	}
	if !(d.MaxRhat < 1.05) || d.Divergences > d.Chains*d.Samples/100 {
		t.Errorf("largest R̂ %.4f, %d divergences", d.MaxRhat, d.Divergences)
	}
	p, err := res.Posterior.Predict(x, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i := 0; i < n; i++ {
		q := p.Probs.At(i, 1)
		if !(q > 0 && q < 1) {
			t.Fatalf("row %d: p(y=1) = %v", i, q)
		}
		if (q > 0.5) == (y.At(i, 0) == 1) {
			right++
		}
	}
	if right < 24 {
		t.Errorf("%d of %d training labels right", right, n)
	}
	grid := mat.NewDense(2, 1, []float64{math.Pi / 4, 3 * math.Pi / 4}) // sin(2x) = 1, −1
	pg, err := res.Posterior.Predict(grid, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !(pg.Probs.At(0, 1) > 0.7 && pg.Probs.At(1, 1) < 0.3) {
		t.Errorf("p(y=1) at sin(2x) = ±1: %.3f and %.3f", pg.Probs.At(0, 1), pg.Probs.At(1, 1))
	}
	orig := &modelfile.File{Model: res.Posterior}
	var buf bytes.Buffer
	if err := modelfile.Save(&buf, orig); err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Load(&buf, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := orig.Predict(grid, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := f.Predict(grid, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(fp.Probs, want.Probs) || fp.Labels[0] != 1 || fp.Labels[1] != 0 {
		t.Errorf("the loaded model file predicts %v (labels %v), the saved one %v", mat.Formatted(fp.Probs), fp.Labels, mat.Formatted(want.Probs))
	}
	if d := math.Abs(want.Probs.At(0, 1) - pg.Probs.At(0, 1)); d > 1e-12 {
		t.Errorf("File.Predict %v, Posterior.Predict %v", want.Probs.At(0, 1), pg.Probs.At(0, 1))
	}
}
