package likelihoods_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestStudentTVEGradients(t *testing.T) {
	t.Parallel()
	trained, err := likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 0.8, DF: 4, TrainDF: true})
	if err != nil {
		t.Fatal(err)
	}
	checkVEGradients(t, trained, randomVE(20, 5, 2, gaussObs))
	frozen, err := likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 1.3})
	if err != nil {
		t.Fatal(err)
	}
	if frozen.Params()[1].Trainable() {
		t.Error("DF is trainable by default")
	}
	checkVEGradients(t, frozen, randomVE(21, 4, 3, gaussObs))
	// The op itself with respect to mu, v, σ and ν.
	checkQuadOp(t, likelihoods.StudentTLogLik{}, randomVE(22, 4, 2, gaussObs), 0.8, 4)
}

// TestStudentTLogProb: the scalar model against gonum's distuv.StudentsT (tolerance 1e-13), and its derivatives
// against central differences (step 1e-6, tolerance 1e-7).
func TestStudentTLogProb(t *testing.T) {
	t.Parallel()
	m := likelihoods.StudentTLogLik{}
	for _, c := range []struct{ f, y, s, nu float64 }{{0, 0.3, 1, 3}, {1.2, -0.7, 0.5, 4.5}, {-2, 3, 2, 1}, {0.1, 0.1, 0.1, 30}} {
		th := []float64{c.s, c.nu}
		want := distuv.StudentsT{Mu: c.f, Sigma: c.s, Nu: c.nu}.LogProb(c.y)
		closeTo(t, "log p", m.LogProb(c.f, c.y, th), want, 1e-13)
		h := 1e-6
		fd := func(g func(x float64) float64, x float64) float64 { return (g(x+h) - g(x-h)) / (2 * h) }
		closeTo(t, "∂/∂f", m.DLogProbDF(c.f, c.y, th), fd(func(f float64) float64 { return m.LogProb(f, c.y, th) }, c.f), 1e-7)
		dst := make([]float64, 2)
		m.DLogProbDTheta(c.f, c.y, th, dst)
		closeTo(t, "∂/∂σ", dst[0], fd(func(s float64) float64 { return m.LogProb(c.f, c.y, []float64{s, c.nu}) }, c.s), 1e-7)
		closeTo(t, "∂/∂ν", dst[1], fd(func(nu float64) float64 { return m.LogProb(c.f, c.y, []float64{c.s, nu}) }, c.nu), 1e-7)
	}
}

// TestStudentTPredictMonteCarlo: with f ~ N(μ, v) and y = f + σ·t_ν (1e5 seeded samples per case), the sample
// mean of y must match PredictMeanVar's mean and the sample mean of p(y₀ | f) must match exp(PredictLogDensity)
// within 3 standard errors (ν = 5 keeps the fourth moment of y finite, so the standard error itself is reliable).
func TestStudentTPredictMonteCarlo(t *testing.T) {
	t.Parallel()
	const samples = 100000
	lik, err := likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 0.7, DF: 5})
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewPCG(2024, 7)
	rng := rand.New(src)
	tdist := distuv.StudentsT{Mu: 0, Sigma: 0.7, Nu: 5, Src: src}
	m := likelihoods.StudentTLogLik{}
	for _, c := range []struct{ mu, v, y float64 }{{0, 1, 0.5}, {1.5, 0.3, -0.2}, {-2, 2, -4}} {
		mean, variance, err := lik.PredictMeanVar([]float64{c.mu}, []float64{c.v}, 1)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, "variance", variance[0], c.v+0.49*5/3, 1e-14)
		ld, err := lik.PredictLogDensity([]float64{c.mu}, []float64{c.v}, []float64{c.y}, 1)
		if err != nil {
			t.Fatal(err)
		}
		var ys, ps meanSE
		for range samples {
			f := c.mu + math.Sqrt(c.v)*rng.NormFloat64()
			ys.add(f + tdist.Rand())
			ps.add(math.Exp(m.LogProb(f, c.y, []float64{0.7, 5})))
		}
		ys.within(t, "StudentT predictive mean", mean[0])
		ps.within(t, "StudentT predictive density", math.Exp(ld[0]))
	}
	inf, _ := likelihoods.NewStudentT(likelihoods.StudentTConfig{DF: 2})
	if _, v, _ := inf.PredictMeanVar([]float64{0}, []float64{1}, 1); !math.IsInf(v[0], 1) {
		t.Errorf("ν = 2: variance %v, want +Inf", v[0])
	}
}

func TestStudentTConfig(t *testing.T) {
	t.Parallel()
	s, err := likelihoods.NewStudentT(likelihoods.StudentTConfig{})
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "default scale", s.Scale(), likelihoods.DefaultStudentTScale, 1e-15)
	closeTo(t, "default df", s.DF(), likelihoods.DefaultStudentTDF, 1e-15)
	for name, c := range map[string]likelihoods.StudentTConfig{
		"negative scale":  {Scale: -1},
		"NaN df":          {DF: math.NaN()},
		"negative df":     {DF: -3},
		"scale floor":     {Scale: 0.5, ScaleFloor: 1},
		"Inf scale floor": {ScaleFloor: math.Inf(1)},
		"quad points":     {QuadPoints: -5},
	} {
		if _, err := likelihoods.NewStudentT(c); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%s: error %v, want gp.ErrConfig", name, err)
		}
	}
}

// meanSE accumulates a sample mean and its standard error (Welford).
type meanSE struct {
	n        int
	mean, m2 float64
}

func (s *meanSE) add(x float64) {
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
}

// within fails t unless want is within 3 standard errors of the sample mean.
func (s *meanSE) within(t *testing.T, what string, want float64) {
	t.Helper()
	se := math.Sqrt(s.m2 / float64(s.n-1) / float64(s.n))
	if d := math.Abs(s.mean - want); !(d <= 3*se) {
		t.Errorf("%s: Monte Carlo %.6g ± %.2g (1 SE), predicted %.6g (%.1f SE off)", what, s.mean, se, want, d/se)
	}
}
