package approx_test

import (
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// probitProblem reads testdata/probit30.csv (made by probit30.py): 30 inputs on [−3, 3] and labels drawn from
// Φ(f), f from probitKernel's prior.
func probitProblem(t *testing.T) (*mat.Dense, *mat.Dense) {
	t.Helper()
	f, err := os.Open("testdata/probit30.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n := len(recs) - 1
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i, r := range recs[1:] {
		for j, m := range []*mat.Dense{x, y} {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil {
				t.Fatal(err)
			}
			m.Set(i, 0, v)
		}
	}
	return x, y
}

// probitKernel is the probit problems' fixed prior: SE (σ² = 1, ℓ = 1) plus a 10⁻⁴ nugget, so that K is
// positive definite (the importance sampler evaluates N(f; 0, K)).
func probitKernel(t *testing.T) gp.Kernel {
	t.Helper()
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1, Variance: 1, Lengthscales: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := gp.NewWhite(gp.KernelConfig{InputDim: 1, Variance: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	k, err := gp.NewSum(se, w)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// probitModel returns an exact GP with the probit likelihood and probitKernel on (x, y).
func probitModel(t *testing.T, x, y *mat.Dense, inf approx.Inference, o ops.EPOptions) *approx.GP {
	t.Helper()
	k := probitKernel(t)
	lik, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := approx.New(approx.Config{Kernel: k, Likelihood: lik, Inference: inf, EP: o, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEPAccuracyImportanceSampling: on a 30-row 1-D probit problem (testdata/probit30.csv: labels from the
// prior's own draw, unit hyperparameters), EP's log Z is within 0.01 of an importance-sampling estimate of the true
// log marginal likelihood log ∫ Π_i Φ((2y_i − 1)f_i) N(f; 0, K) df, and closer to it than the Laplace
// approximation's (Kuss & Rasmussen 2005). EP's error is a property of EP, not of this code (which matches R&W's
// Algorithms 3.5–3.6 in probit30.py to round-off): it varies with the draw, 0.001 to 0.026 below the truth over
// the script's first 8 draws (probit30.py --scan), about 0.002–0.004 on this one. The proposal is a multivariate t with 4 degrees of
// freedom centred on the Laplace mode with the Laplace approximation's covariance, not inflated: the t's tails
// cover the posterior's, and a wider proposal (1.5² times the covariance) made the weights so skewed that the
// estimate and its standard error drifted by more than the error itself. The standard error (delta method on the
// weights) must be ≤ 0.003. Seeded.
//
// The same draws check what predictions use: EP's predictive class probabilities at the 30 inputs (Algorithm
// 3.6 through Predict) are within 0.005 of the importance-sampling estimates of E[Φ(f_i) | D], and closer to
// them on average than Laplace's (measured: EP 0.00025 mean, 0.00063 at most; Laplace 0.0059 mean).
func TestEPAccuracyImportanceSampling(t *testing.T) {
	t.Parallel()
	const n, nu, inflate, draws = 30, 4.0, 1.0, 600000
	x, y := probitProblem(t)
	if r, _ := x.Dims(); r != n {
		t.Fatalf("%d rows, want %d", r, n)
	}
	la, err := probitModel(t, x, y, approx.Laplace, ops.EPOptions{}).Approximation(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := probitModel(t, x, y, approx.EP, ops.EPOptions{Tol: 1e-12}).Approximation(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// K, the Laplace covariance Σ = K − K(K + W⁻¹)⁻¹K and their factors.
	kern := gptestKernel(t, x)
	sigma, err := la.PredictCov(kern, kern, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sigma {
		sigma[i] *= inflate * inflate
	}
	lk, ls := make([]float64, n*n), make([]float64, n*n)
	if _, err := ops.CholeskyLower(lk, kern, n, ops.JitterPolicy{MaxTries: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.CholeskyLower(ls, sigma, n, ops.JitterPolicy{MaxTries: -1}); err != nil {
		t.Fatal(err)
	}
	logDetK, logDetS := ops.CholLogDet(lk, n), ops.CholLogDet(ls, n)
	lgA, _ := math.Lgamma((nu + n) / 2)
	lgB, _ := math.Lgamma(nu / 2)
	tConst := lgA - lgB - 0.5*n*math.Log(nu*math.Pi) - 0.5*logDetS
	gConst := -0.5*n*math.Log(2*math.Pi) - 0.5*logDetK
	rng := rand.New(rand.NewPCG(2024, 6))
	lw := make([]float64, draws)
	// The posterior predictive probabilities p(y = 1 | x_i, D) = E[Φ(f_i) | D] at the training inputs, from the
	// same weights: running sums of w·Φ(f_i) and w²·Φ(f_i)^k, rescaled whenever the largest log weight grows.
	var (
		run         = math.Inf(-1)
		sw, sw2     float64
		pw, pw2, p2 = make([]float64, n), make([]float64, n), make([]float64, n)
	)
	z, f, v := make([]float64, n), make([]float64, n), make([]float64, n)
	for s := range lw {
		zz := 0.0
		for i := range z {
			z[i] = rng.NormFloat64()
			zz += z[i] * z[i]
		}
		u := -2 * math.Log(rng.Float64()*rng.Float64()) // χ²₄
		c := math.Sqrt(nu / u)
		for i := 0; i < n; i++ { // f = f̂ + c·L_Σ z
			acc := 0.0
			for j := 0; j <= i; j++ {
				acc += ls[i*n+j] * z[j]
			}
			f[i] = la.Mean[i] + c*acc
		}
		copy(v, f) // log N(f; 0, K): v = L_K⁻¹ f
		ops.TriSolveTo(v, lk, v, n, 1, false, false)
		quad, lik := 0.0, 0.0
		for i := range v {
			quad += v[i] * v[i]
			lik += ops.LogPhiFloat((2*y.At(i, 0) - 1) * f[i])
		}
		logT := tConst - 0.5*(nu+n)*math.Log1p(zz*c*c/nu)
		lw[s] = lik + gConst - 0.5*quad - logT
		if lw[s] > run {
			r := math.Exp(run - lw[s])
			sw, sw2 = sw*r, sw2*r*r
			for i := range pw {
				pw[i], pw2[i], p2[i] = pw[i]*r, pw2[i]*r*r, p2[i]*r*r
			}
			run = lw[s]
		}
		w := math.Exp(lw[s] - run)
		sw, sw2 = sw+w, sw2+w*w
		for i := range pw {
			phi := 0.5 * math.Erfc(-f[i]/math.Sqrt2)
			pw[i] += w * phi
			pw2[i] += w * w * phi
			p2[i] += w * w * phi * phi
		}
	}
	// log Ẑ = log mean w; its standard error ≈ sd(w)/(mean(w)·√S).
	mx := lw[0]
	for _, l := range lw {
		mx = math.Max(mx, l)
	}
	var s1, s2 float64
	for _, l := range lw {
		w := math.Exp(l - mx)
		s1 += w
		s2 += w * w
	}
	mean := s1 / draws
	logZ := mx + math.Log(mean)
	se := math.Sqrt(math.Max(s2/draws-mean*mean, 0)/draws) / mean
	ess := s1 * s1 / s2
	t.Logf("importance sampling (%d draws, ESS %.0f): log Z = %.5f ± %.5f; EP %.5f (%+.5f, %d sweeps), Laplace %.5f (%+.5f)",
		draws, ess, logZ, se, ep.LogZ, ep.LogZ-logZ, ep.Iters, la.LogZ, la.LogZ-logZ)
	if se > 0.003 {
		t.Errorf("importance sampling's standard error %.4f > 0.003", se)
	}
	if d := math.Abs(ep.LogZ - logZ); d > 0.01 {
		t.Errorf("EP's log Z %.5f is %.4f from the importance-sampling estimate %.5f (want ≤ 0.01)", ep.LogZ, d, logZ)
	}
	if math.Abs(ep.LogZ-logZ) >= math.Abs(la.LogZ-logZ) {
		t.Errorf("EP (%.5f) is not closer than Laplace (%.5f) to the importance-sampling estimate %.5f", ep.LogZ, la.LogZ, logZ)
	}

	// The predictive class probabilities, through each model's Predict at the training inputs, against
	// E[Φ(f_i) | D] by the same draws (standard error by the delta method: √Σw²(Φ_i − p_i)² / Σw). The prior's
	// 10⁻⁴ nugget is absent from Predict's cross-covariances; it moves the probabilities by about 10⁻⁴.
	probs := func(inf approx.Inference, o ops.EPOptions) []float64 {
		p, err := probitModel(t, x, y, inf, o).Predict(x, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return mat.Col(nil, 0, p.YMean)
	}
	pEP, pLa := probs(approx.EP, ops.EPOptions{Tol: 1e-12}), probs(approx.Laplace, ops.EPOptions{})
	var errEP, errLa, maxEP, maxSE float64
	for i := range pw {
		pIS := pw[i] / sw
		se := math.Sqrt(math.Max(p2[i]-2*pIS*pw2[i]+pIS*pIS*sw2, 0)) / sw
		maxSE = math.Max(maxSE, se)
		maxEP = math.Max(maxEP, math.Abs(pEP[i]-pIS))
		errEP += math.Abs(pEP[i]-pIS) / n
		errLa += math.Abs(pLa[i]-pIS) / n
	}
	t.Logf("predictive p(y = 1) at the %d training inputs against importance sampling (largest standard error %.5f): EP mean |error| %.5f (largest %.5f), Laplace %.5f",
		n, maxSE, errEP, maxEP, errLa)
	if maxSE > 0.002 {
		t.Errorf("importance sampling's largest standard error of a probability %.4f > 0.002", maxSE)
	}
	if maxEP > 0.005 {
		t.Errorf("EP's predictive probabilities are up to %.4f from importance sampling's (want ≤ 0.005)", maxEP)
	}
	if errEP >= errLa {
		t.Errorf("EP's predictive probabilities (mean error %.5f) are not closer than Laplace's (%.5f) to importance sampling's", errEP, errLa)
	}
}

// gptestKernel returns the probit models' prior covariance K(x, x) (probitKernel) row-major, as the graph
// computes it.
func gptestKernel(t *testing.T, x *mat.Dense) []float64 {
	t.Helper()
	n, _ := x.Dims()
	k := probitKernel(t)
	g := graph.New(graph.Options{})
	xn := g.Input("x", n, 1)
	prog, err := g.CompileForward(map[string]*graph.Node{"k": k.K(xn, xn)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	copy(prog.InputData("x"), x.RawMatrix().Data)
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	out := append([]float64(nil), prog.Output("k")...)
	for i := 0; i < n; i++ { // symmetrised, as the approximations see it
		for j := 0; j < i; j++ {
			v := 0.5 * (out[i*n+j] + out[j*n+i])
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return out
}
