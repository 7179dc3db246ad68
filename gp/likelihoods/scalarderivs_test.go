package likelihoods_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/ops"
)

// fdClose fails t unless the analytic derivative a matches the central difference fd to 1e-6 relative (1e-9
// absolute, for derivatives near zero).
func fdClose(t *testing.T, what string, a, fd float64) {
	t.Helper()
	if d := math.Abs(a - fd); d > 1e-9 && d > 1e-6*math.Max(math.Abs(a), math.Abs(fd)) {
		t.Errorf("%s: analytic %.12g, central difference %.12g (rel err %.2g)", what, a, fd, d/math.Max(math.Abs(a), math.Abs(fd)))
	}
}

// central returns the central difference of g at x with a step relative to x (the house's 1e-5·max(1, |x|)).
func central(g func(float64) float64, x float64) float64 {
	h := 1e-5 * math.Max(1, math.Abs(x))
	return (g(x+h) - g(x-h)) / (2 * h)
}

// TestScalarModelDerivatives checks by central differences the derivatives the exact GP's approximations take
// from each likelihood's scalar model (ops.LaplaceLogLik): ∂log p/∂f (DerivsF's first and DLogProbDF), ∂²/∂f²,
// ∂³/∂f³, ∂log p/∂θ and DerivsFTheta's ∂/∂θ of the first two — over latent values from the tails to the centre,
// each label or count, and for the Student-t observations from near to far (both signs of W).
func TestScalarModelDerivatives(t *testing.T) {
	t.Parallel()
	type tc struct {
		lik   ops.LaplaceLogLik
		ys    []float64
		theta []float64
	}
	cases := []tc{
		{likelihoods.BernoulliLogLik{}, []float64{0, 1}, nil},
		{likelihoods.BernoulliLogitLogLik{}, []float64{0, 1}, nil},
		{likelihoods.PoissonLogLik{}, []float64{0, 1, 7, 40}, nil},
		{likelihoods.PoissonLogLik{BinSize: 2.5}, []float64{0, 3}, nil},
		{likelihoods.StudentTLogLik{}, []float64{-3, 0.2, 5}, []float64{0.7, 3}},
		{likelihoods.StudentTLogLik{}, []float64{1, 12}, []float64{1.9, 7.5}},
	}
	fs := []float64{-6, -2.5, -0.7, 0, 0.3, 1.8, 4}
	for _, c := range cases {
		nt := c.lik.NumTheta()
		for _, y := range c.ys {
			for _, f := range fs {
				name := fmt.Sprintf("%s y=%v f=%v", c.lik.Name(), y, f)
				d1, d2, d3 := c.lik.DerivsF(f, y, c.theta)
				fdClose(t, name+" ∂/∂f", d1, central(func(x float64) float64 { return c.lik.LogProb(x, y, c.theta) }, f))
				fdClose(t, name+" DLogProbDF", c.lik.DLogProbDF(f, y, c.theta), d1)
				fdClose(t, name+" ∂²/∂f²", d2, central(func(x float64) float64 { a, _, _ := c.lik.DerivsF(x, y, c.theta); return a }, f))
				fdClose(t, name+" ∂³/∂f³", d3, central(func(x float64) float64 { _, b, _ := c.lik.DerivsF(x, y, c.theta); return b }, f))
				if nt == 0 {
					continue
				}
				lp, a1, a2 := make([]float64, nt), make([]float64, nt), make([]float64, nt)
				c.lik.DLogProbDTheta(f, y, c.theta, lp)
				c.lik.DerivsFTheta(f, y, c.theta, a1, a2)
				for j := 0; j < nt; j++ {
					at := func(v float64) []float64 { th := append([]float64(nil), c.theta...); th[j] = v; return th }
					what := fmt.Sprintf("%s ∂/∂θ%d", name, j)
					fdClose(t, what+" log p", lp[j], central(func(v float64) float64 { return c.lik.LogProb(f, y, at(v)) }, c.theta[j]))
					fdClose(t, what+" ∂log p/∂f", a1[j], central(func(v float64) float64 { a, _, _ := c.lik.DerivsF(f, y, at(v)); return a }, c.theta[j]))
					fdClose(t, what+" ∂²log p/∂f²", a2[j], central(func(v float64) float64 { _, b, _ := c.lik.DerivsF(f, y, at(v)); return b }, c.theta[j]))
				}
			}
		}
	}
	if likelihoods.StudentTLogLik.LogConcave(likelihoods.StudentTLogLik{}) {
		t.Error("the Student-t is not log-concave")
	}
	for _, l := range []ops.LaplaceLogLik{likelihoods.BernoulliLogLik{}, likelihoods.BernoulliLogitLogLik{}, likelihoods.PoissonLogLik{}} {
		if !l.LogConcave() {
			t.Errorf("%s is log-concave", l.Name())
		}
	}
}

// TestProbitTilted: the probit's closed-form tilted moments (R&W eq. 3.58) against the quadrature of
// ops.TiltedMoments without them, and their μ-derivatives against central differences of log Ẑ.
func TestProbitTilted(t *testing.T) {
	t.Parallel()
	lik := likelihoods.BernoulliLogLik{}
	for _, y := range []float64{0, 1} {
		for _, mu := range []float64{-7, -1.2, 0, 0.4, 3} {
			for _, v := range []float64{0.01, 0.5, 2, 9} {
				name := fmt.Sprintf("y=%v μ=%v v=%v", y, mu, v)
				lz, d1, d2 := lik.Tilted(y, mu, v, nil)
				fdClose(t, name+" ∂log Ẑ/∂μ", d1, central(func(m float64) float64 { z, _, _ := lik.Tilted(y, m, v, nil); return z }, mu))
				fdClose(t, name+" ∂²log Ẑ/∂μ²", d2, central(func(m float64) float64 { _, a, _ := lik.Tilted(y, m, v, nil); return a }, mu))
				got, err := ops.TiltedMoments(quadOnly{lik}, y, mu, v, nil, 64, nil)
				if err != nil {
					t.Fatal(err)
				}
				// 64 nodes integrate the smooth tilted densities to ~1e-8 where the probit's step is steep next to
				// a wide cavity (v = 9; the variance to 2e-7 relative), far better elsewhere.
				if math.Abs(got.LogZ-lz) > 1e-7*math.Max(1, math.Abs(lz)) || math.Abs(got.Mean-(mu+v*d1)) > 1e-7*(1+math.Abs(mu)) ||
					math.Abs(got.Var-(v+v*v*d2)) > 1e-6*v {
					t.Errorf("%s: closed form (%.12g, %.12g, %.12g), quadrature %+v", name, lz, mu+v*d1, v+v*v*d2, got)
				}
			}
		}
	}
}

// quadOnly forwards the probit's scalar model but its closed-form tilted moments, so that TiltedMoments
// integrates.
type quadOnly struct{ b likelihoods.BernoulliLogLik }

func (q quadOnly) Name() string                                         { return "quadOnly(" + q.b.Name() + ")" }
func (q quadOnly) NumTheta() int                                        { return 0 }
func (q quadOnly) LogProb(f, y float64, th []float64) float64           { return q.b.LogProb(f, y, th) }
func (q quadOnly) DLogProbDF(f, y float64, th []float64) float64        { return q.b.DLogProbDF(f, y, th) }
func (q quadOnly) DLogProbDTheta(f, y float64, th, dst []float64)       {}
func (q quadOnly) DerivsFTheta(f, y float64, th, d1, d2 []float64)      {}
func (q quadOnly) LogConcave() bool                                     { return true }
func (q quadOnly) DerivsF(f, y float64, th []float64) (a, b, c float64) { return q.b.DerivsF(f, y, th) }

var _ ops.LaplaceLogLik = quadOnly{}
