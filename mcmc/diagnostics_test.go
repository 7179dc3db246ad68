package mcmc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ar1 returns m chains of n draws of the stationary AR(1) process x_t = φx_{t−1} + √(1−φ²)ε_t (unit variance),
// whose integrated autocorrelation time is (1+φ)/(1−φ), plus shift[c] for chain c.
func ar1(m, n int, phi float64, shift []float64, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float64, m)
	for c := range out {
		out[c] = make([]float64, n)
		x := rng.NormFloat64()
		for i := range out[c] {
			x = phi*x + math.Sqrt(1-phi*phi)*rng.NormFloat64()
			out[c][i] = x
			if shift != nil {
				out[c][i] += shift[c]
			}
		}
	}
	return out
}

// TestESSOfAR1: the effective sample sizes of AR(1) chains are within 8% of the theoretical N(1−φ)/(1+φ) for
// φ = 0 (independent draws), 0.5 and 0.9, and antithetic chains (φ = −0.5) get more than N; the bulk ESS of a
// monotone transform (exp) equals that of the draws, as rank normalisation promises.
func TestESSOfAR1(t *testing.T) {
	t.Parallel()
	for _, phi := range []float64{0, 0.5, 0.9, -0.5} {
		ch := ar1(4, 10000, phi, nil, 7)
		want := 40000 * (1 - phi) / (1 + phi)
		ess, bulk := ESS(ch), ESSBulk(ch)
		t.Logf("φ %v: ESS %.0f, bulk %.0f, tail %.0f, theory %.0f", phi, ess, bulk, ESSTail(ch), want)
		if math.Abs(ess-want) > 0.08*want || math.Abs(bulk-want) > 0.08*want {
			t.Errorf("φ %v: ESS %.0f, bulk %.0f; want %.0f ± 8%%", phi, ess, bulk, want)
		}
		exp := make([][]float64, len(ch))
		for c := range ch {
			for _, x := range ch[c] {
				exp[c] = append(exp[c], math.Exp(3*x))
			}
		}
		if b := ESSBulk(exp); math.Abs(b-bulk) > 1e-9*bulk {
			t.Errorf("φ %v: bulk ESS of exp(3x) %.6f, of x %.6f", phi, b, bulk)
		}
	}
}

// TestRhat: well-mixed chains have R̂ < 1.01; chains with different means, or a trend within each chain, or
// different scales (caught by the folded draws) have R̂ well above it.
func TestRhat(t *testing.T) {
	t.Parallel()
	if r := Rhat(ar1(4, 2000, 0.3, nil, 1)); !(r < 1.01) {
		t.Errorf("mixed chains: R̂ %.4f", r)
	}
	if r := Rhat(ar1(4, 2000, 0.3, []float64{0, 0, 0, 1}, 2)); !(r > 1.05) {
		t.Errorf("one chain shifted by one sd: R̂ %.4f", r)
	}
	trend := ar1(4, 2000, 0.3, nil, 3)
	for c := range trend {
		for i := range trend[c] {
			trend[c][i] += 2 * float64(i) / 2000
		}
	}
	if r := Rhat(trend); !(r > 1.05) {
		t.Errorf("a trend within each chain: R̂ %.4f", r)
	}
	scale := ar1(4, 2000, 0, nil, 4)
	for i := range scale[3] {
		scale[3][i] *= 3
	}
	if r := Rhat(scale); !(r > 1.05) {
		t.Errorf("one chain three times as wide: R̂ %.4f", r)
	}
}

// TestSummaryOfIndependentDraws: for independent N(2, 3²) draws the summary's mean, sd, quantiles and standard
// errors match the normal's (the MCSEs to 10% of σ/√N and σ/√(2N)).
func TestSummaryOfIndependentDraws(t *testing.T) {
	t.Parallel()
	ch := ar1(4, 5000, 0, nil, 9)
	for c := range ch {
		for i := range ch[c] {
			ch[c][i] = 2 + 3*ch[c][i]
		}
	}
	s := Summarize(ch)
	n := 20000.0
	checks := []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"mean", s.Mean, 2, 4 * 3 / math.Sqrt(n)},
		{"sd", s.SD, 3, 4 * 3 / math.Sqrt(2*n)},
		{"median", s.Median, 2, 0.1},
		{"q5", s.Q5, 2 - 1.6449*3, 0.15},
		{"q95", s.Q95, 2 + 1.6449*3, 0.15},
		{"mcse mean", s.MCSEMean, 3 / math.Sqrt(n), 0.1 * 3 / math.Sqrt(n)},
		{"mcse sd", s.MCSESD, 3 / math.Sqrt(2*n), 0.1 * 3 / math.Sqrt(2*n)},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s %.5g, want %.5g ± %.2g", c.name, c.got, c.want, c.tol)
		}
	}
	if !(s.Rhat < 1.01) {
		t.Errorf("R̂ %.4f", s.Rhat)
	}
	if r := Rhat([][]float64{{1, 1, 1, 1}, {1, 1, 1, 1}}); !math.IsNaN(r) {
		t.Errorf("constant draws: R̂ %v, want NaN", r)
	}
}
