package vbks

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// scaled returns the first n rows of a synthetic set divided by their standard deviations (no centring, as the
// zoo does for these sets).
func scaled(t *testing.T, truth string, n int) (*mat.Dense, *mat.Dense) {
	t.Helper()
	x, y, _, _, err := Synthetic{Truth: truth, N: n, Seed: 3}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*mat.Dense{x, y} {
		v := m.RawMatrix().Data
		var s float64
		for _, e := range v {
			s += e * e
		}
		sd := math.Sqrt(s / float64(len(v)))
		for i := range v {
			v[i] /= sd
		}
	}
	return x, y
}

func parseAll(t *testing.T, ss ...string) []*grammar.Expr {
	t.Helper()
	var out []*grammar.Expr
	for _, s := range ss {
		e, err := grammar.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func smallConfig(workers int, kernels []*grammar.Expr) Config {
	return Config{Kernels: kernels, Fractions: 2, Top: 2, Seed: 5,
		Local:     LocalConfig{Iters: 30, FirstIters: 40, Restarts: 1, Workers: workers, NumInducing: 8},
		Posterior: PosteriorConfig{Iters: 300, MCSamples: 500}}
}

// TestRunDoesNotDependOnWorkers runs the whole pipeline twice, on one and on two workers, and requires equal
// results bit for bit: every candidate's randomness is its own, so parallelism changes only the wall time.
func TestRunDoesNotDependOnWorkers(t *testing.T) {
	x, y := scaled(t, TruthPerLinRQ, 120)
	ks := parseAll(t, "PER*LIN*RQ", "SE", "LIN+RQ")
	r1, err := Run(x, y, smallConfig(1, ks))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Run(x, y, smallConfig(2, ks))
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Steps) != 2 || r1.Steps[0].Rows != 60 || r1.Steps[1].Rows != 120 {
		t.Fatalf("steps %+v, want fractions of 60 and 120 rows", r1.Steps)
	}
	for f := range r1.Steps {
		sum := 0.0
		for i := range ks {
			a, b := r1.Steps[f].ELBOs[i], r2.Steps[f].ELBOs[i]
			if a != b || math.IsNaN(a) {
				t.Errorf("fraction %d kernel %d: ELBO %v with 1 worker, %v with 2", f, i, a, b)
			}
			if r1.Steps[f].Probs[i] != r2.Steps[f].Probs[i] {
				t.Errorf("fraction %d kernel %d: q*(k) %v vs %v", f, i, r1.Steps[f].Probs[i], r2.Steps[f].Probs[i])
			}
			sum += r1.Steps[f].Probs[i]
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("fraction %d: q*(k) sums to %v", f, sum)
		}
	}
	if len(r1.Top) != 2 || len(r1.Pruned.Probs) != 2 {
		t.Fatalf("pruned to %v (%v), want 2 kernels", r1.Top, r1.Pruned.Probs)
	}
	// The pruned set is the two largest ℒ_i*.
	last := r1.Steps[1].ELBOs
	for i, l := range last {
		if i != r1.Top[0] && i != r1.Top[1] && l > math.Min(last[r1.Top[0]], last[r1.Top[1]]) {
			t.Errorf("kernel %d (ELBO %v) was pruned but beats a kept one (%v)", i, l, r1.Top)
		}
	}
	for i, cd := range r1.Candidates {
		if len(cd.ELBOs) != 2 || cd.Err != nil {
			t.Errorf("candidate %d: ELBOs %v, err %v", i, cd.ELBOs, cd.Err)
		}
	}
}

// TestLocalELBOIsCollapsedBound pins what ℒ_i* is: after a fraction's fit, q(u) has been set to its optimum,
// so the SVGP's whole-data ELBO equals Titsias' collapsed bound (SGPR) at the same kernel, Z and noise.
func TestLocalELBOIsCollapsedBound(t *testing.T) {
	x, y := scaled(t, TruthPerRQLin, 80)
	ks := parseAll(t, "(PER+RQ)*LIN", "SE")
	z := testInducing(t, x, 6)
	cands, err := NewCandidates(ks, z, 80, LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FitFraction(cands, x, y, 25, 9, LocalConfig{BatchSize: 16}); err != nil {
		t.Fatal(err)
	}
	for _, cd := range cands {
		layer := cd.Model.Layer.(*layers.SVGP)
		zv := mat.NewDense(6, 1, layer.Z.Value())
		noise := cd.Model.Likelihood.Params()[0].Value()[0]
		sg, err := models.NewSGPR(models.SGPRConfig{Kernel: layer.Kernel, Z: zv, NoiseVariance: noise, Jitter: layer.Jitter()})
		if err != nil {
			t.Fatal(err)
		}
		bound := gptest.EvalScalar(t, sg.ELBO, x, y)
		if got := cd.ELBO(); math.Abs(got-bound) > 1e-7*math.Max(1, math.Abs(bound)) {
			t.Errorf("%s: ℒ* = %.10g, collapsed bound %.10g", cd.Expr, got, bound)
		}
	}
}

// TestWarmStartContinues checks that a fraction starts where the previous one ended: the fit on more data starts
// from the fitted model (far above a fresh initialisation's ELBO) and improves on it, and it does not restart
// from the initialisation (a fresh candidate fitted the same way ends elsewhere). Which of the two ends higher
// after 10 steps is not part of it: over seeds it goes either way, with a fixed Kuu jitter as without one.
func TestWarmStartContinues(t *testing.T) {
	x, y := scaled(t, TruthPerLinRQ, 160)
	ks := parseAll(t, "PER*LIN*RQ")
	z := testInducing(t, x, 8)
	c := LocalConfig{BatchSize: 32}
	warm, err := NewCandidates(ks, z, 80, c)
	if err != nil {
		t.Fatal(err)
	}
	x1, y1 := gather(x, y, seq(80))
	if _, err := FitFraction(warm, x1, y1, 300, 1, c); err != nil {
		t.Fatal(err)
	}
	cold, err := NewCandidates(ks, z, 160, c)
	if err != nil {
		t.Fatal(err)
	}
	before, err := WholeELBO(warm[0].Model, x, y, c.Graph)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := WholeELBO(cold[0].Model, x, y, c.Graph)
	if err != nil {
		t.Fatal(err)
	}
	if !(before > fresh+100) {
		t.Fatalf("fitted on half the rows: ELBO on all rows %v, a fresh candidate's %v", before, fresh)
	}
	for _, cs := range [][]*Candidate{warm, cold} {
		if _, err := FitFraction(cs, x, y, 10, 2, c); err != nil {
			t.Fatal(err)
		}
	}
	if w, k := warm[0].ELBO(), cold[0].ELBO(); !(w >= before) || w == k {
		t.Errorf("after 10 steps on all rows: warm-started ELBO %v (%v before them), fresh %v", w, before, k)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestFitBestEscapesTheWarmStart replays the local ELBOs of the last two fractions of a K_12 run on the
// PER×LIN×RQ set, where PER×LIN×RQ (index 10) overtakes (PER+RQ)×LIN (index 11) only at the end: q(g) warm-started
// from the previous fraction stays on index 11 (a local optimum of eq. 8), fitBest must not.
func TestFitBestEscapesTheWarmStart(t *testing.T) {
	prev := []float64{589.04, 305.16, 309.11, 355.37, 333.98, 167.99, 665.18, 432.88, 1048.04, 1068.16, 1064.36, 1068.39}
	last := []float64{701.71, 357.84, 372.33, 424.36, 406.54, 204.90, 768.21, 509.99, 1178.87, 1193.65, 1208.35, 1183.96}
	rng := rand.New(rand.NewPCG(1, 2))
	warm, err := fitBest(prev, nil, rng, PosteriorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := fitBest(last, warm, rng, PosteriorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if r := q.Ranking(); r[0] != 10 || q.Probs[10] < 0.5 {
		t.Errorf("posterior ranks %d first, q*(k_10) = %.3f; want kernel 10 with ≥ 0.5", r[0], q.Probs[10])
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	ks := parseAll(t, "SE", "LIN")
	x := mat.NewDense(10, 1, nil)
	y := mat.NewDense(10, 1, nil)
	x.Set(4, 0, math.NaN())
	var nf *datasets.NonFiniteError
	if _, err := Run(x, y, Config{Kernels: ks}); !errors.As(err, &nf) || nf.Row != 4 || nf.Col != 0 {
		t.Errorf("NaN at row 4: err %v", err)
	}
	x.Set(4, 0, 0)
	var se *ops.ShapeError
	if _, err := Run(x, mat.NewDense(10, 2, nil), Config{Kernels: ks}); !errors.As(err, &se) {
		t.Errorf("two target columns: err %v, want *ops.ShapeError", err)
	}
	if _, err := Run(x, y, Config{}); err == nil {
		t.Error("no kernels: no error")
	}
	if _, err := Run(x, y, Config{Kernels: append(ks, parseAll(t, "SE")...)}); err == nil {
		t.Error("a kernel listed twice: no error")
	}
}

// TestPredictiveMoments checks eq. 15 and the mixture density on hand-made components.
func TestPredictiveMoments(t *testing.T) {
	col := func(v ...float64) *mat.Dense { return mat.NewDense(len(v), 1, v) }
	means, vars := [][]float64{{1, -2}, {3, 0}}, [][]float64{{0.5, 1}, {2, 0.1}}
	weights := []float64{0.25, 0.75}
	cs := make([]gp.Component, 2)
	for i := range cs {
		cs[i] = gp.Component{Weight: weights[i], YMean: col(means[i]...), YVar: col(vars[i]...), FMean: col(means[i]...), FVar: col(0.5*vars[i][0], 0.5*vars[i][1])}
	}
	p := Mixture(cs)
	for n := range 2 {
		mu := 0.25*means[0][n] + 0.75*means[1][n]
		s2 := 0.25*(vars[0][n]+means[0][n]*means[0][n]) + 0.75*(vars[1][n]+means[1][n]*means[1][n]) - mu*mu
		if got, gv := p.YMean.At(n, 0), p.YVar.At(n, 0); math.Abs(got-mu) > 1e-14 || math.Abs(gv-s2) > 1e-13 {
			t.Errorf("row %d: moments (%v, %v), eq. 15 gives (%v, %v)", n, got, gv, mu, s2)
		}
		if p.FMean.At(n, 0) != p.YMean.At(n, 0) || !(p.FVar.At(n, 0) < p.YVar.At(n, 0)) {
			t.Errorf("row %d: f's moments (%v, %v) against y's (%v, %v)", n, p.FMean.At(n, 0), p.FVar.At(n, 0), p.YMean.At(n, 0), p.YVar.At(n, 0))
		}
	}
	y := []float64{0.5, -1}
	ld, err := LogDensity(p, y)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 2 {
		want := 0.0
		for i, w := range weights {
			v := vars[i][n]
			want += w * math.Exp(-0.5*(y[n]-means[i][n])*(y[n]-means[i][n])/v) / math.Sqrt(2*math.Pi*v)
		}
		if math.Abs(ld[n]-math.Log(want)) > 1e-12 {
			t.Errorf("row %d: log density %v, want %v", n, ld[n], math.Log(want))
		}
	}
	oneHot := []gp.Component{cs[0], cs[1]}
	oneHot[0].Weight, oneHot[1].Weight = 1, 0
	one := Mixture(oneHot)
	if m1, v1 := one.YMean.At(1, 0), one.YVar.At(1, 0); m1 != -2 || v1 != 1 {
		t.Errorf("a one-hot mixture: (%v, %v), want the first component (-2, 1)", m1, v1)
	}
	single, err := LogDensity(&gp.Prediction{YMean: cs[0].YMean, YVar: cs[0].YVar}, y)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 2 {
		d := y[n] - means[0][n]
		if want := -0.5 * (math.Log(2*math.Pi*vars[0][n]) + d*d/vars[0][n]); single[n] != want {
			t.Errorf("row %d: one Gaussian's log density %v, want %v", n, single[n], want)
		}
	}
	if _, err := LogDensity(p, []float64{1}); err == nil {
		t.Error("wrong number of targets: no error")
	}
}
