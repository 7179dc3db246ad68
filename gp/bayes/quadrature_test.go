package bayes_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/mcmc"
	"gonum.org/v1/gonum/mat"
)

// toyGPR returns n noisy points of sin on [0, 5] and a GPR with an SE kernel of unit variance (frozen) whose
// length-scale and noise variance are free, with log-normal priors lognormal(0, 1) and lognormal(−2, 1).
func toyGPR(t testing.TB, n int, seed uint64) (*gp.GPR, *mat.Dense, *mat.Dense) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 5*rng.Float64())
		y.Set(i, 0, math.Sin(x.At(i, 0))+0.2*rng.NormFloat64())
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	k.Variance.SetTrainable(false)
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gp.AssignPriors(m.Params(), mustRules(t, "lengthscale=lognormal(0,1)", "noise=lognormal(-2,1)")); err != nil {
		t.Fatal(err)
	}
	return m, x, y
}

func mustRules(t testing.TB, rules ...string) []gp.PriorRule {
	t.Helper()
	out := make([]gp.PriorRule, len(rules))
	for i, r := range rules {
		var err error
		if out[i], err = gp.ParsePriorRule(r); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// exactLML is log N(y | 0, K + σ²I) for the SE kernel of unit variance and length-scale ell, by gonum's Cholesky:
// the oracle, apart from the graph the sampler differentiates.
func exactLML(x, y *mat.Dense, ell, noise float64) float64 {
	n, _ := x.Dims()
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			d := (x.At(i, 0) - x.At(j, 0)) / ell
			v := math.Exp(-0.5 * d * d)
			if i == j {
				v += noise
			}
			k.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		return math.Inf(-1)
	}
	var a mat.VecDense
	if err := ch.SolveVecTo(&a, mat.NewVecDense(n, mat.Col(nil, 0, y))); err != nil {
		return math.Inf(-1)
	}
	return -0.5*mat.Dot(mat.NewVecDense(n, mat.Col(nil, 0, y)), &a) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
}

// logNormalPDFLog is log N(u; mu, 1): a log-normal prior on c = eᵘ seen on u (its Jacobian eᵘ included).
func logNormalPDFLog(u, mu float64) float64 { return -0.5*(u-mu)*(u-mu) - 0.5*math.Log(2*math.Pi) }

// quadrature returns the posterior means and standard deviations of u = (log ℓ, log σ²) by a 200 × 200 midpoint
// grid over the box where the density exceeds 1e-8 of its maximum (found on a coarse scan, then checked on the
// fine grid's border), with the density's largest value on that border relative to the maximum.
func quadrature(t *testing.T, x, y *mat.Dense) (mean, sd [2]float64, border float64) {
	t.Helper()
	logPost := func(u0, u1 float64) float64 {
		return exactLML(x, y, math.Exp(u0), math.Exp(u1)) + logNormalPDFLog(u0, 0) + logNormalPDFLog(u1, -2)
	}
	const g = 200
	cut := math.Log(1e-8)
	lo, hi := [2]float64{-8, -12}, [2]float64{6, 4}
	grid := func(lo, hi [2]float64) (vals [g][g]float64, at func(i, k int) float64, max float64) {
		at = func(i, k int) float64 { return lo[k] + (hi[k]-lo[k])*(float64(i)+0.5)/g }
		max = math.Inf(-1)
		for i := 0; i < g; i++ {
			for j := 0; j < g; j++ {
				vals[i][j] = logPost(at(i, 0), at(j, 1))
				max = math.Max(max, vals[i][j])
			}
		}
		return vals, at, max
	}
	coarse, at, max := grid(lo, hi)
	box := [2][2]float64{{math.Inf(1), math.Inf(-1)}, {math.Inf(1), math.Inf(-1)}}
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			if coarse[i][j]-max > cut {
				box[0][0], box[0][1] = math.Min(box[0][0], at(i, 0)), math.Max(box[0][1], at(i, 0))
				box[1][0], box[1][1] = math.Min(box[1][0], at(j, 1)), math.Max(box[1][1], at(j, 1))
			}
		}
	}
	for k := range 2 {
		step := (hi[k] - lo[k]) / g
		lo[k], hi[k] = box[k][0]-2*step, box[k][1]+2*step
	}
	fine, at, max := grid(lo, hi)
	var w, s1, s2 [2]float64
	total := 0.0
	border = math.Inf(-1)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			if i == 0 || j == 0 || i == g-1 || j == g-1 {
				border = math.Max(border, fine[i][j]-max)
			}
			p := math.Exp(fine[i][j] - max)
			total += p
			u := [2]float64{at(i, 0), at(j, 1)}
			for k := range 2 {
				w[k] += p * u[k]
				s2[k] += p * u[k] * u[k]
			}
		}
	}
	for k := range 2 {
		s1[k] = w[k] / total
		mean[k] = s1[k]
		sd[k] = math.Sqrt(s2[k]/total - s1[k]*s1[k])
	}
	return mean, sd, math.Exp(border)
}

// TestNUTSAgainstQuadrature is issue 41's check of NUTS: on a toy GPR with two free hyperparameters (length-scale
// and noise variance) under log-normal priors, 4 chains of NUTS over their raw (softplus) values give posterior
// means and standard deviations of u = (log ℓ, log σ²) within 3 Monte-Carlo standard errors (from the ESS) of a
// 200 × 200 grid quadrature of the exact posterior over the region where its density exceeds 1e-8 of the
// maximum, with R̂ < 1.01. The quadrature's log marginal likelihood is gonum's Cholesky, apart from the graph; the
// priors are applied to ℓ and σ² and the sampler moves their raw values, so the test also checks the priors' and
// the softplus transform's change of variables.
func TestNUTSAgainstQuadrature(t *testing.T) {
	m, x, y := toyGPR(t, 20, 1)
	qMean, qSD, border := quadrature(t, x, y)
	if border > 1e-8 {
		t.Fatalf("the quadrature grid does not cover the posterior: density %.3g of the maximum on its border", border)
	}
	t0 := time.Now()
	res, err := bayes.Sample(m, x, y, bayes.Config{Chains: 4, Seed: 7, NUTS: mcmc.Options{Warmup: 1000, Samples: 2500}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NUTS: %.1f s, %d gradients, step sizes %v, %d divergences", time.Since(t0).Seconds(), res.Diagnostics.Gradients, res.Diagnostics.StepSizes, res.Diagnostics.Divergences)
	names := [2]string{"log lengthscale", "log noise variance"}
	for k, p := range []int{1, 2} { // the sampled Params: lengthscales, likelihood.variance
		draws := make([][]float64, len(res.Chains))
		for c, ch := range res.Chains {
			for _, d := range ch.Draws {
				draws[c] = append(draws[c], d[k])
			}
			draws[c] = m.Params()[p].Transform().Apply(draws[c], []int{len(draws[c])})
			for i, v := range draws[c] {
				draws[c][i] = math.Log(v)
			}
		}
		s := mcmc.Summarize(draws)
		t.Logf("%s: mean %.4f ± %.4f (quadrature %.4f), sd %.4f ± %.4f (quadrature %.4f), R̂ %.4f, ESS mean %.0f bulk %.0f",
			names[k], s.Mean, s.MCSEMean, qMean[k], s.SD, s.MCSESD, qSD[k], s.Rhat, s.ESSMean, s.ESSBulk)
		if d := math.Abs(s.Mean - qMean[k]); d > 3*s.MCSEMean {
			t.Errorf("%s: posterior mean %.5f, quadrature %.5f: %.2f MCSE apart", names[k], s.Mean, qMean[k], d/s.MCSEMean)
		}
		if d := math.Abs(s.SD - qSD[k]); d > 3*s.MCSESD {
			t.Errorf("%s: posterior sd %.5f, quadrature %.5f: %.2f MCSE apart", names[k], s.SD, qSD[k], d/s.MCSESD)
		}
		if !(s.Rhat < 1.01) {
			t.Errorf("%s: R̂ %.4f over 4 chains", names[k], s.Rhat)
		}
	}
	if res.Diagnostics.MaxRhat >= 1.01 {
		t.Errorf("diagnostics: largest R̂ %.4f", res.Diagnostics.MaxRhat)
	}
}
