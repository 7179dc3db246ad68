package cg_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// The equivalence tests of issue 40: the CG exact GP against the Cholesky one (gp.GPR) on N ≈ 1500 rows with
// standardised targets and a noise variance ≥ 1e-2.

const eqN, eqD = 1500, 3

// eqData returns n rows of d standard normal inputs and standardised targets of a smooth function plus noise.
func eqData(n, d int, seed uint64) (x, y *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 17))
	x, y = mat.NewDense(n, d, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for k := 0; k < d; k++ {
			v := rng.NormFloat64()
			x.Set(i, k, v)
			s += math.Sin(float64(k+1)*v) / float64(k+1)
		}
		y.Set(i, 0, s+0.2*rng.NormFloat64())
	}
	col := y.RawMatrix().Data
	mean, sd := 0.0, 0.0
	for _, v := range col {
		mean += v
	}
	mean /= float64(n)
	for _, v := range col {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / float64(n))
	for i := range col {
		col[i] = (col[i] - mean) / sd
	}
	return x, y
}

// eqKernel returns an SE-ARD kernel with length-scales (0.7, 1.1, 1.6) and variance 0.9 (a shared copy's values
// are set on both models' kernels).
func eqKernel(t *testing.T, d int) gp.Kernel {
	ls := []float64{0.7, 1.1, 1.6, 0.9, 1.3}[:d]
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 0.9, Lengthscales: ls})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const eqNoise = 0.05

// models returns the Cholesky GP and the CG GP sharing one kernel (the same Params), with noise eqNoise.
func models(t *testing.T, x, y *mat.Dense, solver ops.CGConfig, loveRank int, predictTol float64) (*gp.GPR, *cg.GPR) {
	t.Helper()
	_, d := x.Dims()
	k := eqKernel(t, d)
	exact, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: eqNoise, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cg.NewGPR(cg.Config{Kernel: k, NoiseVariance: eqNoise, X: x, Y: y, Solver: solver, LOVERank: loveRank, PredictTol: predictTol})
	if err != nil {
		t.Fatal(err)
	}
	return exact, m
}

// lossAndGrad compiles m's loss on (x, y) and returns the loss and the gradient of every Param of ps (raw
// values, concatenated) at step step.
func lossAndGrad(t *testing.T, m gp.Model, x, y *mat.Dense, ps []*graph.Param, step int) (float64, []float64, *graph.Program) {
	t.Helper()
	n, d := x.Dims()
	g := graph.New(graph.Options{})
	xn, yn := g.Input("x", n, d), g.Input("y", n, 1)
	prog, err := g.Compile(m.Loss(xn, yn), nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(prog.InputData("x"), x.RawMatrix().Data)
	copy(prog.InputData("y"), y.RawMatrix().Data)
	if s := prog.InputData(gp.StepInput); s != nil {
		s[0] = float64(step)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	var grad []float64
	for _, p := range ps {
		grad = append(grad, prog.Grad(p)...)
	}
	return prog.Loss(), grad, prog
}

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func relVec(a, b []float64) float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return norm(d) / norm(b)
}

// tight is the solver of the equivalence tests: a tight tolerance, at least 60 Lanczos steps, GPyTorch's
// preconditioner rank (15) and 10 probes.
var tight = ops.CGConfig{Tol: 1e-10, Lanczos: 60, PrecondMinRows: -1}

// predict returns p's prediction at xs with the default options.
func predict(t *testing.T, p gp.Predictor, xs *mat.Dense) *gp.Prediction {
	t.Helper()
	out, err := p.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The predictive mean at a tight tolerance is the Cholesky GP's within 1e-8 (relative, largest entry), and LOVE's
// predictive variances of y (100 Lanczos steps on the matrix preconditioned by a rank-200 pivoted Cholesky: the
// defaults) within 1% of each; the exact variances by CG solves within 1e-8 of y's variance.
func TestEquivalencePrediction(t *testing.T) {
	x, y := eqData(eqN, eqD, 1)
	xs, _ := eqData(300, eqD, 2)
	exact, m := models(t, x, y, tight, 0, 1e-12)
	want := predict(t, exact, xs)
	got := predict(t, m, xs)
	if e := maxRel(got.FMean.RawMatrix().Data, want.FMean.RawMatrix().Data); e > 1e-8 {
		t.Errorf("predictive mean differs from Cholesky's by %.3g (relative to the largest)", e)
	}
	worst := 0.0
	for i := 0; i < 300; i++ {
		a, b := got.YVar.At(i, 0), want.YVar.At(i, 0)
		worst = math.Max(worst, math.Abs(a-b)/b)
		if a < b*(1-1e-9) {
			t.Errorf("row %d: LOVE's variance of y %.12g is below the exact %.12g (LOVE's Galerkin approximation only overestimates)", i, a, b)
		}
	}
	if worst > 0.01 {
		t.Errorf("LOVE's predictive variance of y differs from Cholesky's by up to %.3g relative", worst)
	}
	iters, resid, rank, ok := m.CacheStats()
	t.Logf("α: %d CG iterations, residual %.2g; LOVE rank %d; variances of y within %.3g", iters, resid, rank, worst)
	if !ok || rank != cg.DefaultLOVERank+cg.DefaultLOVEPrecondRank || resid > 1e-12 {
		t.Errorf("cache stats: %d iterations, residual %g, rank %d, %v", iters, resid, rank, ok)
	}
	if checked, exceeded := m.LOVECheck(); checked != cg.LOVECheckRows || exceeded != 0 {
		t.Errorf("LOVE's check: %d of %d training rows exceeded the bound, want 0 of %d", exceeded, checked, cg.LOVECheckRows)
	}
	// The exact variances by CG solves agree too (tighter).
	_, me := models(t, x, y, tight, 0, 1e-12)
	cfg := me.Config()
	cfg.ExactVariance = true
	cfg.X, cfg.Y = x, y
	me, err := cg.NewGPR(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gotE, err := me.Predict(xs.Slice(0, 40, 0, eqD).(*mat.Dense), gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if a, b := gotE.FVar.At(i, 0), want.FVar.At(i, 0); math.Abs(a-b) > 1e-8*want.YVar.At(i, 0) {
			t.Errorf("exact CG variance of f at row %d: %.12g, Cholesky's %.12g", i, a, b)
		}
	}
}

// At a tight tolerance the estimate of −log p(y) and its gradient are within 1e-3 of the exact values (relative;
// the gradient's norm) with a preconditioner of rank 300 (which leaves the probes little to estimate: at
// GPyTorch's rank 15 and 10 probes one estimate is within about 1% at this size, the Monte-Carlo error of 10
// probes), and the means over 64 probe seeds within 3 standard errors of them (every component) with a rank-50
// preconditioner and 10 probes, whose solves take more than 60 iterations: the tridiagonals hold all 60 Lanczos
// steps of the quadrature.
func TestEquivalenceMarginalLikelihood(t *testing.T) {
	x, y := eqData(eqN, eqD, 3)
	exact, _ := models(t, x, y, tight, 0, 0)
	wantL, wantG, _ := lossAndGrad(t, exact, x, y, exact.Params(), 0)
	estimate := func(c ops.CGConfig, seed uint64) (float64, []float64, ops.CGStats) {
		c.Seed = seed
		m, err := cg.NewGPR(cg.Config{Kernel: exact.Kernel, Solver: c, X: x, Y: y})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Noise.SetRaw(exact.Noise.Raw()); err != nil {
			t.Fatal(err)
		}
		l, g, _ := lossAndGrad(t, m, x, y, m.Params(), 0)
		return l, g, m.Solver().Stats()
	}
	accurate := tight
	accurate.PrecondRank = 300
	for s := range 8 {
		l, g, st := estimate(accurate, uint64(s))
		if !st.Converged || st.PrecondRank != 300 {
			t.Errorf("seed %d: stats %+v", s, st)
		}
		if e := relErr(l, wantL); e > 1e-3 {
			t.Errorf("seed %d: loss %.10g, exact %.10g (relative %.3g)", s, l, wantL, e)
		}
		if e := relVec(g, wantG); e > 1e-3 {
			t.Errorf("seed %d: gradient %v, exact %v (relative %.3g)", s, g, wantG, e)
		}
		if s == 0 {
			t.Logf("rank 300, seed 0: %d CG iterations; loss within %.2g, gradient within %.2g", st.Iters, relErr(l, wantL), relVec(g, wantG))
		}
	}

	const seeds = 64
	unbiased := tight
	unbiased.PrecondRank = 50
	losses := make([]float64, seeds)
	grads := make([][]float64, seeds)
	for s := range seeds {
		var st ops.CGStats
		losses[s], grads[s], st = estimate(unbiased, uint64(s))
		if st.Iters < 60 || !st.Converged {
			t.Errorf("seed %d ran %d iterations (converged %v), fewer than the 60 Lanczos steps", s, st.Iters, st.Converged)
		}
		if s == 0 {
			t.Logf("rank 50, seed 0: %d CG iterations; loss within %.2g, gradient within %.2g", st.Iters, relErr(losses[s], wantL), relVec(grads[s], wantG))
		}
	}
	check := func(what string, vals []float64, want float64) {
		mean, sd := meanSD(vals)
		se := sd / math.Sqrt(float64(len(vals)))
		t.Logf("%s: mean %.10g ± %.3g (SE), exact %.10g: %.2f SE", what, mean, se, want, math.Abs(mean-want)/se)
		if math.Abs(mean-want) > 3*se {
			t.Errorf("%s: mean over %d seeds %.10g, exact %.10g: %.2f standard errors (%.3g) apart", what, len(vals), mean, want, math.Abs(mean-want)/se, se)
		}
	}
	check("loss", losses, wantL)
	for j := range wantG {
		col := make([]float64, seeds)
		for s := range seeds {
			col[s] = grads[s][j]
		}
		check(fmt.Sprintf("gradient %d", j), col, wantG[j])
	}
}

func relErr(a, b float64) float64 { return math.Abs(a-b) / math.Abs(b) }

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

// Finite differences of the estimate with fixed probes: at N = 1500 with 10 Rademacher probes the gradient agrees
// with the estimate's central differences within the estimator's own error (1e-2 relative, norm-wise: the
// Hutchinson gradient is that of the estimate's expectation, not of one draw); with n basis probes (the traces and
// the log-determinant exact) on 120 rows, every component within 1e-6 (internal/gradcheck).
func TestEquivalenceFiniteDifferences(t *testing.T) {
	x, y := eqData(eqN, eqD, 4)
	_, m := models(t, x, y, tight, 0, 0)
	ps := m.Params()
	_, grad, prog := lossAndGrad(t, m, x, y, ps, 5)
	fd := make([]float64, 0, len(grad))
	for _, p := range ps {
		raw := p.Raw()
		for e := range raw {
			x0 := raw[e]
			h := 1e-4 * math.Max(1, math.Abs(x0))
			raw[e] = x0 + h
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			fp := prog.Loss()
			raw[e] = x0 - h
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			fm := prog.Loss()
			raw[e] = x0
			fd = append(fd, (fp-fm)/(2*h))
		}
	}
	if e := relVec(grad, fd); e > 1e-2 {
		t.Errorf("gradient %v, central differences of the estimate %v (relative %.3g)", grad, fd, e)
	} else {
		t.Logf("N = %d, fixed Rademacher probes: gradient within %.3g of the estimate's central differences", eqN, e)
	}

	const n = 120
	xb, yb := eqData(n, eqD, 5)
	basis := ops.CGConfig{Tol: 1e-13, Probes: n, Probe: ops.ProbeBasis, Lanczos: n, PrecondRank: 10, PrecondMinRows: -1}
	_, mb := models(t, xb, yb, basis, 0, 0)
	_, _, pb := lossAndGrad(t, mb, xb, yb, mb.Params(), 0)
	gradcheck.CheckProgram(t, pb)
}

// The prediction cache survives a copy through PredictionCache and SetPredictionCache (as a model file stores
// it), and is refused for other parameter values or shapes.
func TestPredictionCacheRoundTrip(t *testing.T) {
	x, y := eqData(300, eqD, 6)
	xs, _ := eqData(20, eqD, 7)
	_, m := models(t, x, y, ops.CGConfig{}, 50, 0)
	want := predict(t, m, xs)
	cache, err := m.PredictionCache()
	if err != nil {
		t.Fatal(err)
	}
	m2 := restored(t, m, x, y, cache)
	got := predict(t, m2, xs)
	if !slices.Equal(got.FMean.RawMatrix().Data, want.FMean.RawMatrix().Data) || !slices.Equal(got.FVar.RawMatrix().Data, want.FVar.RawMatrix().Data) {
		t.Error("predictions from the restored cache differ")
	}
	bad := map[string][]float64{}
	for k, v := range cache {
		bad[k] = slices.Clone(v)
	}
	bad["alpha"] = bad["alpha"][1:]
	if err := m2.SetPredictionCache(bad); err == nil {
		t.Error("a short α was accepted")
	}
	bad["alpha"] = cache["alpha"]
	bad["params"][0] += 1e-9
	if err := m2.SetPredictionCache(bad); err == nil {
		t.Error("a cache of other parameter values was accepted")
	}
}

// restored returns the model a file would give back: m rebuilt from its Spec, with its parameter values, the
// training data x, y and the prediction cache.
func restored(t *testing.T, m *cg.GPR, x, y *mat.Dense, cache map[string][]float64) *cg.GPR {
	t.Helper()
	m2, _ := rebuilt(t, m)
	for i, p := range m2.Params() {
		if err := p.SetRaw(m.Params()[i].Raw()); err != nil {
			t.Fatal(err)
		}
	}
	if err := m2.SetTrainingData(x, y); err != nil {
		t.Fatal(err)
	}
	if err := m2.SetPredictionCache(cache); err != nil {
		t.Fatal(err)
	}
	return m2
}

// choleskyPrediction returns the Cholesky exact GP's prediction at xs (kernel k, noise variance noise, data x, y).
func choleskyPrediction(t *testing.T, k gp.Kernel, noise float64, x, y, xs *mat.Dense) *gp.Prediction {
	t.Helper()
	exact, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: noise, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	return predict(t, exact, xs)
}

// rebuilt returns m built again from its Spec, and the Spec.
func rebuilt(t *testing.T, m *cg.GPR) (*cg.GPR, gp.Spec) {
	t.Helper()
	spec, err := m.Spec()
	if err != nil {
		t.Fatal(err)
	}
	built, err := gp.BuildSpec(spec, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return built.(*cg.GPR), spec
}

// TestPredictPrecondRank: the prediction solve's default preconditioner (rank DefaultPredictPrecondRank) takes
// fewer CG iterations to the same tolerance than the rule before it (the larger of the LOVE and training ranks,
// PredictPrecondRank < 0), on an ill-conditioned problem (2,500 rows, noise variance 10⁻³), and both predict
// Cholesky's mean; a spec without the field (a file written before it) builds the old rule, and the default
// round-trips through the spec.
func TestPredictPrecondRank(t *testing.T) {
	x, y := eqData(2500, eqD, 8)
	xs, _ := eqData(50, eqD, 9)
	k := eqKernel(t, eqD)
	want := choleskyPrediction(t, k, 1e-3, x, y, xs)
	iters := map[int]int{}
	for _, r := range []int{0, -1} {
		m, err := cg.NewGPR(cg.Config{Kernel: k, NoiseVariance: 1e-3, X: x, Y: y, PredictPrecondRank: r, PredictTol: 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		got := predict(t, m, xs)
		if e := maxRel(got.FMean.RawMatrix().Data, want.FMean.RawMatrix().Data); e > 1e-7 {
			t.Errorf("rank setting %d: predictive mean differs from Cholesky's by %.3g", r, e)
		}
		iters[r], _, _, _ = m.CacheStats()
		built, _ := rebuilt(t, m)
		if g := built.Config().PredictPrecondRank; r == 0 && g != cg.DefaultPredictPrecondRank || r < 0 && g >= 0 {
			t.Errorf("rank setting %d: rebuilt from its spec with %d", r, g)
		}
	}
	t.Logf("α to 1e-10: %d CG iterations at the default rank, %d by the old rule", iters[0], iters[-1])
	if !(iters[0] < iters[-1]) {
		t.Errorf("α took %d iterations at the default rank, %d by the old rule: want fewer", iters[0], iters[-1])
	}
}

// When α's CG solve misses the prediction tolerance (here: capped at 2 iterations) and K̂'s factor fits the
// memory budget, α and the variances are computed by its Cholesky factorisation: the predictive mean and variances
// then equal the Cholesky exact GP's, with no warning. Beyond the budget the CG solution is kept and counted as a
// warning.
func TestPredictDirectWhenCGMisses(t *testing.T) {
	x, y := eqData(400, eqD, 10)
	xs, _ := eqData(30, eqD, 11)
	k := eqKernel(t, eqD)
	want := choleskyPrediction(t, k, 1e-4, x, y, xs)
	for _, c := range []struct {
		memory int64
		direct bool
	}{{0, true}, {400 * 400 * 8, false}} {
		m, err := cg.NewGPR(cg.Config{Kernel: k, NoiseVariance: 1e-4, X: x, Y: y, PredictTol: 1e-10, PredictPrecondRank: -1,
			Solver: ops.CGConfig{MaxIters: 2, MinIters: 1}, Blocks: cg.BlocksOptions{Memory: c.memory}})
		if err != nil {
			t.Fatal(err)
		}
		got := predict(t, m, xs)
		e := maxRel(got.FMean.RawMatrix().Data, want.FMean.RawMatrix().Data)
		direct, jitter := m.CacheDirect()
		iters, resid, _, _ := m.CacheStats()
		t.Logf("memory %d: direct %q (jitter %g), CG %d iterations, residual %.2g, mean off by %.3g", c.memory, direct, jitter, iters, resid, e)
		if (direct != "") != c.direct || iters != 2 {
			t.Errorf("memory %d: direct %q after %d CG iterations, want direct %v after 2", c.memory, direct, iters, c.direct)
		}
		ev := maxRel(got.YVar.RawMatrix().Data, want.YVar.RawMatrix().Data)
		if c.direct && (e > 1e-9 || ev > 1e-9 || resid > 1e-10 || m.PredictWarnings() != 0) {
			t.Errorf("direct α: mean off by %.3g, variances by %.3g, residual %.3g, %d warnings; want Cholesky's, no warning", e, ev, resid, m.PredictWarnings())
		}
		if !c.direct && (m.PredictWarnings() < 1 || e < 1e-6) {
			t.Errorf("capped CG α: %d warnings, mean off by %.3g; want a warning and CG's 2-iteration mean", m.PredictWarnings(), e)
		}
	}
}

// On a nearly noiseless fit LOVE at a low rank overestimates the latent variances far beyond the noise: its check
// at training rows (where no exact latent variance exceeds σ²k_ii/(k_ii + σ²)) fails, and where K̂'s factor fits
// the memory budget the cache becomes direct, its means and variances the Cholesky GP's (formed as gp.GPR forms
// them), also at signal variance 1e5 (condition number near 1e12). A model file's cache restores it (the factor computed again) to the same
// predictions bit for bit. Beyond the budget LOVE's variances stay and a warning is counted.
func TestPredictDirectWhenLOVEExceeds(t *testing.T) {
	const n, noise = 400, 1e-5
	x, y := eqData(n, eqD, 12)
	xs, _ := eqData(30, eqD, 13)
	for _, c := range []struct {
		variance float64
		memory   int64
		direct   bool
	}{{0.9, 0, true}, {1e5, 0, true}, {0.9, n * n * 8, false}} {
		k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: eqD, Variance: c.variance, Lengthscales: []float64{0.7, 1.1, 1.6}})
		if err != nil {
			t.Fatal(err)
		}
		want := choleskyPrediction(t, k, noise, x, y, xs)
		m, err := cg.NewGPR(cg.Config{Kernel: k, NoiseVariance: noise, X: x, Y: y, LOVERank: 5, LOVEPrecondRank: -1,
			Blocks: cg.BlocksOptions{Memory: c.memory}})
		if err != nil {
			t.Fatal(err)
		}
		got := predict(t, m, xs)
		why, _ := m.CacheDirect()
		checked, exceeded := m.LOVECheck()
		em := maxRel(got.FMean.RawMatrix().Data, want.FMean.RawMatrix().Data)
		ev := maxRel(got.YVar.RawMatrix().Data, want.YVar.RawMatrix().Data)
		_, resid, _, _ := m.CacheStats()
		t.Logf("variance %g, memory %d: direct %q (α's residual %.2g); LOVE exceeded the bound at %d of %d training rows; mean off by %.3g, variances of y by %.3g",
			c.variance, c.memory, why, resid, exceeded, checked, em, ev)
		// At variance 1e5 (K̂'s condition number near 1e10) α's CG solve may miss its tolerance first, as it does
		// with OpenBLAS's kernels on an AMD EPYC (relative residual 2e-6): the cache is then direct for that reason,
		// before LOVE is built or checked, and must still predict as Cholesky does (below).
		switch {
		case why == cg.DirectCGMissed:
			if checked != 0 {
				t.Errorf("a cache made direct by α's missed solve checked LOVE at %d rows, want none (LOVE is not built)", checked)
			}
		case checked != min(n, cg.LOVECheckRows) || exceeded == 0:
			t.Errorf("LOVE's check: %d of %d rows exceeded, want some of %d", exceeded, checked, min(n, cg.LOVECheckRows))
		}
		if (why != "") != c.direct {
			t.Errorf("variance %g, memory %d: direct %q, want direct %v", c.variance, c.memory, why, c.direct)
		}
		if !c.direct {
			if m.PredictWarnings() != 1 || ev < 0.1 {
				t.Errorf("beyond the budget: %d warnings, variances off by %.3g; want 1 warning and LOVE's overestimates", m.PredictWarnings(), ev)
			}
			continue
		}
		if em > 1e-10 || ev > 1e-10 || m.PredictWarnings() != 0 {
			t.Errorf("direct cache: mean off by %.3g, variances of y by %.3g, %d warnings; want Cholesky's, no warning", em, ev, m.PredictWarnings())
		}
		cache, err := m.PredictionCache()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cache["love"]; ok {
			t.Error("a direct cache saved a LOVE cache")
		}
		m2 := restored(t, m, x, y, cache)
		again := predict(t, m2, xs)
		if w2, _ := m2.CacheDirect(); w2 != why || !slices.Equal(again.FMean.RawMatrix().Data, got.FMean.RawMatrix().Data) ||
			!slices.Equal(again.FVar.RawMatrix().Data, got.FVar.RawMatrix().Data) {
			t.Errorf("the restored direct cache (%q) predicts otherwise", w2)
		}
		cache["direct"] = []float64{7, 0}
		if err := m2.SetPredictionCache(cache); err == nil {
			t.Error("a direct entry of unknown code was accepted")
		}
	}
}
