package likelihoods_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/stat/distuv"
)

func countObs(rng *rand.Rand) float64 { return float64(rng.IntN(6)) }

func TestPoissonVEGradients(t *testing.T) {
	t.Parallel()
	lik, err := likelihoods.NewPoisson(likelihoods.PoissonConfig{BinSize: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	checkVEGradients(t, lik, randomVE(30, 5, 2, countObs))
	checkQuadOp(t, lik.ScalarLogLik(), randomVE(31, 4, 2, countObs))
}

// TestPoissonVEClosedFormVsQuadrature: y(μ + log b) − b·e^{μ+v/2} − log y! against the quadrature op on the same
// scalar model (20 points; the rule's error for e^f at v ≤ 1.05 is ~1e-15 relative) and against plain Go:
// tolerance 1e-8 as required by the issue.
func TestPoissonVEClosedFormVsQuadrature(t *testing.T) {
	t.Parallel()
	for _, b := range []float64{1, 0.5, 3} {
		lik, err := likelihoods.NewPoisson(likelihoods.PoissonConfig{BinSize: b})
		if err != nil {
			t.Fatal(err)
		}
		d := randomVE(32, 6, 2, countObs)
		p := buildVE(t, lik, d, 0, func(gr *graph.Graph, mu, v, y *graph.Node) map[string]*graph.Node {
			return map[string]*graph.Node{"quad": gr.QuadratureVE(lik.ScalarLogLik(), ops.DefaultQuadPoints, mu, v, y)}
		})
		ve, quad := p.prog.Output("ve"), p.prog.Output("quad")
		for n := 0; n < d.n; n++ {
			want := 0.0
			for l := 0; l < d.l; l++ {
				j := n*d.l + l
				lf, _ := math.Lgamma(d.y[j] + 1)
				want += d.y[j]*(d.mu[j]+math.Log(b)) - b*math.Exp(d.mu[j]+d.v[j]/2) - lf
			}
			closeTo(t, "closed-form VE", ve[n], want, 1e-12)
			closeTo(t, "quadrature VE", quad[n], ve[n], 1e-8)
		}
	}
}

// TestPoissonPredict: the variance against the law of total variance E[λ] + Var[λ] by Gauss–Hermite (exact to
// ~1e-12 here), and Monte Carlo (1e5 seeded samples per case: f ~ N(μ, v), y ~ Poisson(b·e^f)) for the mean of y
// and for p(y₀) = E[Poisson(y₀ | b·e^f)] within 3 standard errors.
func TestPoissonPredict(t *testing.T) {
	t.Parallel()
	const samples = 100000
	const b = 2.0
	lik, err := likelihoods.NewPoisson(likelihoods.PoissonConfig{BinSize: b})
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewPCG(77, 1)
	rng := rand.New(src)
	x, w, _ := ops.GaussHermite(60)
	m := lik.ScalarLogLik()
	for _, c := range []struct{ mu, v, y float64 }{{0, 0.5, 1}, {1, 0.2, 4}, {-1, 1, 0}, {0.5, 0.8, 7}} {
		mean, variance, err := lik.PredictMeanVar([]float64{c.mu}, []float64{c.v}, 1)
		if err != nil {
			t.Fatal(err)
		}
		el := ops.GaussHermiteExpect(func(f float64) float64 { return b * math.Exp(f) }, c.mu, c.v, x, w)
		el2 := ops.GaussHermiteExpect(func(f float64) float64 { return b * b * math.Exp(2*f) }, c.mu, c.v, x, w)
		closeTo(t, "mean (quadrature)", mean[0], el, 1e-12)
		closeTo(t, "variance (quadrature)", variance[0], el+el2-el*el, 1e-10)
		ld, err := lik.PredictLogDensity([]float64{c.mu}, []float64{c.v}, []float64{c.y}, 1)
		if err != nil {
			t.Fatal(err)
		}
		var ys, ps meanSE
		for range samples {
			f := c.mu + math.Sqrt(c.v)*rng.NormFloat64()
			ys.add(distuv.Poisson{Lambda: b * math.Exp(f), Src: src}.Rand())
			ps.add(math.Exp(m.LogProb(f, c.y, nil)))
		}
		ys.within(t, "Poisson predictive mean", mean[0])
		ps.within(t, "Poisson predictive density", math.Exp(ld[0]))
	}
}

func TestPoissonBadInput(t *testing.T) {
	t.Parallel()
	lik, _ := likelihoods.NewPoisson(likelihoods.PoissonConfig{})
	for _, bad := range []float64{-1, 1.5} {
		noPanic(t, "count", func() error {
			_, err := lik.PredictLogDensity([]float64{0, 0}, []float64{1, 1}, []float64{1, bad}, 2)
			return err
		})
	}
	for name, c := range map[string]likelihoods.PoissonConfig{
		"negative bin": {BinSize: -1},
		"Inf bin":      {BinSize: math.Inf(1)},
		"NaN bin":      {BinSize: math.NaN()},
		"quad points":  {QuadPoints: -1},
	} {
		if _, err := likelihoods.NewPoisson(c); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%s: error %v, want gp.ErrConfig", name, err)
		}
	}
	if lik.BinSize() != likelihoods.DefaultPoissonBinSize || lik.Params() != nil {
		t.Errorf("defaults: bin %v, params %v", lik.BinSize(), lik.Params())
	}
}

func TestCheckCount(t *testing.T) {
	for _, y := range []float64{0, 1, 7, 1e6, 1 << 53} {
		if err := likelihoods.CheckCount(y); err != nil {
			t.Errorf("CheckCount(%v): %v", y, err)
		}
	}
	for _, y := range []float64{-1, 2.5, -0.5, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0.1, -1)} {
		if err := likelihoods.CheckCount(y); err == nil || !strings.Contains(err.Error(), "count") {
			t.Errorf("CheckCount(%v) = %v, want an error naming counts", y, err)
		}
	}
	f, ok := gp.LookupLikelihood("poisson")
	if !ok || !f.RawTargets || f.Classes || f.CheckTarget == nil || f.CheckTarget(-1) == nil {
		t.Errorf("the poisson family %+v: want raw (unstandardised) count targets", f)
	}
}
