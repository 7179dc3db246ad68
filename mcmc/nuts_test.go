package mcmc

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// gaussian is the density N(mean, Σ) given Σ⁻¹ (the precision), d-dimensional.
type gaussian struct {
	mean []float64
	prec [][]float64
}

func (g *gaussian) Dim() int { return len(g.mean) }

func (g *gaussian) LogDensity(x, grad []float64) (float64, error) {
	d := len(x)
	lp := 0.0
	for i := 0; i < d; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			s += g.prec[i][j] * (x[j] - g.mean[j])
		}
		grad[i] = -s
		lp -= 0.5 * (x[i] - g.mean[i]) * s
	}
	return lp, nil
}

// correlated2D returns N((1, −1), Σ) with standard deviations (1, 2) and correlation rho.
func correlated2D(rho float64) (*gaussian, [2]float64) {
	s := [2]float64{1, 2}
	det := s[0] * s[0] * s[1] * s[1] * (1 - rho*rho)
	prec := [][]float64{
		{s[1] * s[1] / det, -rho * s[0] * s[1] / det},
		{-rho * s[0] * s[1] / det, s[0] * s[0] / det},
	}
	return &gaussian{mean: []float64{1, -1}, prec: prec}, s
}

// diagonalGaussian returns N(0, diag(sd²)).
func diagonalGaussian(sd []float64) *gaussian {
	d := len(sd)
	g := &gaussian{mean: make([]float64, d), prec: make([][]float64, d)}
	for i := range g.prec {
		g.prec[i] = make([]float64, d)
		g.prec[i][i] = 1 / (sd[i] * sd[i])
	}
	return g
}

// TestLeapfrogConservesEnergy: on a Gaussian, the leapfrog integrator's energy error stays bounded over 2000
// steps (no drift: it is symplectic), shrinks four-fold when the step halves (second order), and integrating
// back returns to the start (reversible).
func TestLeapfrogConservesEnergy(t *testing.T) {
	t.Parallel()
	g := diagonalGaussian([]float64{0.5, 1, 2, 3})
	maxErr := func(eps float64, steps int) (float64, float64) {
		h := &hamiltonian{d: g, invM: []float64{1, 1, 1, 1}}
		z := newPoint(4)
		copy(z.q, []float64{0.3, -1, 2, 0.5})
		copy(z.p, []float64{1, 0.2, -0.7, 0.4})
		if err := h.eval(&z); err != nil {
			t.Fatal(err)
		}
		start := newPoint(4)
		start.set(&z)
		h0 := h.energy(&z)
		worst, last := 0.0, 0.0
		for range steps {
			if err := h.leapfrog(&z, eps); err != nil {
				t.Fatal(err)
			}
			last = math.Abs(h.energy(&z) - h0)
			worst = math.Max(worst, last)
		}
		for range steps {
			if err := h.leapfrog(&z, -eps); err != nil {
				t.Fatal(err)
			}
		}
		for i := range z.q {
			if math.Abs(z.q[i]-start.q[i]) > 1e-9 || math.Abs(z.p[i]-start.p[i]) > 1e-9 {
				t.Errorf("ε %v: back at (%v, %v), started at (%v, %v)", eps, z.q, z.p, start.q, start.p)
				break
			}
		}
		return worst, last
	}
	e1, last := maxErr(0.1, 2000)
	e2, _ := maxErr(0.05, 4000)
	t.Logf("energy error over 2000 steps: max %.3g (ε 0.1), %.3g (ε 0.05); last %.3g", e1, e2, last)
	if e1 > 0.02 {
		t.Errorf("energy error %.3g with ε 0.1: want ≤ 0.02", e1)
	}
	if r := e1 / e2; r < 3.5 || r > 4.5 {
		t.Errorf("halving ε divides the energy error by %.3g, want ≈ 4 (second order)", r)
	}
}

// runGaussian runs 4 chains on g from dispersed starts.
func runGaussian(t *testing.T, g Density, seed uint64, o Options) []*Chain {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	inits := make([][]float64, 4)
	for c := range inits {
		inits[c] = make([]float64, g.Dim())
		for i := range inits[c] {
			inits[c][i] = 4*rng.Float64() - 2
		}
	}
	chains, err := Run(func(int) (Density, error) { return g, nil }, inits, seed, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chains
}

// coordinate returns coordinate i of every chain's draws.
func coordinate(chains []*Chain, i int) [][]float64 {
	out := make([][]float64, len(chains))
	for c, ch := range chains {
		out[c] = make([]float64, len(ch.Draws))
		for k, d := range ch.Draws {
			out[c][k] = d[i]
		}
	}
	return out
}

// TestNUTSCorrelatedGaussian: 4 chains on a 2-D Gaussian with correlation 0.9 and standard deviations 1 and 2
// recover each coordinate's mean, standard deviation and the correlation within 3.5 Monte-Carlo standard errors,
// with R̂ < 1.01, no divergences and bulk ESS above 1000.
func TestNUTSCorrelatedGaussian(t *testing.T) {
	t.Parallel()
	g, sd := correlated2D(0.9)
	chains := runGaussian(t, g, 11, Options{Warmup: 1000, Samples: 2000})
	for i := range 2 {
		s := Summarize(coordinate(chains, i))
		t.Logf("x%d: mean %.4f ± %.4f (want %v), sd %.4f ± %.4f (want %v), R̂ %.4f, ESS bulk %.0f tail %.0f", i, s.Mean, s.MCSEMean, g.mean[i], s.SD, s.MCSESD, sd[i], s.Rhat, s.ESSBulk, s.ESSTail)
		if d := math.Abs(s.Mean - g.mean[i]); d > 3.5*s.MCSEMean {
			t.Errorf("x%d: mean %.4f, want %v ± 3.5 × %.4f", i, s.Mean, g.mean[i], s.MCSEMean)
		}
		if d := math.Abs(s.SD - sd[i]); d > 3.5*s.MCSESD {
			t.Errorf("x%d: sd %.4f, want %v ± 3.5 × %.4f", i, s.SD, sd[i], s.MCSESD)
		}
		if !(s.Rhat < 1.01) || !(s.ESSBulk > 1000) {
			t.Errorf("x%d: R̂ %.4f, bulk ESS %.0f: want < 1.01 and > 1000", i, s.Rhat, s.ESSBulk)
		}
	}
	// The correlation: the product of the standardised coordinates, whose mean is ρ.
	prod := make([][]float64, len(chains))
	for c, ch := range chains {
		for _, d := range ch.Draws {
			prod[c] = append(prod[c], (d[0]-1)/sd[0]*(d[1]+1)/sd[1])
		}
	}
	s := Summarize(prod)
	if d := math.Abs(s.Mean - 0.9); d > 3.5*s.MCSEMean {
		t.Errorf("correlation %.4f ± %.4f, want 0.9", s.Mean, s.MCSEMean)
	}
	for _, ch := range chains {
		for _, st := range ch.Stats {
			if st.Divergent {
				t.Fatal("a divergent transition on a Gaussian")
			}
		}
	}
}

// TestStepSizeAdaptation: the dual averaging drives the acceptance statistic to its target: over the terminal
// adaptation window (the last 500 warmup iterations, after the metric's last update) its mean is within 0.03 of
// the target on a 10-D Gaussian whose scales span two orders of magnitude; the draws after warmup, taken at the
// averaged step size (Hoffman & Gelman 2014, §3.2), accept at least as often as the target (within 0.02: the
// averaged log step size lies below the iterates, as in Stan); and the adapted inverse metric is within 35% of the
// variances.
func TestStepSizeAdaptation(t *testing.T) {
	t.Parallel()
	sd := []float64{0.1, 0.2, 0.5, 1, 1, 2, 3, 5, 8, 10}
	for _, target := range []float64{0.65, 0.8, 0.95} {
		chains := runGaussian(t, diagonalGaussian(sd), 5, Options{Warmup: 1500, TermBuffer: 500, Samples: 1000, TargetAccept: target})
		term, after, nt, na := 0.0, 0.0, 0, 0
		for _, ch := range chains {
			for _, st := range ch.WarmupStats[len(ch.WarmupStats)-500:] {
				term += st.AcceptStat
				nt++
			}
			for _, st := range ch.Stats {
				after += st.AcceptStat
				na++
			}
			for i, v := range ch.InvMetric {
				if r := v / (sd[i] * sd[i]); r < 0.65 || r > 1.35 {
					t.Errorf("target %v: inverse metric %d is %.4g, variance %.4g", target, i, v, sd[i]*sd[i])
				}
			}
		}
		term, after = term/float64(nt), after/float64(na)
		t.Logf("target %.2f: mean acceptance %.4f over the terminal window, %.4f after warmup (step size %.4f)", target, term, after, chains[0].StepSize)
		if math.Abs(term-target) > 0.03 {
			t.Errorf("target %.2f: mean acceptance statistic %.4f over the terminal window", target, term)
		}
		if after < target-0.02 {
			t.Errorf("target %.2f: mean acceptance statistic %.4f after warmup", target, after)
		}
	}
}

// TestRunIsReproducible: the same seed gives the same draws bit for bit whatever GOMAXPROCS, and another seed
// other draws.
func TestRunIsReproducible(t *testing.T) {
	g, _ := correlated2D(0.5)
	o := Options{Warmup: 150, Samples: 100}
	prev := runtime.GOMAXPROCS(1)
	a := runGaussian(t, g, 3, o)
	runtime.GOMAXPROCS(4)
	b := runGaussian(t, g, 3, o)
	runtime.GOMAXPROCS(prev)
	c := runGaussian(t, g, 4, o)
	for k := range a {
		for i := range a[k].Draws {
			if !slices.Equal(a[k].Draws[i], b[k].Draws[i]) {
				t.Fatalf("chain %d draw %d: %v with GOMAXPROCS 1, %v with 4", k, i, a[k].Draws[i], b[k].Draws[i])
			}
		}
	}
	if slices.Equal(a[0].Draws[50], c[0].Draws[50]) {
		t.Error("seeds 3 and 4 gave the same draw")
	}
}

// halfSpace is N(0, 1) restricted to x < 1 (−Inf beyond).
type halfSpace struct{}

func (halfSpace) Dim() int { return 1 }
func (halfSpace) LogDensity(x, grad []float64) (float64, error) {
	if x[0] >= 1 {
		return math.Inf(-1), nil
	}
	grad[0] = -x[0]
	return -0.5 * x[0] * x[0], nil
}

// TestDivergencesAndTreeDepth: moves into a region of zero density are divergent and never drawn; a tree depth cap
// of 2 on a wide Gaussian saturates, and each iteration's depth and leapfrog count are reported.
func TestDivergencesAndTreeDepth(t *testing.T) {
	t.Parallel()
	ch, err := Sample(halfSpace{}, []float64{0}, ChainRand(1, 0), Options{Warmup: 200, Samples: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	div := 0
	for i, st := range ch.Stats {
		if st.Divergent {
			div++
		}
		if ch.Draws[i][0] >= 1 {
			t.Fatalf("draw %d = %v is outside the support", i, ch.Draws[i][0])
		}
	}
	if div == 0 {
		t.Error("no divergent transition at the boundary of the support")
	}
	t.Logf("half-space: %d divergent of %d", div, len(ch.Stats))

	sat, err := Sample(diagonalGaussian([]float64{1, 100}), []float64{0, 0}, ChainRand(2, 0), Options{NoWarmup: true, Samples: 100, StepSize: 0.05, MaxDepth: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hit := 0
	for _, st := range sat.Stats {
		if st.TreeDepth > 2 || st.Leapfrogs > 3 {
			t.Fatalf("depth %d, %d leapfrogs beyond the cap of 2", st.TreeDepth, st.Leapfrogs)
		}
		if st.TreeDepth == 2 {
			hit++
		}
	}
	if hit < 90 {
		t.Errorf("%d of 100 iterations reached the depth cap, want nearly all", hit)
	}
}

// TestSampleErrors: invalid options and an initial point with no finite density are refused.
func TestSampleErrors(t *testing.T) {
	t.Parallel()
	g := diagonalGaussian([]float64{1})
	for _, o := range []Options{{TargetAccept: 1}, {Samples: -1}, {MaxDepth: 40}, {StepSize: math.NaN()}, {NoWarmup: true, Warmup: 5}} {
		if _, err := Sample(g, []float64{0}, ChainRand(1, 0), o, nil); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := Sample(halfSpace{}, []float64{2}, ChainRand(1, 0), Options{}, nil); err == nil {
		t.Error("an initial point outside the support accepted")
	}
	if _, err := Sample(g, []float64{0, 1}, ChainRand(1, 0), Options{}, nil); err == nil {
		t.Error("an initial point of the wrong length accepted")
	}
}
