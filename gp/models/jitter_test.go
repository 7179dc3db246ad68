package models_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// Issue 31, deliverable 5: Kuu is factorised as is (gp.JitterOnFailure, the default) and jittered only when its
// Cholesky fails, through the graph's escalation, which counts it.

// seMatrix returns the SE kernel matrix σ² exp(−½ Σ_d (a_d − b_d)²/ℓ_d²) of the rows of a and b, in plain Go.
func seMatrix(a, b *mat.Dense, variance float64, ls []float64) *mat.Dense {
	na, d := a.Dims()
	nb, _ := b.Dims()
	k := mat.NewDense(na, nb, nil)
	for i := 0; i < na; i++ {
		for j := 0; j < nb; j++ {
			r2 := 0.0
			for c := 0; c < d; c++ {
				u := (a.At(i, c) - b.At(j, c)) / ls[c]
				r2 += u * u
			}
			k.Set(i, j, variance*math.Exp(-r2/2))
		}
	}
	return k
}

// symOf returns (a + aᵀ)/2 + jitter·I as a SymDense.
func symOf(a *mat.Dense, jitter float64) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 0.5 * (a.At(i, j) + a.At(j, i))
			if i == j {
				v += jitter
			}
			s.SetSym(i, j, v)
		}
	}
	return s
}

// titsiasBound is Titsias' (2009) collapsed bound computed directly with gonum, for P outputs sharing the kernel:
// Σ_p log N(y_p | 0, Qff + σ²I) − P·tr(Kff − Qff)/(2σ²), Qff = Kfu (Kuu + jitter·I)⁻¹ Kuf, for an SE kernel.
func titsiasBound(t *testing.T, x, y, z *mat.Dense, variance float64, ls []float64, noise, jitter float64) float64 {
	t.Helper()
	n, _ := x.Dims()
	_, p := y.Dims()
	var cu mat.Cholesky
	if !cu.Factorize(symOf(seMatrix(z, z, variance, ls), jitter)) {
		t.Fatal("reference: Kuu not positive definite")
	}
	kuf := seMatrix(z, x, variance, ls)
	var w, q mat.Dense
	if err := cu.SolveTo(&w, kuf); err != nil {
		t.Fatal(err)
	}
	q.Mul(kuf.T(), &w) // Qff [N,N]
	var cs mat.Cholesky
	if !cs.Factorize(symOf(&q, noise)) {
		t.Fatal("reference: Qff + σ²I not positive definite")
	}
	bound := 0.0
	for c := 0; c < p; c++ {
		yc := mat.NewVecDense(n, mat.Col(nil, c, y))
		var a mat.VecDense
		if err := cs.SolveVecTo(&a, yc); err != nil {
			t.Fatal(err)
		}
		bound -= 0.5 * (float64(n)*math.Log(2*math.Pi) + cs.LogDet() + mat.Dot(yc, &a))
	}
	tr := 0.0
	for i := 0; i < n; i++ {
		tr += variance - q.At(i, i) // k(x_i, x_i) = σ² for SE
	}
	return bound - float64(p)*tr/(2*noise)
}

// evalStats evaluates f's scalar on (x, y) in a fresh graph and returns it with the graph's Cholesky statistics.
func evalStats(t *testing.T, f func(x, y *graph.Node) *graph.Node, x, y *mat.Dense) (float64, ops.CholeskyStatsSnapshot) {
	t.Helper()
	n, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.CompileForward(map[string]*graph.Node{"v": f(g.Input("x", n, d), g.Input("y", n, p))})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	for name, v := range map[string]*mat.Dense{"x": x, "y": y} {
		if err := prog.Set(name, mat.DenseCopyOf(v).RawMatrix().Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return prog.Output("v")[0], prog.CholeskyStats()
}

// jitterCase is a small well-conditioned SGPR problem: 30 rows, 2 inputs, 2 outputs, 6 k-means inducing inputs
// and an SE-ARD kernel.
func jitterCase(t *testing.T) (x, y, z *mat.Dense, k *gp.Stationary) {
	t.Helper()
	rng := rand.New(rand.NewPCG(31, 5))
	x, y = toy(rng, 30, 2, 2)
	z, err := gp.KMeans(x, 6, 20, rng)
	if err != nil {
		t.Fatal(err)
	}
	if k, err = gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: 1.3, Lengthscales: []float64{0.7, 1.1}}); err != nil {
		t.Fatal(err)
	}
	var es mat.EigenSym
	if !es.Factorize(symOf(seMatrix(z, z, 1.3, []float64{0.7, 1.1}), 0), false) {
		t.Fatal("eigenvalues of Kuu")
	}
	ev := es.Values(nil)
	if c := ev[len(ev)-1] / ev[0]; !(ev[0] > 0) || c > 1e6 {
		t.Fatalf("Kuu not well conditioned: eigenvalues %v", ev)
	}
	return x, y, z, k
}

func kernelValues(k *gp.Stationary) (float64, []float64) {
	return k.Variance.Value()[0], k.Lengthscales.Value()
}

// TestSGPRObjectiveIsTitsiasBound: with the default policy and a well-conditioned Kuu, SGPR's objective (its ELBO
// and train.Objective, what a fit reports) is the jitter-free Titsias bound computed directly, to a relative
// 1e-10, before and after an L-BFGS fit, and neither the evaluations nor the fit add any jitter. A fixed jitter
// (gp.JitterFixed, the policy before issue 31) is the bound of Kuu + jitter·I instead.
func TestSGPRObjectiveIsTitsiasBound(t *testing.T) {
	t.Parallel()
	x, y, z, k := jitterCase(t)
	const noise = 0.05
	s, err := models.NewSGPR(models.SGPRConfig{Kernel: k, Z: z, NoiseVariance: noise})
	if err != nil {
		t.Fatal(err)
	}
	if s.Jitter() != 0 || gp.JitterPolicyOf(s.Jitter()) != gp.JitterOnFailure {
		t.Fatalf("default SGPR: jitter %v, want 0 (%s)", s.Jitter(), gp.JitterOnFailure)
	}
	check := func(when string) float64 {
		t.Helper()
		v, ls := kernelValues(k)
		want := titsiasBound(t, x, y, mat.NewDense(6, 2, s.Z.Value()), v, ls, s.NoiseVariance(), 0)
		got, st := evalStats(t, s.ELBO, x, y)
		if math.Abs(got-want) > 1e-10*math.Abs(want) {
			t.Errorf("%s: SGPR ELBO %.15g, Titsias bound %.15g (relative %.2g)", when, got, want, math.Abs(got-want)/math.Abs(want))
		}
		if st.Retries != 0 || st.Failures != 0 || st.MaxJitter != 0 || st.Calls == 0 {
			t.Errorf("%s: Cholesky statistics %+v, want no jitter", when, st)
		}
		loss, err := train.Objective(s, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(-loss-want) > 1e-10*math.Abs(want) {
			t.Errorf("%s: train.Objective %.15g, −(Titsias bound) %.15g", when, loss, -want)
		}
		return want
	}
	before := check("initial parameters")

	// The same model with the former fixed jitter 1e-6 computes the bound of Kuu + 1e-6·I, not Kuu's.
	old, err := models.NewSGPR(models.SGPRConfig{Kernel: k, Z: z, NoiseVariance: noise, Jitter: models.DefaultSGPRJitter})
	if err != nil {
		t.Fatal(err)
	}
	oldGot, _ := evalStats(t, old.ELBO, x, y)
	v, ls := kernelValues(k)
	if want := titsiasBound(t, x, y, z, v, ls, noise, models.DefaultSGPRJitter); math.Abs(oldGot-want) > 1e-10*math.Abs(want) {
		t.Errorf("fixed jitter 1e-6: SGPR ELBO %.15g, bound of Kuu + 1e-6·I %.15g", oldGot, want)
	}
	if math.Abs(oldGot-before) <= 1e-10*math.Abs(before) {
		t.Errorf("fixed jitter 1e-6: SGPR ELBO %.15g equals the jitter-free bound %.15g", oldGot, before)
	}
	t.Logf("collapsed bound: fixed jitter 1e-6 %.12g, jitter-free %.12g (difference %.3g)", oldGot, before, before-oldGot)

	// A short fit keeps Kuu well conditioned (condition number about 40): the objective is still the bound.
	res, err := train.TrainLBFGS(s, x, y, train.LBFGSConfig{Iters: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cholesky.Retries != 0 || res.Cholesky.Failures != 0 || res.Cholesky.Calls == 0 {
		t.Errorf("L-BFGS fit: Cholesky statistics %+v, want no jitter", res.Cholesky)
	}
	if c := kuuCondition(t, s, k); c > 1e3 {
		t.Fatalf("after the short fit: Kuu's condition number %.3g", c)
	}
	after := check("after L-BFGS")
	if !(after > before) {
		t.Errorf("L-BFGS: bound %v, %v before", after, before)
	}
	t.Logf("after %d L-BFGS iterations: bound %.12g, %d Cholesky calls, %d jittered retries", res.Steps, after, res.Cholesky.Calls, res.Cholesky.Retries)
	// Fitted on, with growing length-scales: still no jitter.
	res, err = train.TrainLBFGS(s, x, y, train.LBFGSConfig{Iters: 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cholesky.Retries != 0 || res.Cholesky.Failures != 0 {
		t.Errorf("longer L-BFGS fit: Cholesky statistics %+v, want no jitter", res.Cholesky)
	}
	t.Logf("%d more L-BFGS iterations: Kuu's condition number %.3g, %d Cholesky calls, %d jittered retries", res.Steps, kuuCondition(t, s, k), res.Cholesky.Calls, res.Cholesky.Retries)
}

// kuuCondition returns the 2-norm condition number of s's Kuu (no jitter).
func kuuCondition(t *testing.T, s *models.SGPR, k *gp.Stationary) float64 {
	t.Helper()
	v, ls := kernelValues(k)
	m := s.Z.Shape()[0]
	z := mat.NewDense(m, 2, s.Z.Value())
	var es mat.EigenSym
	if !es.Factorize(symOf(seMatrix(z, z, v, ls), 0), false) {
		t.Fatal("eigenvalues of Kuu")
	}
	ev := es.Values(nil)
	return ev[m-1] / ev[0]
}

// TestSVGPOptimalQIsTitsiasBound: the default (whitened) SVGP layer factorises Kuu without jitter: at the
// optimal q(v) = N(Σ A Y/σ², Σ), Σ = (I + AAᵀ/σ²)⁻¹, A = L_u⁻¹K_uf, the full-batch SVGP ELBO equals the directly
// computed jitter-free Titsias bound, which is also what the SGPR over the layer's Params (models.NewSGPRShared,
// VBKS's polish) computes, without a jittered retry.
func TestSVGPOptimalQIsTitsiasBound(t *testing.T) {
	t.Parallel()
	x, y, z, k := jitterCase(t)
	const noise = 0.05
	n, _ := x.Dims()
	l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l.Jitter() != 0 {
		t.Fatalf("default SVGP layer: jitter %v, want 0", l.Jitter())
	}
	lik := gaussian(t, noise)
	m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: n})
	if err != nil {
		t.Fatal(err)
	}
	// Optimal whitened q(v), in plain Go.
	v, ls := kernelValues(k)
	var cu mat.Cholesky
	if !cu.Factorize(symOf(seMatrix(z, z, v, ls), 0)) {
		t.Fatal("Kuu not PD")
	}
	var lu mat.TriDense
	cu.LTo(&lu)
	a := seMatrix(z, x, v, ls)
	if err := a.Solve(&lu, a); err != nil { // A = L_u⁻¹K_uf
		t.Fatal(err)
	}
	var prec mat.Dense
	prec.Mul(a, a.T())
	prec.Scale(1/noise, &prec)
	var cp mat.Cholesky
	if !cp.Factorize(symOf(&prec, 1)) { // I + AAᵀ/σ²
		t.Fatal("precision not PD")
	}
	var sigma mat.SymDense
	if err := cp.InverseTo(&sigma); err != nil {
		t.Fatal(err)
	}
	var ay, mu mat.Dense
	ay.Mul(a, y)
	mu.Mul(&sigma, &ay)
	mu.Scale(1/noise, &mu)
	if err := l.Q.Mu.Set(mu.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	var cs mat.Cholesky
	if !cs.Factorize(&sigma) {
		t.Fatal("Σ not PD")
	}
	var lsig mat.TriDense
	cs.LTo(&lsig)
	for o := 0; o < 2; o++ {
		if err := l.Q.SetSqrt(o, mat.DenseCopyOf(&lsig).RawMatrix().Data); err != nil {
			t.Fatal(err)
		}
	}
	want := titsiasBound(t, x, y, z, v, ls, noise, 0)
	got, st := evalStats(t, m.ELBO, x, y)
	if math.Abs(got-want) > 1e-10*math.Abs(want) {
		t.Errorf("SVGP ELBO at the optimal q %.15g, Titsias bound %.15g (relative %.2g)", got, want, math.Abs(got-want)/math.Abs(want))
	}
	if st.Retries != 0 || st.Failures != 0 || st.Calls == 0 {
		t.Errorf("SVGP: Cholesky statistics %+v, want no jitter", st)
	}
	s, err := models.NewSGPRShared(k, l.Z, lik.Params()[0], nil, l.Jitter())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := evalStats(t, s.ELBO, x, y); math.Abs(b-want) > 1e-10*math.Abs(want) {
		t.Errorf("shared SGPR %.15g, Titsias bound %.15g", b, want)
	}
}

// TestJitterOnlyOnFailure: a Kuu that is not numerically positive definite (repeated inducing inputs) still
// factorises under the default policy, through the graph's escalating jitter, and the Cholesky statistics count
// the retries; a fixed jitter of 1e-6 (the former default) needs none there.
func TestJitterOnlyOnFailure(t *testing.T) {
	t.Parallel()
	x, y, _, k := jitterCase(t)
	z := mat.NewDense(6, 2, nil)
	for i := 0; i < 6; i++ {
		z.SetRow(i, x.RawRowView(i%2)) // three copies each of two rows: rank 2
	}
	for _, c := range []struct {
		name   string
		jitter float64
	}{{"on-failure", 0}, {"fixed 1e-6", models.DefaultSGPRJitter}} {
		s, err := models.NewSGPR(models.SGPRConfig{Kernel: k, Z: z, NoiseVariance: 0.05, Jitter: c.jitter})
		if err != nil {
			t.Fatal(err)
		}
		l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Jitter: c.jitter})
		if err != nil {
			t.Fatal(err)
		}
		sv, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: gaussian(t, 0.05), NumData: 30})
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range map[string]func(x, y *graph.Node) *graph.Node{"SGPR": s.ELBO, "SVGP": sv.ELBO} {
			v, st := evalStats(t, f, x, y)
			if math.IsNaN(v) || math.IsInf(v, 0) || st.Failures != 0 {
				t.Errorf("%s, %s: ELBO %v, Cholesky statistics %+v", c.name, name, v, st)
			}
			switch {
			case c.jitter == 0 && (st.Retries == 0 || !(st.MaxJitter > 0)):
				t.Errorf("%s, %s: Cholesky statistics %+v, want jittered retries counted", c.name, name, st)
			case c.jitter > 0 && st.Retries != 0:
				t.Errorf("%s, %s: Cholesky statistics %+v, want no retry", c.name, name, st)
			}
			t.Logf("%s, %s: ELBO %.10g, %d Cholesky calls, %d jittered retries, largest jitter %.3g", c.name, name, v, st.Calls, st.Retries, st.MaxJitter)
		}
		// Prediction factorises the same Kuu the same way.
		if err := s.SetTrainingData(x, y); err != nil {
			t.Fatal(err)
		}
		p, err := s.Predict(x, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.FMean.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: prediction %v", c.name, v)
			}
		}
	}
}

// TestSGPRSpecJitterPolicies: the Spec records the policy. A default (on-failure) model writes
// "jitter_policy":"on-failure" with jitter 0 and is rebuilt as one; a fixed jitter writes exactly the Config of
// earlier versions (no policy field) and is rebuilt with its jitter, as is the Config of an old model file;
// inconsistent or unknown policies are refused.
func TestSGPRSpecJitterPolicies(t *testing.T) {
	t.Parallel()
	x, y, z, _ := jitterCase(t)
	for _, c := range []struct {
		jitter float64
		config string
	}{
		{0, `{"num_inducing":6,"input_dim":2,"jitter":0,"jitter_policy":"on-failure"}`},
		{1e-6, `{"num_inducing":6,"input_dim":2,"jitter":0.000001}`},
		{2.5e-5, `{"num_inducing":6,"input_dim":2,"jitter":0.000025}`},
	} {
		m, err := models.NewSGPR(models.SGPRConfig{Kernel: kernel(t, 2), Z: z, NoiseVariance: 0.2, Jitter: c.jitter, X: x, Y: y})
		if err != nil {
			t.Fatal(err)
		}
		spec, err := m.Spec()
		if err != nil {
			t.Fatal(err)
		}
		if string(spec.Config) != c.config {
			t.Errorf("jitter %v: Config %s, want %s", c.jitter, spec.Config, c.config)
		}
		back := gptest.CheckSpecRoundTrip(t, m, gp.BuildOptions{}).(*models.SGPR)
		if back.Jitter() != c.jitter {
			t.Errorf("jitter %v: rebuilt with %v", c.jitter, back.Jitter())
		}
		if err := back.SetTrainingData(x, y); err != nil {
			t.Fatal(err)
		}
		p1, err := m.Predict(x, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p2, err := back.Predict(x, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(p1.FMean, p2.FMean) || !mat.Equal(p1.FVar, p2.FVar) {
			t.Errorf("jitter %v: predictions differ after the round trip", c.jitter)
		}
	}
	k, err := kernel(t, 2).(gp.Describer).Spec()
	if err != nil {
		t.Fatal(err)
	}
	build := func(config string) (any, error) {
		return gp.BuildSpec(gp.Spec{Kind: models.KindSGPR, Config: json.RawMessage(config), Children: []gp.Spec{k}}, gp.BuildOptions{})
	}
	for config, want := range map[string]float64{
		`{"num_inducing":3,"input_dim":2,"jitter":1e-6}`:                           1e-6, // as every file before issue 31
		`{"num_inducing":3,"input_dim":2,"jitter":1e-6,"jitter_policy":"fixed"}`:   1e-6,
		`{"num_inducing":3,"input_dim":2,"jitter":0,"jitter_policy":"on-failure"}`: 0,
		`{"num_inducing":3,"input_dim":2,"jitter_policy":"on-failure"}`:            0,
	} {
		v, err := build(config)
		if err != nil {
			t.Errorf("%s: %v", config, err)
			continue
		}
		if got := v.(*models.SGPR).Jitter(); got != want {
			t.Errorf("%s: jitter %v, want %v", config, got, want)
		}
	}
	for _, config := range []string{
		`{"num_inducing":3,"input_dim":2,"jitter":0}`,
		`{"num_inducing":3,"input_dim":2,"jitter":1e-6,"jitter_policy":"on-failure"}`,
		`{"num_inducing":3,"input_dim":2,"jitter":0,"jitter_policy":"fixed"}`,
		`{"num_inducing":3,"input_dim":2,"jitter":-1e-6,"jitter_policy":"fixed"}`,
		`{"num_inducing":3,"input_dim":2,"jitter":1e-6,"jitter_policy":"sometimes"}`,
	} {
		if v, err := build(config); err == nil || !errors.Is(err, gp.ErrConfig) || !strings.Contains(err.Error(), "jitter") {
			t.Errorf("%s: built %T, error %v (want a jitter error wrapping gp.ErrConfig)", config, v, err)
		}
	}
	for _, j := range []float64{-1e-6, math.NaN(), math.Inf(1)} {
		if _, err := models.NewSGPR(models.SGPRConfig{Kernel: kernel(t, 2), Z: z, Jitter: j}); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("jitter %v: error %v, want gp.ErrConfig", j, err)
		}
	}
}
