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
	"gonum.org/v1/gonum/stat/distuv"
)

func gaussObs(rng *rand.Rand) float64 { return 4*rng.Float64() - 2 }

// TestGaussianVEClosedFormVsQuadrature: the closed form of MATH.md §4 against the same expectation by
// Gauss–Hermite (GaussianLogLik through QuadratureVE) and against a plain-Go evaluation. The integrand is
// quadratic in f, so 20-point quadrature is exact up to round-off: tolerance 1e-8 (the requirement;
// observed ~1e-15).
func TestGaussianVEClosedFormVsQuadrature(t *testing.T) {
	t.Parallel()
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.37})
	if err != nil {
		t.Fatal(err)
	}
	d := randomVE(1, 6, 3, gaussObs)
	p := buildVE(t, lik, d, 0, func(gr *graph.Graph, mu, v, y *graph.Node) map[string]*graph.Node {
		return map[string]*graph.Node{
			"quad":     gr.QuadratureVE(likelihoods.GaussianLogLik{}, ops.DefaultQuadPoints, mu, v, y, lik.VarianceNode(gr)),
			"variance": lik.VarianceNode(gr),
		}
	})
	ve, quad := p.prog.Output("ve"), p.prog.Output("quad")
	s2 := lik.Variance()
	closeTo(t, "VarianceNode", p.prog.Output("variance")[0], 0.37, 1e-14)
	for n := 0; n < d.n; n++ {
		want := 0.0
		for l := 0; l < d.l; l++ {
			j := n*d.l + l
			r := d.y[j] - d.mu[j]
			want += -0.5*math.Log(2*math.Pi*s2) - (r*r+d.v[j])/(2*s2)
		}
		closeTo(t, "closed-form VE", ve[n], want, 1e-12)
		closeTo(t, "quadrature VE", quad[n], ve[n], 1e-8)
	}
}

func TestGaussianVEGradients(t *testing.T) {
	t.Parallel()
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	checkVEGradients(t, lik, randomVE(2, 5, 2, gaussObs))
	checkQuadOp(t, likelihoods.GaussianLogLik{}, randomVE(3, 4, 2, gaussObs), 0.6)
}

// TestGaussianPredict: mean μ, variance v + σ², and log N(y | μ, v + σ²) against gonum's distuv.Normal, summed
// over each row (tolerance 1e-13: both are a handful of flops).
func TestGaussianPredict(t *testing.T) {
	t.Parallel()
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	d := randomVE(4, 5, 2, gaussObs)
	mean, variance, err := lik.PredictMeanVar(d.mu, d.v, d.n)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := lik.PredictLogDensity(d.mu, d.v, d.y, d.n)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < d.n; n++ {
		want := 0.0
		for l := 0; l < d.l; l++ {
			j := n*d.l + l
			closeTo(t, "mean", mean[j], d.mu[j], 0)
			closeTo(t, "variance", variance[j], d.v[j]+0.25, 1e-15)
			want += distuv.Normal{Mu: d.mu[j], Sigma: math.Sqrt(d.v[j] + 0.25)}.LogProb(d.y[j])
		}
		closeTo(t, "log density", ld[n], want, 1e-13)
	}
}

func TestGaussianConfig(t *testing.T) {
	t.Parallel()
	g, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{})
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "default variance", g.Variance(), likelihoods.DefaultGaussianVariance, 1e-15)
	if ps := g.Params(); len(ps) != 1 || ps[0].Name() != "likelihood.variance" || !ps[0].Trainable() {
		t.Errorf("Params() = %v", ps)
	}
	if g.String() == "" {
		t.Error("empty String")
	}
	for name, c := range map[string]likelihoods.GaussianConfig{
		"negative variance": {Variance: -1},
		"NaN variance":      {Variance: math.NaN()},
		"Inf variance":      {Variance: math.Inf(1)},
		"negative floor":    {VarianceFloor: -1e-3},
		"below floor":       {Variance: 0.5, VarianceFloor: 1},
	} {
		if _, err := likelihoods.NewGaussian(c); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%s: error %v, want gp.ErrConfig", name, err)
		}
	}
}
