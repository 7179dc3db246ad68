package ops

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
)

// Gauss–Hermite quadrature for expectations under a univariate normal (MATH.md §4):
//
//	E_{N(f; μ, v)}[g(f)] ≈ Σᵢ (wᵢ/√π) g(μ + √(2v)·xᵢ),
//
// with nodes xᵢ and weights wᵢ of the rule for the weight e^{−x²}. An n-point rule is exact for polynomials g of
// degree ≤ 2n − 1.

// DefaultQuadPoints is the number of Gauss–Hermite nodes used when a configuration leaves it zero: exact for
// polynomials of degree ≤ 39, and accurate to ~1e-12 for the smooth log-likelihoods of package gp/likelihoods at
// moderate variances (GPflow's default is 20 as well).
const DefaultQuadPoints = 20

// invSqrtPi is 1/√π, the normalisation of the Gauss–Hermite weights to a probability measure.
const invSqrtPi = 0.56418958354775628694807945156077258584405062932900

// ghRule is one cached rule: nodes x and weights w already divided by √π (so Σ w = 1).
type ghRule struct {
	x, w []float64
}

var ghCache sync.Map // int → *ghRule

// gaussHermiteRule returns the shared (read-only) cached n-point rule with normalised weights.
func gaussHermiteRule(n int) (*ghRule, error) {
	if n < 1 {
		return nil, fmt.Errorf("ops: GaussHermite: %d points: need at least 1", n)
	}
	if r, ok := ghCache.Load(n); ok {
		return r.(*ghRule), nil
	}
	x := make([]float64, n)
	w := make([]float64, n)
	// gonum: tabulated Golub–Welsch/Glaser–Liu–Rokhlin rules for n ≤ 200, an asymptotic expansion beyond.
	quad.Hermite{}.FixedLocations(x, w, math.Inf(-1), math.Inf(1))
	for i := range w {
		w[i] *= invSqrtPi
	}
	r, _ := ghCache.LoadOrStore(n, &ghRule{x: x, w: w})
	return r.(*ghRule), nil
}

// GaussHermite returns the n nodes x and weights w of the Gauss–Hermite rule for the weight e^{−x²}:
// ∫ e^{−x²} g(x) dx ≈ Σᵢ wᵢ g(xᵢ) (Σ wᵢ = √π). Rules are computed once per n and cached; the returned slices
// are fresh copies the caller may modify. It returns an error for n < 1.
func GaussHermite(n int) (x, w []float64, err error) {
	r, err := gaussHermiteRule(n)
	if err != nil {
		return nil, nil, err
	}
	x = append([]float64(nil), r.x...)
	w = make([]float64, n)
	for i, v := range r.w {
		w[i] = v / invSqrtPi
	}
	return x, w, nil
}

// GaussHermiteExpect returns Σᵢ (wᵢ/√π) f(μ + √(2v)·xᵢ), the Gauss–Hermite approximation of E_{N(μ, v)}[f], for
// the nodes x and weights w of GaussHermite (weight e^{−x²}; len(x) = len(w)). v must be ≥ 0 (a negative v
// gives NaN).
func GaussHermiteExpect(f func(float64) float64, mu, v float64, x, w []float64) float64 {
	s := math.Sqrt(2 * v)
	sum := 0.0
	for i, xi := range x {
		sum += w[i] * invSqrtPi * f(mu+s*xi)
	}
	return sum
}

// GaussHermiteLogExpect returns log E_{N(μ, v)}[exp(logf(f))] ≈ log Σᵢ (wᵢ/√π) exp(logf(μ + √(2v)·xᵢ)), evaluated
// with LogSumExp (the maximum outside the logarithm), so a log-density far below −745 (whose exp underflows) is
// still returned accurately: this is the predictive log density log ∫ p(y|f) N(f; μ, v) df. x and w are from
// GaussHermite; v must be ≥ 0 (a negative v gives NaN).
func GaussHermiteLogExpect(logf func(float64) float64, mu, v float64, x, w []float64) float64 {
	s := math.Sqrt(2 * v)
	terms := make([]float64, len(x))
	for i, xi := range x {
		terms[i] = math.Log(w[i]*invSqrtPi) + logf(mu+s*xi)
	}
	return LogSumExp(terms)
}
