package likelihoods_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

func labelObs(rng *rand.Rand) float64 { return float64(rng.IntN(2)) }

func TestBernoulliVEGradients(t *testing.T) {
	t.Parallel()
	lik, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		t.Fatal(err)
	}
	checkVEGradients(t, lik, randomVE(10, 6, 2, labelObs))
	checkQuadOp(t, likelihoods.BernoulliLogLik{}, randomVE(11, 5, 2, labelObs))
}

// TestBernoulliVEValue: against an independent plain-Go Gauss–Hermite sum of log Φ((2y−1)f) with 100 points
// (tolerance 1e-8: the 20-point rule's error for this smooth integrand at v ≤ 1.05 is far smaller).
func TestBernoulliVEValue(t *testing.T) {
	t.Parallel()
	lik, _ := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	d := randomVE(12, 5, 2, labelObs)
	ve := buildVE(t, lik, d, 0, nil).prog.Output("ve")
	x, w, _ := ops.GaussHermite(100)
	for n := 0; n < d.n; n++ {
		want := 0.0
		for l := 0; l < d.l; l++ {
			j := n*d.l + l
			s := 2*d.y[j] - 1
			want += ops.GaussHermiteExpect(func(f float64) float64 { return ops.LogPhiFloat(s * f) }, d.mu[j], d.v[j], x, w)
		}
		closeTo(t, "Bernoulli VE", ve[n], want, 1e-8)
	}
}

// TestBernoulliExtreme: μ = ±40 with v = 1e-12 for both labels: log Φ(−40) ≈ −804.6 must come from the erfc /
// continued-fraction branch, never log(Φ) (which would be log 0 = −Inf), and every gradient must be finite.
func TestBernoulliExtreme(t *testing.T) {
	t.Parallel()
	lik, _ := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	d := veData{n: 4, l: 1, mu: []float64{40, -40, 40, -40}, v: []float64{1e-12, 1e-12, 1e-12, 1e-12}, y: []float64{1, 1, 0, 0}}
	p := buildVE(t, lik, d, 1e-14, nil)
	ve := p.prog.Output("ve")
	for i, m := range d.mu {
		want := ops.LogPhiFloat((2*d.y[i] - 1) * m) // v ≈ 0: VE ≈ log Φ(sμ) + ½v·(…)
		if math.IsInf(ve[i], 0) || math.IsNaN(ve[i]) {
			t.Fatalf("VE[%d] = %v", i, ve[i])
		}
		closeTo(t, "VE at μ=±40", ve[i], want, 1e-9)
	}
	for _, param := range []*graph.Param{p.mu, p.v} {
		for i, g := range p.prog.Grad(param) {
			if math.IsNaN(g) || math.IsInf(g, 0) {
				t.Errorf("gradient of %s[%d] = %v", param.Name(), i, g)
			}
		}
	}
	// −∂VE/∂μ for y = 0, μ = 40 is φ(−40)/Φ(−40) ≈ 40 (Mills' ratio).
	if g := p.prog.Grad(p.mu)[2]; math.Abs(g-40.02) > 0.01 {
		t.Errorf("∂loss/∂μ at y=0, μ=40 = %v, want ≈ 40.02", g)
	}
}

// TestBernoulliPredict: the closed form p(y=1) = Φ(μ/√(1+v)) against Gauss–Hermite E[Φ(f)] (100 points; the
// tolerance 1e-9 bounds the quadrature error for v ≤ 2), p(1−p), and log p(y) against GaussHermiteLogExpect of
// log Φ((2y−1)f).
func TestBernoulliPredict(t *testing.T) {
	t.Parallel()
	lik, _ := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	mu := []float64{0, 1.3, -2.2, 0.4, 5, -3}
	v := []float64{1, 0.2, 2, 0.01, 0.5, 1.5}
	y := []float64{1, 0, 0, 1, 1, 0}
	mean, variance, err := lik.PredictMeanVar(mu, v, 3)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := lik.PredictLogDensity(mu, v, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	x, w, _ := ops.GaussHermite(100)
	phi := func(f float64) float64 { return math.Exp(ops.LogPhiFloat(f)) }
	for n := 0; n < 3; n++ {
		want := 0.0
		for l := 0; l < 2; l++ {
			j := 2*n + l
			p := ops.GaussHermiteExpect(phi, mu[j], v[j], x, w)
			closeTo(t, "p(y=1)", mean[j], p, 1e-9)
			closeTo(t, "variance", variance[j], p*(1-p), 1e-9)
			s := 2*y[j] - 1
			want += ops.GaussHermiteLogExpect(func(f float64) float64 { return ops.LogPhiFloat(s * f) }, mu[j], v[j], x, w)
		}
		closeTo(t, "log density", ld[n], want, 1e-9)
	}
}

func TestBernoulliBadInput(t *testing.T) {
	t.Parallel()
	lik, _ := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	for _, bad := range []float64{-1, 2, 0.5} {
		noPanic(t, "label", func() error {
			_, err := lik.PredictLogDensity([]float64{0, 0}, []float64{1, 1}, []float64{1, bad}, 2)
			return err
		})
	}
	if _, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{QuadPoints: -1}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("QuadPoints −1: error %v, want gp.ErrConfig", err)
	}
	if lik.Params() != nil {
		t.Errorf("Params() = %v, want none", lik.Params())
	}
}
