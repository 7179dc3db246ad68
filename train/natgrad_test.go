package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
)

// conjugate is a whitened, conjugate toy problem: prior v ~ N(0, I_M) per output, y_n = a_nᵀv + ε with
// ε ~ N(0, σ²), rows a_n of the fixed matrix A [N,M], targets Y [N,P] (one independent problem per column).
type conjugate struct {
	a      *mat.Dense // [N,M]
	y      *mat.Dense // [N,P]
	sigma2 float64
}

func newConjugate(n, m, p int, sigma2 float64, seed uint64) *conjugate {
	rng := rand.New(rand.NewPCG(seed, 99))
	a := mat.NewDense(n, m, nil)
	y := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
		for j := 0; j < p; j++ {
			y.Set(i, j, 2*rng.NormFloat64())
		}
	}
	return &conjugate{a: a, y: y, sigma2: sigma2}
}

// lossNode returns −Σ_n E_q log N(y_n | a_nᵀv, σ²) + KL(q‖N(0,I)) summed over outputs, with A [N,M] and Y [N,P]
// given as nodes (constants, or the training inputs x and y):
//
//	E_q log N(y|aᵀv, σ²) = −½log 2πσ² − ((y − aᵀm)² + aᵀSa)/(2σ²),   KL = ½[‖L‖²_F + ‖m‖² − M] − Σ log L_ii.
func lossNode(g *graph.Graph, q *gp.GaussianQ, a, y *graph.Node, sigma2 *graph.Node) *graph.Node {
	n, m := a.Shape()[0], q.M()
	mu := q.MeanNode(g)                          // [M,P]
	r := g.Sub(y, g.MatMul(a, mu, false, false)) // [N,P]
	quad := g.Dot(r, r)
	kl := g.Scale(g.Dot(mu, mu), 0.5)
	for p := 0; p < q.P(); p++ {
		l := q.SqrtNode(g, p)              // [M,M]
		al := g.MatMul(a, l, false, false) // [N,M]: Σ_n a_nᵀSa_n = ‖AL‖²_F
		quad = g.Add(quad, g.Dot(al, al))
		kl = g.Add(kl, g.Sub(g.Scale(g.Dot(l, l), 0.5), g.Scale(g.LogDetChol(l), 0.5)))
		kl = g.AddConst(kl, -0.5*float64(m))
	}
	np := float64(n * q.P())
	// (N·P/2)·log 2πσ² + quad/(2σ²)
	nll := g.Add(g.Scale(g.Log(g.Scale(sigma2, 2*math.Pi)), np/2), g.Div(quad, g.Scale(sigma2, 2)))
	return g.Add(nll, kl)
}

// program compiles the loss of c for q with a fixed σ².
func (c *conjugate) program(t *testing.T, q *gp.GaussianQ) *graph.Program {
	t.Helper()
	g := graph.New(graph.Options{})
	n, m := c.a.Dims()
	_, p := c.y.Dims()
	a := g.Const("A", mat.DenseCopyOf(c.a).RawMatrix().Data, n, m)
	y := g.Const("Y", mat.DenseCopyOf(c.y).RawMatrix().Data, n, p)
	prog, err := g.Compile(lossNode(g, q, a, y, g.Scalar("sigma2", c.sigma2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	return prog
}

// posterior returns the exact posterior precision P = AᵀA/σ² + I, covariance P⁻¹ and means [M,P] = P⁻¹AᵀY/σ².
func (c *conjugate) posterior() (prec, cov, mean *mat.Dense) {
	_, m := c.a.Dims()
	prec = mat.NewDense(m, m, nil)
	prec.Mul(c.a.T(), c.a)
	prec.Scale(1/c.sigma2, prec)
	for i := 0; i < m; i++ {
		prec.Set(i, i, prec.At(i, i)+1)
	}
	cov = mat.NewDense(m, m, nil)
	if err := cov.Inverse(prec); err != nil {
		panic(err)
	}
	b := mat.NewDense(m, c.y.RawMatrix().Cols, nil)
	b.Mul(c.a.T(), c.y)
	b.Scale(1/c.sigma2, b)
	mean = mat.NewDense(m, b.RawMatrix().Cols, nil)
	mean.Mul(cov, b)
	return prec, cov, mean
}

// logMarginal returns Σ_p log N(y_p | 0, AAᵀ + σ²I), the exact log marginal likelihood.
func (c *conjugate) logMarginal(sigma2 float64) float64 {
	n, _ := c.a.Dims()
	_, p := c.y.Dims()
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1, c.a)
	for i := 0; i < n; i++ {
		k.SetSym(i, i, k.At(i, i)+sigma2)
	}
	dist, ok := distmv.NewNormal(make([]float64, n), k, nil)
	if !ok {
		panic("not PD")
	}
	s := 0.0
	for j := 0; j < p; j++ {
		s += dist.LogProb(mat.Col(nil, j, c.y))
	}
	return s
}

func covOf(l []float64, m int) *mat.Dense {
	ld := mat.NewDense(m, m, l)
	s := mat.NewDense(m, m, nil)
	s.Mul(ld, ld.T())
	return s
}

func maxAbsDiff(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1)) // max row sum ≥ max entry
}

func newQ(t *testing.T, m, p int, c gp.QConfig) *gp.GaussianQ {
	t.Helper()
	q, err := gp.NewGaussianQ(m, p, c)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// randomizeQ sets a random mean and random lower-triangular factors (diagonal in [0.5, 1.5]).
func randomizeQ(t *testing.T, q *gp.GaussianQ, rng *rand.Rand) {
	t.Helper()
	m, p := q.M(), q.P()
	mu := make([]float64, m*p)
	for i := range mu {
		mu[i] = rng.NormFloat64()
	}
	if err := q.Mu.Set(mu); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < p; k++ {
		l := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j < i; j++ {
				l[i*m+j] = 0.3 * rng.NormFloat64()
			}
			l[i*m+i] = 0.5 + rng.Float64()
		}
		if err := q.SetSqrt(k, l); err != nil {
			t.Fatal(err)
		}
	}
}

func newHook(t *testing.T, c train.NatGradConfig) *train.NatGrad {
	t.Helper()
	h, err := train.NewNatGrad(c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// natStep runs the program and one hook step (index i); it returns the loss before the step.
func natStep(t *testing.T, prog *graph.Program, h *train.NatGrad, i int) float64 {
	t.Helper()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	if err := h.AfterBackward(&train.Step{Index: i, Loss: prog.Loss(), Grads: prog, Program: prog}); err != nil {
		t.Fatal(err)
	}
	return prog.Loss()
}

func lossAt(t *testing.T, prog *graph.Program) float64 {
	t.Helper()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return prog.Loss()
}

// checkPosterior compares q with the exact posterior of c (every output) to tol.
func checkPosterior(t *testing.T, c *conjugate, q *gp.GaussianQ, tol float64) {
	t.Helper()
	_, cov, mean := c.posterior()
	m, p := q.M(), q.P()
	d := maxAbsDiff(mat.NewDense(m, p, q.MeanValue()), mean)
	if d > tol {
		t.Errorf("mean off the exact posterior by %.3g (tol %g)", d, tol)
	}
	ds := 0.0
	for k := 0; k < p; k++ {
		ds = max(ds, maxAbsDiff(covOf(q.SqrtValue(k), m), cov))
	}
	if ds > tol {
		t.Errorf("covariance off the exact posterior by %.3g (tol %g)", ds, tol)
	}
	t.Logf("distance to the exact posterior: mean %.2g, covariance %.2g", d, ds)
}

// TestNatGradOneStepIsExact: with a Gaussian likelihood one natural step with γ = 1 lands on the exact posterior
// (the defining property; Hensman et al. 2013, Salimbeni et al. 2018, GPflow test_natural_gradient.py), the
// negative ELBO there equals −log p(y), and a second step does not move it.
func TestNatGradOneStepIsExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		scale float64 // 0: random initial q; else L = scale·I, m = 0
	}{
		{"random", 0},
		{"smallSqrt", 1e-3}, // GPflow's "small q_sqrt" regression case
		{"largeSqrt", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newConjugate(9, 5, 2, 0.3, 1)
			q := newQ(t, 5, 2, gp.QConfig{SqrtScale: tc.scale})
			if tc.scale == 0 {
				randomizeQ(t, q, rand.New(rand.NewPCG(2, 2)))
			}
			prog := c.program(t, q)
			h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 1})
			natStep(t, prog, h, 0)
			// Tolerance 1e-8 absolute on entries of order 1. Observed: ~1e-15, and ~2e-12 in the small-q_sqrt
			// case, which cancels Λ = 10⁶·I against the gradient term −½S⁻¹.
			checkPosterior(t, c, q, 1e-8)
			want := -c.logMarginal(c.sigma2)
			if got := lossAt(t, prog); !scalar.EqualWithinAbsOrRel(got, want, 1e-8, 1e-10) {
				t.Errorf("loss at the natural-gradient optimum %.12g, want −log p(y) = %.12g", got, want)
			}
			mu0, l0 := q.MeanValue(), q.SqrtValue(1)
			natStep(t, prog, h, 1)
			if d := maxAbsDiff(mat.NewDense(5, 2, q.MeanValue()), mat.NewDense(5, 2, mu0)); d > 1e-10 {
				t.Errorf("second step moved the mean by %.3g", d)
			}
			if d := maxAbsDiff(mat.NewDense(5, 5, q.SqrtValue(1)), mat.NewDense(5, 5, l0)); d > 1e-10 {
				t.Errorf("second step moved the factor by %.3g", d)
			}
			if s := h.Stats(); s.Steps != 2 || s.Updates != 4 || s.Halvings != 0 || s.LastGamma != 1 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// TestNatGradHalfStep: γ = 0.5 moves halfway in natural parameters: Λ' = (Λ₀ + P)/2, θ₁' = (Λ₀m₀ + AᵀY/σ²)/2.
func TestNatGradHalfStep(t *testing.T) {
	t.Parallel()
	c := newConjugate(8, 4, 2, 0.5, 3)
	q := newQ(t, 4, 2, gp.QConfig{})
	randomizeQ(t, q, rand.New(rand.NewPCG(4, 4)))
	m := 4
	prec, _, mean := c.posterior()
	lam0, th0 := make([]*mat.Dense, 2), make([]*mat.VecDense, 2)
	for k := 0; k < 2; k++ {
		lam0[k] = mat.NewDense(m, m, nil)
		if err := lam0[k].Inverse(covOf(q.SqrtValue(k), m)); err != nil {
			t.Fatal(err)
		}
		th0[k] = mat.NewVecDense(m, nil)
		th0[k].MulVec(lam0[k], mat.NewDense(m, 2, q.MeanValue()).ColView(k))
	}
	prog := c.program(t, q)
	h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 0.5})
	natStep(t, prog, h, 0)
	for k := 0; k < 2; k++ {
		var wantLam mat.Dense
		wantLam.Add(lam0[k], prec)
		wantLam.Scale(0.5, &wantLam)
		var thStar, wantTh mat.VecDense
		thStar.MulVec(prec, mean.ColView(k))
		wantTh.AddVec(th0[k], &thStar)
		wantTh.ScaleVec(0.5, &wantTh)

		var lam mat.Dense
		if err := lam.Inverse(covOf(q.SqrtValue(k), m)); err != nil {
			t.Fatal(err)
		}
		var th mat.VecDense
		th.MulVec(&lam, mat.NewDense(m, 2, q.MeanValue()).ColView(k))
		if d := maxAbsDiff(&lam, &wantLam); d > 1e-8 {
			t.Errorf("output %d: precision off the halfway point by %.3g", k, d)
		}
		if d := maxAbsDiff(&th, &wantTh); d > 1e-8 {
			t.Errorf("output %d: θ₁ off the halfway point by %.3g", k, d)
		}
	}
}

// TestNatGradDiag: a mean-field q with γ = 0.5 decreases the loss at every step and converges to the
// mean-field optimum m = P⁻¹AᵀY/σ² (the same mean as the full posterior), S_ii = 1/P_ii. With M = 4,
// λ_max(D⁻¹P) < M = 4, so γ = 0.5 < 2/λ_max is a stable damped-Jacobi step (see NatGrad's doc).
func TestNatGradDiag(t *testing.T) {
	t.Parallel()
	c := newConjugate(10, 4, 1, 0.4, 5)
	q := newQ(t, 4, 1, gp.QConfig{Diag: true})
	prog := c.program(t, q)
	h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 0.5})
	prev := math.Inf(1)
	for i := 0; i < 200; i++ {
		l := natStep(t, prog, h, i)
		if l > prev+1e-12*math.Abs(prev) {
			t.Fatalf("step %d: loss rose from %.12g to %.12g", i, prev, l)
		}
		prev = l
	}
	prec, _, mean := c.posterior()
	if d := maxAbsDiff(mat.NewDense(4, 1, q.MeanValue()), mean); d > 1e-8 {
		t.Errorf("mean off the mean-field optimum by %.3g", d)
	}
	l := q.SqrtValue(0)
	for i := 0; i < 4; i++ {
		if got, want := l[i*4+i]*l[i*4+i], 1/prec.At(i, i); math.Abs(got-want) > 1e-10 {
			t.Errorf("S_%d%d = %.12g, want 1/P_ii = %.12g", i, i, got, want)
		}
	}
	// The mean-field bound lies above the full-covariance optimum −log p(y).
	if got, full := lossAt(t, prog), -c.logMarginal(c.sigma2); got < full {
		t.Errorf("mean-field loss %.10g below −log p(y) = %.10g", got, full)
	}
}

// TestNatGradRamp: Gamma(step) is log-linear from GammaStart (step 0) to Gamma (step RampSteps and after).
func TestNatGradRamp(t *testing.T) {
	t.Parallel()
	q := newQ(t, 2, 1, gp.QConfig{})
	h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 0.1, GammaStart: 1e-4, RampSteps: 6})
	for step, want := range []float64{1e-4, 1e-4 * math.Pow(1e3, 1.0/6), 1e-4 * math.Pow(1e3, 2.0/6), 1e-3 * math.Sqrt(10), 1e-4 * math.Pow(1e3, 4.0/6), 1e-4 * math.Pow(1e3, 5.0/6), 0.1, 0.1} {
		if got := h.Gamma(step); !scalar.EqualWithinRel(got, want, 1e-12) {
			t.Errorf("Gamma(%d) = %g, want %g", step, got, want)
		}
	}
	if got := h.Gamma(1000); got != 0.1 {
		t.Errorf("Gamma(1000) = %g after the ramp", got)
	}
	flat := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}})
	if got := flat.Gamma(0); got != train.DefaultNatGradGamma {
		t.Errorf("default Gamma %g, want %g", got, train.DefaultNatGradGamma)
	}
}

// conjModel is the conjugate problem as a gp.Model: x is A (rows a_n), y is Y; the noise variance σ² is a
// Param for Adam, q is for NatGrad.
type conjModel struct {
	q      *gp.GaussianQ
	sigma2 *graph.Param
}

func (m *conjModel) Loss(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	return lossNode(g, m.q, x, y, g.Param(m.sigma2))
}

func (m *conjModel) Params() []*graph.Param { return append(m.q.Params(), m.sigma2) }

// recordingOpt wraps Adam and records every Param it is asked to update.
type recordingOpt struct {
	adam train.Adam
	seen map[*graph.Param]bool
}

func (r *recordingOpt) Step(step int, ps []*graph.Param, gs [][]float64) error {
	for _, p := range ps {
		r.seen[p] = true
	}
	return r.adam.Step(step, ps, gs)
}

// TestNatGradInTrain: through train.Train, the q Params are claimed (the optimiser never sees them), Adam fits
// σ², and training converges to the maximum of the exact log marginal likelihood over σ² (at which the natural
// step keeps q exactly optimal, so the loss is −log p(y | σ²)).
func TestNatGradInTrain(t *testing.T) {
	t.Parallel()
	c := newConjugate(30, 3, 1, 0.3, 7)
	s2, err := graph.NewParam("sigma2", []float64{1}, graph.Positive{})
	if err != nil {
		t.Fatal(err)
	}
	model := &conjModel{q: newQ(t, 3, 1, gp.QConfig{}), sigma2: s2}
	h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{model.q}, Gamma: 1})
	opt := &recordingOpt{adam: train.Adam{LR: 0.05}, seen: map[*graph.Param]bool{}}
	res, err := train.Train(model, c.a, c.y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: 600, Optimizer: opt, Hooks: []train.Hook{h}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range model.q.Params() {
		if opt.seen[p] {
			t.Errorf("the optimiser updated claimed param %q", p.Name())
		}
	}
	if !opt.seen[s2] {
		t.Error("the optimiser never updated sigma2")
	}
	// Best σ² by golden-section search on the exact log marginal likelihood.
	lo, hi := math.Log(1e-3), math.Log(1e2)
	const phi = 0.6180339887498949
	for i := 0; i < 200; i++ {
		a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
		if c.logMarginal(math.Exp(a)) > c.logMarginal(math.Exp(b)) {
			hi = b
		} else {
			lo = a
		}
	}
	best := math.Exp((lo + hi) / 2)
	got := s2.Value()[0]
	if !scalar.EqualWithinRel(got, best, 1e-3) {
		t.Errorf("σ² = %.6g, want the marginal-likelihood maximiser %.6g", got, best)
	}
	if final, want := res.FinalLoss(), -c.logMarginal(got); !scalar.EqualWithinAbsOrRel(final, want, 1e-6, 1e-8) {
		t.Errorf("final loss %.10g, want −log p(y|σ²) = %.10g", final, want)
	}
	if h.Stats().Steps != 600 {
		t.Errorf("hook ran %d times", h.Stats().Steps)
	}
}

// TestCovGradFromSqrtFD checks ∇_S = CholeskyBackward(L, tril(∇_L)) against finite differences: for
// f(S) = tr(WS) + ½log det S + ¼Σ S_ij², ∇_L is the finite-difference gradient of L ↦ f(LLᵀ) over the lower
// triangle, and ∇_S is checked along symmetric perturbations (E_ij + E_ji gives 2∇S_ij off the diagonal).
func TestCovGradFromSqrtFD(t *testing.T) {
	t.Parallel()
	const n = 4
	rng := rand.New(rand.NewPCG(11, 11))
	w := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := rng.NormFloat64()
			w[i*n+j], w[j*n+i] = v, v
		}
	}
	f := func(s []float64) float64 {
		sym := mat.NewSymDense(n, append([]float64(nil), s...))
		var ch mat.Cholesky
		if !ch.Factorize(sym) {
			return math.NaN()
		}
		v := 0.5 * ch.LogDet()
		for i, x := range s {
			v += w[i]*x + 0.25*x*x
		}
		return v
	}
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = 0.4 * rng.NormFloat64()
		}
		l[i*n+i] = 0.8 + 0.4*rng.Float64()
	}
	outer := func(l []float64) []float64 { return covOf(l, n).RawMatrix().Data }
	var lower []int // indices of the lower triangle
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			lower = append(lower, i*n+j)
		}
	}
	x0 := make([]float64, len(lower))
	for k, idx := range lower {
		x0[k] = l[idx]
	}
	settings := &fd.Settings{Formula: fd.Central, Step: 1e-6}
	gx := fd.Gradient(nil, func(x []float64) float64 {
		lp := make([]float64, n*n)
		for k, idx := range lower {
			lp[idx] = x[k]
		}
		return f(outer(lp))
	}, x0, settings)
	gl := make([]float64, n*n)
	for k, idx := range lower {
		gl[idx] = gx[k]
	}
	gs := make([]float64, n*n)
	train.CovGradFromSqrt(gs, l, gl, n)

	s0 := outer(l)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			dir := func(h float64) float64 {
				s := append([]float64(nil), s0...)
				s[i*n+j] += h
				if i != j {
					s[j*n+i] += h
				}
				return f(s)
			}
			want := (dir(1e-6) - dir(-1e-6)) / 2e-6
			got := gs[i*n+j]
			if i != j {
				got *= 2
			}
			if !scalar.EqualWithinAbsOrRel(got, want, 1e-6, 1e-5) {
				t.Errorf("∇S(%d,%d): conversion %.8g, finite difference %.8g", i, j, got, want)
			}
			if gs[i*n+j] != gs[j*n+i] {
				t.Errorf("∇S not symmetric at (%d,%d)", i, j)
			}
		}
	}
}

// TestNatGradHalving: a step whose new precision is not PD is retried with γ halved (and counted); with no
// retries allowed it fails with a *NatGradError that unwraps to ops.ErrNotPD and leaves q unchanged.
// Loss ½‖m‖² − ¾‖L‖²_F from L = I: ∇_S = −¾I, so Λ' = 1 − 1.5γ: not PD at γ = 1, PD at γ = ½.
func TestNatGradHalving(t *testing.T) {
	t.Parallel()
	for _, diag := range []bool{false, true} {
		q := newQ(t, 3, 1, gp.QConfig{Diag: diag})
		g := graph.New(graph.Options{})
		mu, l := q.MeanNode(g), q.SqrtNode(g, 0)
		prog, err := g.Compile(g.Sub(g.Scale(g.Dot(mu, mu), 0.5), g.Scale(g.Dot(l, l), 0.75)), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()

		strict := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 1, MaxHalvings: -1})
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		before := append([]float64(nil), q.Sqrt[0].Raw()...)
		err = strict.AfterBackward(&train.Step{Index: 3, Grads: prog, Program: prog})
		var ne *train.NatGradError
		if !errors.As(err, &ne) || !errors.Is(err, ops.ErrNotPD) || ne.Step != 3 || ne.Halvings != 0 {
			t.Fatalf("diag=%v: got %v, want a *NatGradError unwrapping to ErrNotPD", diag, err)
		}
		for i, v := range q.Sqrt[0].Raw() {
			if v != before[i] {
				t.Fatalf("diag=%v: failed step changed the factor", diag)
			}
		}

		h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 1})
		natStep(t, prog, h, 0)
		if s := h.Stats(); s.Halvings != 1 {
			t.Errorf("diag=%v: %d halvings, want 1", diag, s.Halvings)
		}
		lv := q.SqrtValue(0)
		for i := 0; i < 3; i++ { // Λ' = 1 − 1.5·0.5 = 0.25, so L_ii = 2
			if math.Abs(lv[i*3+i]-2) > 1e-12 {
				t.Errorf("diag=%v: L_%d%d = %v, want 2", diag, i, i, lv[i*3+i])
			}
		}
	}
}

func TestNaturalStepErrors(t *testing.T) {
	t.Parallel()
	id := []float64{1, 0, 0, 1}
	if _, _, err := train.NaturalStep([]float64{0}, id, []float64{0, 0}, id, 2, 1); !errors.Is(err, ops.ErrShape) {
		t.Errorf("short m: %v, want ErrShape", err)
	}
	if _, _, err := train.NaturalStep([]float64{0, math.NaN()}, id, []float64{0, 0}, id, 2, 1); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("NaN m: %v, want ErrNonFinite", err)
	}
	if _, _, err := train.NaturalStep([]float64{0, 0}, id, []float64{0, 0}, id, 2, 0); err == nil {
		t.Error("gamma 0 accepted")
	}
	if _, _, err := train.NaturalStep([]float64{0, 0}, []float64{1, 0, 0, -1}, []float64{0, 0}, id, 2, 1); err == nil {
		t.Error("negative factor diagonal accepted")
	}
	if _, _, err := train.NaturalStep([]float64{0, 0}, id, []float64{0, 0}, []float64{-1, 0, 0, -1}, 2, 1); !errors.Is(err, ops.ErrNotPD) {
		t.Errorf("indefinite new precision: %v, want ErrNotPD", err)
	}
	if _, _, err := train.NaturalStepDiag([]float64{0}, []float64{1}, []float64{0}, []float64{-1}, 1); !errors.Is(err, ops.ErrNotPD) {
		t.Errorf("diag, negative new precision: %v, want ErrNotPD", err)
	}
	if _, _, err := train.NaturalStepDiag([]float64{0}, []float64{1, 2}, []float64{0}, []float64{0}, 1); !errors.Is(err, ops.ErrShape) {
		t.Errorf("diag, length mismatch: %v, want ErrShape", err)
	}
	// A zero gradient leaves (m, L) unchanged.
	nm, nl, err := train.NaturalStep([]float64{1, 2}, []float64{2, 0, 0.5, 1}, []float64{0, 0}, make([]float64, 4), 2, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []float64{1, 2} {
		if math.Abs(nm[i]-w) > 1e-14 {
			t.Errorf("zero gradient moved m: %v", nm)
		}
	}
	for i, w := range []float64{2, 0, 0.5, 1} {
		if math.Abs(nl[i]-w) > 1e-14 {
			t.Errorf("zero gradient moved L: %v", nl)
		}
	}
}

func TestNewNatGradErrors(t *testing.T) {
	t.Parallel()
	q := newQ(t, 2, 1, gp.QConfig{})
	for name, c := range map[string]train.NatGradConfig{
		"no q":            {},
		"nil q":           {Q: []*gp.GaussianQ{nil}},
		"duplicate q":     {Q: []*gp.GaussianQ{q, q}},
		"negative gamma":  {Q: []*gp.GaussianQ{q}, Gamma: -1},
		"NaN gamma":       {Q: []*gp.GaussianQ{q}, Gamma: math.NaN()},
		"negative start":  {Q: []*gp.GaussianQ{q}, GammaStart: -1},
		"ramp no steps":   {Q: []*gp.GaussianQ{q}, GammaStart: 1e-4},
		"negative ramp":   {Q: []*gp.GaussianQ{q}, RampSteps: -2},
		"infinite gamma":  {Q: []*gp.GaussianQ{q}, Gamma: math.Inf(1)},
		"infinite gstart": {Q: []*gp.GaussianQ{q}, GammaStart: math.Inf(1), RampSteps: 3},
	} {
		if _, err := train.NewNatGrad(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{q}})
	if got := len(h.Claims()); got != 2 {
		t.Errorf("%d claimed params, want 2 (mean and factor)", got)
	}
}

// TestNatGradSVGPEqualsSGPR is GPflow's test_natural_gradient.py case: an SVGP model with a Gaussian likelihood
// and inducing inputs Z ⊂ X reaches Titsias' collapsed bound (SGPR, same kernel, Z and noise) after ONE natural
// step with γ = 1, whitened or not, and from a tiny initial q_sqrt. (Test-only imports of gp/layers, gp/models
// and gp/likelihoods; the train package itself does not import them.)
func TestNatGradSVGPEqualsSGPR(t *testing.T) {
	t.Parallel()
	const n, m, noise = 30, 10, 0.1
	rng := rand.New(rand.NewPCG(21, 21))
	x, y := mat.NewDense(n, 2, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		a, b := 3*rng.Float64(), 3*rng.Float64()
		x.SetRow(i, []float64{a, b})
		y.Set(i, 0, math.Sin(2*a)*math.Cos(b)+0.3*rng.NormFloat64())
	}
	z := mat.DenseCopyOf(x.Slice(0, m, 0, 2))
	for _, tc := range []struct {
		name       string
		unwhitened bool
		sqrtScale  float64
	}{{"whitened", false, 0}, {"unwhitened", true, 0}, {"whitenedSmallSqrt", false, 1e-3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Lengthscales: []float64{0.8, 1.2}, Variance: 1.5})
			if err != nil {
				t.Fatal(err)
			}
			layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, Unwhitened: tc.unwhitened, QSqrtScale: tc.sqrtScale})
			if err != nil {
				t.Fatal(err)
			}
			lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: noise})
			if err != nil {
				t.Fatal(err)
			}
			svgp, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: n})
			if err != nil {
				t.Fatal(err)
			}
			// The SGPR jitter must match the layer's Kuu jitter for the bounds to agree exactly.
			sgpr, err := models.NewSGPR(models.SGPRConfig{Kernel: k, Z: z, NoiseVariance: noise, Jitter: layer.Jitter()})
			if err != nil {
				t.Fatal(err)
			}
			prog := fullBatchProgram(t, svgp, x, y)
			h := newHook(t, train.NatGradConfig{Q: []*gp.GaussianQ{layer.Q}, Gamma: 1})
			natStep(t, prog, h, 0)
			got := lossAt(t, prog)
			want := lossAt(t, fullBatchProgram(t, sgpr, x, y))
			if !scalar.EqualWithinAbsOrRel(got, want, 1e-6, 1e-7) {
				t.Errorf("SVGP loss after one natural step %.10g, SGPR loss %.10g", got, want)
			}
			t.Logf("SVGP %.12g, SGPR %.12g", got, want)
		})
	}
}

func fullBatchProgram(t *testing.T, model gp.Model, x, y *mat.Dense) *graph.Program {
	t.Helper()
	n, d := x.Dims()
	g := graph.New(graph.Options{})
	xn, yn := g.Input("x", n, d), g.Input("y", n, y.RawMatrix().Cols)
	prog, err := g.Compile(model.Loss(xn, yn), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	if err := prog.Set("x", mat.DenseCopyOf(x).RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("y", mat.DenseCopyOf(y).RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	return prog
}
