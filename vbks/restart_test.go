package vbks

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// TestAdoptCopiesMatchingLeaves: a start from a donor copies the values of leaves of the same base (and SE into
// RQ, with α at the SE limit), the inducing inputs and the noise, and leaves the rest (fixed variances, leaves
// with no match) alone.
func TestAdoptCopiesMatchingLeaves(t *testing.T) {
	x, _ := scaled(t, TruthPerLinRQ, 40)
	z := testInducing(t, x, 5)
	cands, err := NewCandidates(parseAll(t, "PER*LIN*SE", "PER*LIN*RQ", "SE", "LIN+PER"), z, 40, LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	donor := cands[0]
	set := func(cd *Candidate, field string, v float64) {
		for _, lp := range leafParams(cd.Model.Layer.(*layers.SVGP).Kernel.Params()) {
			if p, ok := lp.params[field]; ok && p.Trainable() {
				if err := p.Set([]float64{v}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	set(donor, "period", 2.5)
	set(donor, "lengthscales", 0.3)
	set(donor, "variance", 7)
	if err := leafParams(donor.Model.Layer.(*layers.SVGP).Kernel.Params())[2].params["lengthscales"].Set([]float64{0.4}); err != nil {
		t.Fatal(err)
	}
	dz := donor.Model.Layer.(*layers.SVGP).Z
	dz.Raw()[0] = 0.123
	if err := donor.Model.Likelihood.Params()[0].Set([]float64{0.05}); err != nil {
		t.Fatal(err)
	}
	set(cands[1], "alpha", 3)
	st := stateOf(donor)

	value := func(cd *Candidate, leaf int, field string) []float64 {
		return leafParams(cd.Model.Layer.(*layers.SVGP).Kernel.Params())[leaf].params[field].Value()
	}
	rq := cands[1]
	if !rq.adopt(st) {
		t.Fatal("PER*LIN*RQ found no leaf to take from PER*LIN*SE")
	}
	for _, c := range []struct {
		leaf  int
		field string
		want  float64
	}{{0, "period", 2.5}, {0, "lengthscales", 0.3}, {0, "variance", 7}, {2, "lengthscales", 0.4}, {2, "alpha", seLimitAlpha}, {2, "variance", 1}} {
		if got := value(rq, c.leaf, c.field); math.Abs(got[0]-c.want) > 1e-9 {
			t.Errorf("RQ receiver leaf %d %s = %v, want %v", c.leaf, c.field, got, c.want)
		}
	}
	if !slices.Equal(rq.Model.Layer.(*layers.SVGP).Z.Value(), dz.Value()) {
		t.Error("inducing inputs not copied")
	}
	if got := rq.Model.Likelihood.Params()[0].Value()[0]; math.Abs(got-0.05) > 1e-12 {
		t.Errorf("noise %v, want 0.05", got)
	}

	// SE alone takes the SE leaf (not the PER one); LIN+PER takes LIN and PER but not SE's length-scale.
	if !cands[2].adopt(st) || math.Abs(value(cands[2], 0, "lengthscales")[0]-0.4) > 1e-9 {
		t.Errorf("SE receiver: %v", value(cands[2], 0, "lengthscales"))
	}
	lp := cands[3]
	if !lp.adopt(st) || math.Abs(value(lp, 0, "period")[0]-2.5) > 1e-9 {
		t.Errorf("LIN+PER receiver: period %v", value(lp, 0, "period"))
	}

	// Nothing in common: no start.
	other, err := NewCandidates(parseAll(t, "RQ"), z, 40, LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if other[0].adopt(stateOf(cands[3])) {
		t.Error("RQ took a start from LIN+PER")
	}
}

// TestRestartNeverLowersELBO: after Restart every candidate's ℒ_i* is at least what it was, the recorded value
// is the model's whole-data ELBO (one entry per fraction, replaced), and some start was taken.
func TestRestartNeverLowersELBO(t *testing.T) {
	x, y := scaled(t, TruthPerLinRQ, 120)
	z := testInducing(t, x, 8)
	c := LocalConfig{BatchSize: 32, PolishIters: 60, Donors: 2}
	cands, err := NewCandidates(parseAll(t, "PER*LIN*SE", "PER*LIN*RQ", "SE+LIN", "RQ"), z, 120, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FitFraction(cands, x, y, 20, 3, c); err != nil {
		t.Fatal(err)
	}
	before := make([]float64, len(cands))
	for i, cd := range cands {
		before[i] = cd.ELBO()
	}
	if _, err := Restart(cands, x, y, 4, c); err != nil {
		t.Fatal(err)
	}
	improved := 0
	for i, cd := range cands {
		if cd.ELBO() < before[i] {
			t.Errorf("%s: ℒ* fell from %v to %v", cd.Expr, before[i], cd.ELBO())
		}
		if cd.ELBO() > before[i] {
			improved++
		}
		whole, err := WholeELBO(cd.Model, x, y, c.Graph)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(whole-cd.ELBO()) > 1e-8*math.Max(1, math.Abs(whole)) {
			t.Errorf("%s: recorded ℒ* %v, model's ELBO %v", cd.Expr, cd.ELBO(), whole)
		}
		if len(cd.ELBOs) != 1 {
			t.Errorf("%s: %d ELBOs recorded, want 1 (Restart replaces the fraction's value)", cd.Expr, len(cd.ELBOs))
		}
	}
	t.Logf("before %v after %v", before, []float64{cands[0].ELBO(), cands[1].ELBO(), cands[2].ELBO(), cands[3].ELBO()})
	if improved == 0 {
		t.Error("no candidate improved from another's start")
	}
}

// TestAdoptReproducesNestedDonor: PER*LIN*RQ started from PER*LIN*SE's values has the same collapsed bound (SE
// is RQ's α → ∞ limit), so the larger kernel starts exactly where the smaller one is.
func TestAdoptReproducesNestedDonor(t *testing.T) {
	x, y := scaled(t, TruthPerLinRQ, 60)
	z := testInducing(t, x, 6)
	c := LocalConfig{PolishIters: 40}
	cands, err := NewCandidates(parseAll(t, "PER*LIN*SE", "PER*LIN*RQ"), z, 60, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := cands[0].polish(x, y, c); err != nil {
		t.Fatal(err)
	}
	bound := func(cd *Candidate) float64 {
		l := cd.Model.Layer.(*layers.SVGP)
		s, err := models.NewSGPRShared(l.Kernel, l.Z, cd.Model.Likelihood.Params()[0], nil, l.Jitter())
		if err != nil {
			t.Fatal(err)
		}
		return gptest.EvalScalar(t, s.ELBO, x, y)
	}
	want, before := bound(cands[0]), bound(cands[1])
	if !cands[1].adopt(stateOf(cands[0])) {
		t.Fatal("no leaf matched")
	}
	if got := bound(cands[1]); math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("RQ from SE's values: bound %.10g, SE's %.10g (RQ's own start %.6g)", got, want, before)
	}
}

// TestPolishFailureUndone: a polish that fails (a NaN target) is counted, returns its error and leaves every
// Param as it was.
func TestPolishFailureUndone(t *testing.T) {
	x, y := scaled(t, TruthPerLinRQ, 30)
	z := testInducing(t, x, 4)
	cands, err := NewCandidates(parseAll(t, "PER*LIN"), z, 30, LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cd := cands[0]
	before := graph.SnapshotRaw(cd.Model.Params())
	y.Set(3, 0, math.NaN())
	if err := cd.polish(x, y, LocalConfig{PolishIters: 20}); err == nil {
		t.Fatal("NaN target: want an error")
	}
	if cd.PolishErrors != 1 {
		t.Errorf("PolishErrors %d, want 1", cd.PolishErrors)
	}
	for i, p := range cd.Model.Params() {
		if !slices.Equal(p.Raw(), before[i]) {
			t.Errorf("%s changed: %v → %v", p.Name(), before[i], p.Raw())
		}
	}
}

// TestRestartFreshStart: a fit stuck in a poor basin (its period a tenth of the configured one) is replaced by the fresh start, which
// is exactly a polished fit from the configured hyperparameters with inducing inputs at the k-means centres of
// the rows; with no fresh starts (and no donors) Restart changes nothing.
func TestRestartFreshStart(t *testing.T) {
	x, y := scaled(t, TruthPerLinRQ, 120)
	z := testInducing(t, x, 8)
	const seed = 4
	c := LocalConfig{BatchSize: 32, PolishIters: 60, Donors: -1}
	stuck := func() *Candidate {
		cands, err := NewCandidates(parseAll(t, "PER*LIN"), z, 120, c)
		if err != nil {
			t.Fatal(err)
		}
		cd := cands[0]
		per := leafParams(cd.layer().Kernel.Params())[0].params["period"]
		if err := per.Set([]float64{0.1 * per.Value()[0]}); err != nil {
			t.Fatal(err)
		}
		if _, err := FitFraction(cands, x, y, 20, 3, c); err != nil {
			t.Fatal(err)
		}
		return cd
	}

	// What the fresh start should find: the configured candidate, its Z at the rows' k-means centres, polished.
	ref, err := NewCandidates(parseAll(t, "PER*LIN"), z, 120, c)
	if err != nil {
		t.Fatal(err)
	}
	zf, err := SharedInducing(x, 8, rand.New(rand.NewPCG(seed, 0x2a))) // Restart's draw
	if err != nil {
		t.Fatal(err)
	}
	copy(ref[0].layer().Z.Raw(), zf.RawMatrix().Data)
	want := ref[0].refit(x, y, rand.New(rand.NewPCG(1, 1)), c)

	off := stuck()
	before := off.ELBO()
	if _, err := Restart([]*Candidate{off}, x, y, seed, LocalConfig{BatchSize: 32, PolishIters: 60, Donors: -1, FreshStarts: -1}); err != nil {
		t.Fatal(err)
	}
	if off.ELBO() != before {
		t.Errorf("no fresh starts and no donors, yet ℒ* moved from %v to %v", before, off.ELBO())
	}

	cd := stuck()
	if !(want > before) {
		t.Fatalf("the short period is no poor basin here: its ℒ* %v, the fresh fit's %v", before, want)
	}
	if _, err := Restart([]*Candidate{cd}, x, y, seed, c); err != nil {
		t.Fatal(err)
	}
	if math.Abs(cd.ELBO()-want) > 1e-6*math.Abs(want) {
		t.Errorf("after the fresh start ℒ* = %v, want the fresh fit's %v (stuck fit: %v)", cd.ELBO(), want, before)
	}
	if !slices.Equal(cd.layer().Z.Value(), ref[0].layer().Z.Value()) {
		t.Error("the kept start's inducing inputs differ from the fresh fit's")
	}
	t.Logf("stuck %.2f, fresh %.2f", before, cd.ELBO())
}

// testInducing is m k-means inducing inputs of x from a fixed seed.
func testInducing(t *testing.T, x *mat.Dense, m int) *mat.Dense {
	t.Helper()
	z, err := SharedInducing(x, m, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return z
}
