package main

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/ops"
)

// TestLaplaceConformance: the Laplace likelihood passes gpzoo's likelihood conformance suite (gradients of the
// expectations, predictive functions, errors, Spec round trip), with its defaults and with other settings.
func TestLaplaceConformance(t *testing.T) {
	for name, cfg := range map[string]LaplaceConfig{
		"default": {},
		"narrow":  {Scale: 0.3, ScaleFloor: 1e-3, QuadPoints: 31},
	} {
		t.Run(name, func(t *testing.T) {
			lik, err := NewLaplace(cfg)
			if err != nil {
				t.Fatal(err)
			}
			gptest.CheckLikelihood(t, lik, rand.New(rand.NewPCG(3, 7)), gptest.LikelihoodCase{Outputs: 2})
		})
	}
}

// TestLaplaceLogLik: the density integrates to 1 over y, and the quadrature expectation of −|y − f|/b − log 2b
// approaches the closed form −E|y − f|/b − log 2b, E|d − √v z| = √(2v/π)·exp(−d²/2v) + d(1 − 2Φ(−d/√v)).
func TestLaplaceLogLik(t *testing.T) {
	theta := []float64{0.7}
	total, h := 0.0, 1e-3
	for y := -30.0; y <= 30; y += h {
		total += h * math.Exp(LaplaceLogLik{}.LogProb(0.4, y, theta))
	}
	if math.Abs(total-1) > 1e-6 {
		t.Errorf("∫ p(y | f) dy = %v, want 1", total)
	}
	// Gauss–Hermite converges slowly across the kink at f = y: the error is of order 1e-2·√v/b at the default
	// 20 nodes and falls roughly as 1/n (a smooth log-density converges far faster).
	for _, rule := range []struct {
		points int
		tol    float64
	}{{ops.DefaultQuadPoints, 0.025}, {200, 0.0025}} {
		x, w, err := ops.GaussHermite(rule.points)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ mu, v, y float64 }{{0, 1, 0}, {0.3, 0.2, 1.1}, {-1, 0.05, 0.5}, {0.5, 2, -2}} {
			quad := ops.GaussHermiteExpect(func(f float64) float64 { return LaplaceLogLik{}.LogProb(f, c.y, theta) }, c.mu, c.v, x, w)
			d, s := c.y-c.mu, math.Sqrt(c.v)
			absMean := math.Sqrt(2*c.v/math.Pi)*math.Exp(-d*d/(2*c.v)) + d*math.Erf(d/(s*math.Sqrt2))
			if exact := -absMean/theta[0] - math.Log(2*theta[0]); math.Abs(quad-exact) > rule.tol*s/theta[0] {
				t.Errorf("%d nodes, μ %v, v %v, y %v: quadrature %v, closed form %v", rule.points, c.mu, c.v, c.y, quad, exact)
			}
		}
	}
}

// TestLaplaceFamily: the family is registered under its name and kind and builds a Laplace likelihood; bad
// configurations are refused.
func TestLaplaceFamily(t *testing.T) {
	f, ok := gp.LookupLikelihood(FamilyLaplace)
	if !ok || f.Kind != KindLaplace || f.Classes || f.RawTargets {
		t.Fatalf("family %+v (registered: %v)", f, ok)
	}
	lik, err := f.New(gp.LikelihoodOptions{Outputs: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := lik.(gp.Describer).Spec()
	if err != nil || s.Kind != KindLaplace {
		t.Errorf("Spec %v, %v", s, err)
	}
	for _, c := range []LaplaceConfig{{Scale: -1}, {Scale: 1, ScaleFloor: 2}, {QuadPoints: -1}, {Scale: math.Inf(1)}, {ScaleFloor: math.NaN()}} {
		if _, err := NewLaplace(c); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%+v: error %v, want gp.ErrConfig", c, err)
		}
	}
}

// TestRun runs the example with a short budget (as CI does with -iters 5): it trains both models, saves and
// loads the model file in a folder of the test, and finds the loaded model's predictions identical.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 5, t.TempDir()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"Gaussian(variance=", "Laplace(scale=", "*main.Laplace", "bit for bit identical: true"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}
