package gptest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
)

// LikelihoodCase says which observations CheckLikelihood draws for a likelihood.
type LikelihoodCase struct {
	// Outputs is P, the number of observed target columns (0 means 1). The latent width L is the likelihood's
	// LatentDim(P).
	Outputs int
	// Target draws one observation the likelihood models: a count, a class label 0..K−1 as float64, a real.
	// nil draws reals uniform in [−2, 2).
	Target func(rng *rand.Rand) float64
}

// Rows of the data CheckLikelihood draws.
const likRows = 6

// CheckLikelihood runs the likelihood conformance suite on lik, with latent marginals μ uniform in [−1.5, 1.5),
// variances v uniform in [0.05, 1.05) and observations from c, all drawn from rng:
//
//   - LatentDim(P) succeeds and LatentDim(0) is refused;
//   - VariationalExpectations is a finite vector [N], and its gradients with respect to fMean, fVar and every
//     Param (frozen ones made trainable for the check) agree with central finite differences (relative error
//     ≤ gradcheck.RelTol: 1e-6), none of them all zero (a Param the expectations do not read fails);
//   - PredictMeanVar returns means and variances of equal length N·k (finite means, variances ≥ 0 or +Inf) and
//     PredictLogDensity finite values [N]; neither modifies its operands, and repeated calls give the same bits;
//   - at fVar = 0 both sides are log p(y | μ): VariationalExpectations equals PredictLogDensity (relative 1e-9),
//     and the central finite differences of PredictLogDensity with respect to μ and every Param's raw value
//     equal the analytic gradient of the expectations there (relative 1e-6);
//   - for v > 0, log E_q[p(y | f)] ≥ E_q[log p(y | f)] (Jensen): PredictLogDensity ≥ VariationalExpectations
//     (not checked for Monte-Carlo likelihoods, whose two sides draw different numbers);
//   - both predictive functions are smooth in μ, v and every Param (central differences with steps h and h/2
//     agree to 1e-6 relative), and every Param changes PredictLogDensity (predictions read the Params' current
//     values, as they must after training or loading a model file);
//   - NaN or ±Inf in fMean, fVar or y, and operands of inconsistent sizes, are errors of the predictive
//     functions; operands of inconsistent shapes are errors recorded in the graph;
//   - the Spec round trip (CheckSpecRoundTrip: lik must be a gp.Describer) rebuilds a likelihood with the same
//     Params in the same order which, given lik's (perturbed) raw values, computes the same bits in the
//     expectations and both predictive functions.
//
// A Monte-Carlo likelihood (one with a WithRand(*rand.Rand) (gp.Likelihood, error) method, see
// gp.LikelihoodOptions.Rand) is checked through WithRand with a generator of the suite's, which is rewound
// before every evaluation: with the same numbers at every run, its objective is a function of its operands.
//
// The finite-difference steps are gradcheck.Step (1e-5, relative): a likelihood whose log-density has a kink
// (|y − f|) passes unless a quadrature node falls within a step of it, which random data hardly do.
// CheckLikelihood restores lik's Params (values and trainability).
func CheckLikelihood(t testing.TB, lik gp.Likelihood, rng *rand.Rand, c LikelihoodCase) {
	t.Helper()
	p := c.Outputs
	if p == 0 {
		p = 1
	}
	l, err := lik.LatentDim(p)
	if err != nil {
		t.Fatalf("%v: LatentDim(%d): %v", lik, p, err)
	}
	if l < 1 {
		t.Fatalf("%v: LatentDim(%d) = %d", lik, p, l)
	}
	if _, err := lik.LatentDim(0); err == nil {
		t.Errorf("%v: LatentDim(0) accepted", lik)
	}
	target := c.Target
	if target == nil {
		target = func(rng *rand.Rand) float64 { return 4*rng.Float64() - 2 }
	}
	d := likData{n: likRows, l: l, p: p, mu: RandomMatrix(rng, likRows, l, -1.5, 1.5), v: RandomMatrix(rng, likRows, l, 0.05, 1.05),
		y: make([]float64, likRows*p), w: RandomMatrix(rng, likRows, 1, 0.5, 1.5)}
	for i := range d.y {
		d.y[i] = target(rng)
	}
	defer saveParams(lik.Params())()
	lk, mc := withRewind(t, lik, 1)

	ve := lk.ve(t, d.mu, d.v, d)
	for i, x := range ve {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("%v: VariationalExpectations[%d] = %v", lik, i, x)
		}
	}
	checkVEGradients(t, lk, d)
	checkPredictive(t, lk, d)
	checkAtZeroVariance(t, lk, d)
	if !mc {
		pld := lk.pld(t, d.mu, d.v, d.y, d.n)
		for i := range ve {
			if pld[i] < ve[i]-1e-8*math.Max(1, math.Abs(ve[i])) {
				t.Errorf("%v: row %d: PredictLogDensity %v < VariationalExpectations %v (log E p ≥ E log p)", lik, i, pld[i], ve[i])
			}
		}
	}
	checkPredictiveSmooth(t, lk, d)
	checkLikelihoodErrors(t, lk, d)
	checkLikelihoodSpec(t, lk, d)
}

// likData is one set of operands: marginals μ, v [n,l], observations y [n,p], row weights w [n].
type likData struct {
	n, l, p     int
	mu, v, y, w []float64
}

// rewound is a likelihood with, for a Monte-Carlo one, the generator it draws from and the seed rewind restores.
type rewound struct {
	gp.Likelihood
	src  *rand.PCG // nil: the likelihood draws no random numbers
	seed uint64
}

// withRewind returns lik drawing from a rewindable generator of the suite (seeded by seed) when it has a
// WithRand method, and whether it has one.
func withRewind(t testing.TB, lik gp.Likelihood, seed uint64) (rewound, bool) {
	t.Helper()
	mc, ok := lik.(interface {
		WithRand(*rand.Rand) (gp.Likelihood, error)
	})
	if !ok {
		return rewound{Likelihood: lik}, false
	}
	src := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	l, err := mc.WithRand(rand.New(src))
	if err != nil {
		t.Fatalf("%v: WithRand: %v", lik, err)
	}
	return rewound{Likelihood: l, src: src, seed: seed}, true
}

// rewind restores the generator's seed (nothing for a deterministic likelihood).
func (r rewound) rewind() {
	if r.src != nil {
		r.src.Seed(r.seed, 0x9e3779b97f4a7c15)
	}
}

// ve evaluates the variational expectations [n] at μ, v and d's observations in a forward program.
func (r rewound) ve(t testing.TB, mu, v []float64, d likData) []float64 {
	t.Helper()
	g := graph.New(graph.Options{})
	out := r.VariationalExpectations(g.Input("mu", d.n, d.l), g.Input("v", d.n, d.l), g.Input("y", d.n, d.p))
	prog, err := g.CompileForward(map[string]*graph.Node{"ve": out})
	if err != nil {
		t.Fatalf("%v: VariationalExpectations: %v", r, err)
	}
	defer prog.Close()
	for name, x := range map[string][]float64{"mu": mu, "v": v, "y": d.y} {
		if err := prog.Set(name, x); err != nil {
			t.Fatal(err)
		}
	}
	r.rewind()
	if err := prog.Run(); err != nil {
		t.Fatalf("%v: VariationalExpectations: run: %v", r, err)
	}
	if s := prog.OutputShape("ve"); len(s) != 1 || s[0] != d.n {
		t.Fatalf("%v: VariationalExpectations shape %v, want [%d]", r, s, d.n)
	}
	return slices.Clone(prog.Output("ve"))
}

// pld is PredictLogDensity after a rewind, failing t on an error.
func (r rewound) pld(t testing.TB, mu, v, y []float64, n int) []float64 {
	t.Helper()
	r.rewind()
	out, err := r.PredictLogDensity(mu, v, y, n)
	if err != nil {
		t.Fatalf("%v: PredictLogDensity: %v", r, err)
	}
	if len(out) != n {
		t.Fatalf("%v: PredictLogDensity returned %d values, want %d", r, len(out), n)
	}
	return out
}

// pmv is PredictMeanVar after a rewind, failing t on an error.
func (r rewound) pmv(t testing.TB, mu, v []float64, n int) (mean, variance []float64) {
	t.Helper()
	r.rewind()
	mean, variance, err := r.PredictMeanVar(mu, v, n)
	if err != nil {
		t.Fatalf("%v: PredictMeanVar: %v", r, err)
	}
	return mean, variance
}

// saveParams returns a function restoring ps' raw values and trainability.
func saveParams(ps []*graph.Param) func() {
	raw := make([][]float64, len(ps))
	on := make([]bool, len(ps))
	for i, p := range ps {
		raw[i], on[i] = slices.Clone(p.Raw()), p.Trainable()
	}
	return func() {
		for i, p := range ps {
			copy(p.Raw(), raw[i])
			p.SetTrainable(on[i])
		}
	}
}

// veProgram compiles Σ_n w_n VE_n with fMean a Param "gptest.fmean" and, when v is nil, fVar an input at 0,
// else a Param "gptest.fvar", every Param of the likelihood trainable. It returns the program (inputs set)
// and the marginals' Params (fVar's nil for v = 0).
func veProgram(t testing.TB, r rewound, d likData, v []float64) (*graph.Program, *graph.Param, *graph.Param) {
	t.Helper()
	for _, p := range r.Params() {
		p.SetTrainable(true)
	}
	muP, err := graph.NewParam("gptest.fmean", slices.Clone(d.mu), nil, d.n, d.l)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	var vP *graph.Param
	var vn *graph.Node
	if v == nil {
		vn = g.Input("v", d.n, d.l)
	} else {
		if vP, err = graph.NewParam("gptest.fvar", slices.Clone(v), nil, d.n, d.l); err != nil {
			t.Fatal(err)
		}
		vn = g.Param(vP)
	}
	ve := r.VariationalExpectations(g.Param(muP), vn, g.Const("y", d.y, d.n, d.p))
	prog, err := g.Compile(g.Dot(g.Const("w", d.w, d.n), ve), nil)
	if errors.Is(err, graph.ErrNotInLoss) {
		t.Fatalf("%v: VariationalExpectations does not read every Param (fMean, fVar, the likelihood's): %v", r, err)
	}
	if err != nil {
		t.Fatalf("%v: VariationalExpectations: %v", r, err)
	}
	t.Cleanup(func() { prog.Close() })
	if want := len(r.Params()) + 1 + btoi(vP != nil); len(prog.Params()) != want {
		t.Errorf("%v: the expectations read %d trainable Params, want %d (Params() incomplete?)", r, len(prog.Params()), want)
	}
	if v == nil {
		if err := prog.Set("v", make([]float64, d.n*d.l)); err != nil {
			t.Fatal(err)
		}
	}
	return prog, muP, vP
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkVEGradients: central differences of Σ w⊙VE against its gradients with respect to fMean, fVar and every
// Param of the likelihood; none all zero.
func checkVEGradients(t testing.TB, r rewound, d likData) {
	t.Helper()
	defer saveParams(r.Params())()
	prog, muP, vP := veProgram(t, r, d, d.v)
	gradcheck.CheckProgramWith(t, prog, r.rewind)
	for _, p := range append([]*graph.Param{muP, vP}, r.Params()...) {
		nz := false
		for _, x := range prog.Grad(p) {
			nz = nz || (x != 0 && !math.IsNaN(x))
		}
		if !nz {
			t.Errorf("%v: the expectations' gradient with respect to %s is zero: %v", r, p.Name(), prog.Grad(p))
		}
	}
}

// checkPredictive: shapes and values of the predictive functions, operands left alone, repeatable bits.
func checkPredictive(t testing.TB, r rewound, d likData) {
	t.Helper()
	mu, v, y := slices.Clone(d.mu), slices.Clone(d.v), slices.Clone(d.y)
	mean, variance := r.pmv(t, mu, v, d.n)
	if len(mean) == 0 || len(mean)%d.n != 0 || len(variance) != len(mean) {
		t.Errorf("%v: PredictMeanVar returned %d means and %d variances for %d rows; want N·k of each", r, len(mean), len(variance), d.n)
	}
	for i, m := range mean {
		if math.IsNaN(m) || math.IsInf(m, 0) {
			t.Errorf("%v: predictive mean[%d] = %v", r, i, m)
		}
	}
	for i, s := range variance {
		if !(s >= 0) {
			t.Errorf("%v: predictive variance[%d] = %v", r, i, s)
		}
	}
	pld := r.pld(t, mu, v, y, d.n)
	for i, x := range pld {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("%v: PredictLogDensity[%d] = %v", r, i, x)
		}
	}
	if !slices.Equal(mu, d.mu) || !slices.Equal(v, d.v) || !slices.Equal(y, d.y) {
		t.Errorf("%v: the predictive functions modified their operands", r)
	}
	mean2, variance2 := r.pmv(t, mu, v, d.n)
	if !slices.Equal(mean, mean2) || !slices.Equal(variance, variance2) || !slices.Equal(pld, r.pld(t, mu, v, y, d.n)) {
		t.Errorf("%v: repeated predictions differ", r)
	}
}

// checkAtZeroVariance: at v = 0 the expectations and the predictive log density are both log p(y | μ), and so
// are their derivatives with respect to μ and the Params.
func checkAtZeroVariance(t testing.TB, r rewound, d likData) {
	t.Helper()
	zero := make([]float64, d.n*d.l)
	ve, pld := r.ve(t, d.mu, zero, d), r.pld(t, d.mu, zero, d.y, d.n)
	for i := range ve {
		if math.Abs(ve[i]-pld[i]) > 1e-9*math.Max(1, math.Abs(pld[i])) {
			t.Errorf("%v: at fVar = 0, row %d: VariationalExpectations %.15g, PredictLogDensity %.15g (both log p(y | μ))", r, i, ve[i], pld[i])
		}
	}
	defer saveParams(r.Params())()
	prog, muP, _ := veProgram(t, r, d, nil)
	r.rewind()
	if err := prog.Run(); err != nil {
		t.Fatalf("%v: %v", r, err)
	}
	mu := slices.Clone(d.mu)
	loss := func() float64 {
		s := 0.0
		for i, x := range r.pld(t, mu, zero, d.y, d.n) {
			s += d.w[i] * x
		}
		return s
	}
	check := func(name string, x []float64, grad []float64) {
		for j := range x {
			x0 := x[j]
			h := gradcheck.Step * math.Max(1, math.Abs(x0))
			x[j] = x0 + h
			fp := loss()
			x[j] = x0 - h
			fm := loss()
			x[j] = x0
			fd, a := (fp-fm)/(2*h), grad[j]
			if diff := math.Abs(fd - a); diff > gradcheck.AbsTol*math.Max(1, math.Abs(fp)) && diff > gradcheck.RelTol*math.Max(math.Abs(fd), math.Abs(a)) {
				t.Errorf("%v: at fVar = 0, ∂/∂%s[%d]: central difference of Σ w⊙PredictLogDensity %.12g, gradient of Σ w⊙VariationalExpectations %.12g", r, name, j, fd, a)
			}
		}
	}
	check("fMean", mu, slices.Clone(prog.Grad(muP)))
	for _, p := range r.Params() {
		check(p.Name()+" (raw)", p.Raw(), slices.Clone(prog.Grad(p)))
	}
}

// checkPredictiveSmooth: the central differences of both predictive functions with respect to μ, v and every
// Param's raw value are the same at steps h and h/2, and every Param changes the predictive log density.
func checkPredictiveSmooth(t testing.TB, r rewound, d likData) {
	t.Helper()
	mu, v := slices.Clone(d.mu), slices.Clone(d.v)
	outputs := func() []float64 {
		m, s := r.pmv(t, mu, v, d.n)
		return append(append(r.pld(t, mu, v, d.y, d.n), m...), s...)
	}
	base := outputs()
	diff := func(x []float64, j int, h float64) []float64 {
		x0 := x[j]
		x[j] = x0 + h
		fp := outputs()
		x[j] = x0 - h
		fm := outputs()
		x[j] = x0
		out := make([]float64, len(fp))
		for i := range out {
			out[i] = (fp[i] - fm[i]) / (2 * h)
		}
		return out
	}
	check := func(name string, x []float64) {
		for j := range x {
			h := gradcheck.Step * math.Max(1, math.Abs(x[j]))
			d1, d2 := diff(x, j, h), diff(x, j, h/2)
			for i := range d1 {
				if math.IsInf(base[i], 0) {
					continue // an infinite variance (Student-t with ν ≤ 2) has no derivative
				}
				tol := math.Max(gradcheck.AbsTol*math.Max(1, math.Abs(base[i])), 1e-6*math.Max(math.Abs(d1[i]), math.Abs(d2[i])))
				if math.Abs(d1[i]-d2[i]) > tol {
					t.Errorf("%v: predictive output %d is not smooth in %s[%d]: central differences %.12g (step %g) and %.12g (step %g)", r, i, name, j, d1[i], h, d2[i], h/2)
				}
			}
		}
	}
	check("fMean", mu)
	check("fVar", v)
	for _, p := range r.Params() {
		check(p.Name()+" (raw)", p.Raw())
		raw := p.Raw()
		before := r.pld(t, mu, v, d.y, d.n)
		raw[0] += 0.1
		after := r.pld(t, mu, v, d.y, d.n)
		raw[0] -= 0.1
		if slices.Equal(before, after) {
			t.Errorf("%v: PredictLogDensity does not change with %s: does it read the Param's current value?", r, p.Name())
		}
	}
}

// checkLikelihoodErrors: non-finite and inconsistent operands are refused with errors (not panics).
func checkLikelihoodErrors(t testing.TB, r rewound, d likData) {
	t.Helper()
	refuse := func(what string, call func() error) {
		t.Helper()
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = nil
					t.Errorf("%v: %s panicked: %v", r, what, p)
				}
			}()
			err = call()
		}()
		if err == nil {
			t.Errorf("%v: %s accepted", r, what)
		}
	}
	for i, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for slot, name := range []string{"fMean", "fVar", "y"} {
			ops := [][]float64{slices.Clone(d.mu), slices.Clone(d.v), slices.Clone(d.y)}
			ops[slot][(3*i+slot)%len(ops[slot])] = bad
			if slot < 2 {
				refuse(fmt.Sprintf("PredictMeanVar: %v in %s", bad, name), func() error {
					_, _, err := r.PredictMeanVar(ops[0], ops[1], d.n)
					return err
				})
			}
			refuse(fmt.Sprintf("PredictLogDensity: %v in %s", bad, name), func() error {
				_, err := r.PredictLogDensity(ops[0], ops[1], ops[2], d.n)
				return err
			})
		}
	}
	refuse("PredictMeanVar: fVar shorter than fMean", func() error {
		_, _, err := r.PredictMeanVar(d.mu, d.v[1:], d.n)
		return err
	})
	refuse("PredictLogDensity: y with a value missing", func() error {
		_, err := r.PredictLogDensity(d.mu, d.v, d.y[1:], d.n)
		return err
	})
	refuse("PredictMeanVar: n = 0", func() error {
		_, _, err := r.PredictMeanVar(d.mu, d.v, 0)
		return err
	})
	g := graph.New(graph.Options{})
	out := r.VariationalExpectations(g.Input("mu", d.n, d.l), g.Input("v", d.n, d.l), g.Input("y", d.n+1, d.p))
	if g.Err() == nil {
		if _, err := g.CompileForward(map[string]*graph.Node{"ve": out}); err == nil {
			t.Errorf("%v: VariationalExpectations accepted y with %d rows for marginals with %d", r, d.n+1, d.n)
		}
	}
}

// checkLikelihoodSpec: the Spec round trip rebuilds a likelihood computing the same bits.
func checkLikelihoodSpec(t testing.TB, r rewound, d likData) {
	t.Helper()
	c, ok := r.Likelihood.(Component)
	if !ok {
		t.Errorf("%T does not describe itself (gp.Describer): model files cannot save it", r.Likelihood)
		return
	}
	// Perturb every Param, so that equal results below need the raw values restored, not the builder's
	// defaults.
	defer saveParams(r.Params())()
	for _, p := range r.Params() {
		raw := p.Raw()
		for i := range raw {
			raw[i] += 0.1
		}
	}
	back, ok := CheckSpecRoundTrip(t, c, gp.BuildOptions{Rand: rand.New(rand.NewPCG(3, 4))}).(gp.Likelihood)
	if !ok {
		t.Fatalf("%T rebuilt as a non-likelihood", r.Likelihood)
	}
	rb, _ := withRewind(t, back, r.seed)
	if back.String() != r.String() {
		t.Errorf("rebuilt %v, want %v", back, r)
	}
	m1, v1 := r.pmv(t, d.mu, d.v, d.n)
	m2, v2 := rb.pmv(t, d.mu, d.v, d.n)
	if !slices.Equal(m1, m2) || !slices.Equal(v1, v2) {
		t.Errorf("%v: the rebuilt likelihood's PredictMeanVar differs: %v %v, want %v %v", r, m2, v2, m1, v1)
	}
	if a, b := r.pld(t, d.mu, d.v, d.y, d.n), rb.pld(t, d.mu, d.v, d.y, d.n); !slices.Equal(a, b) {
		t.Errorf("%v: the rebuilt likelihood's PredictLogDensity differs: %v, want %v", r, b, a)
	}
	if a, b := r.ve(t, d.mu, d.v, d), rb.ve(t, d.mu, d.v, d); !slices.Equal(a, b) {
		t.Errorf("%v: the rebuilt likelihood's VariationalExpectations differ: %v, want %v", r, b, a)
	}
}
