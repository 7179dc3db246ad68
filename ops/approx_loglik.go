package ops

import (
	"fmt"
	"math"
)

// The scalar likelihoods' side of the exact-GP approximations (Laplace and EP, approx_laplace.go and
// approx_ep.go): what the Laplace approximation needs beyond ScalarLogLik, and the tilted moments of EP.

// LaplaceLogLik is a ScalarLogLik with the further derivatives the Laplace approximation of an exact GP needs
// (Rasmussen & Williams 2006, "R&W", Algorithms 3.1 and 5.1): the second and third derivatives in f (W = −∂²log p
// and the implicit derivative of the mode), and the derivatives in each likelihood parameter θ_j of ∂log p/∂f and
// ∂²log p/∂f² (for the gradient in θ; ∂log p/∂θ_j itself is DLogProbDTheta).
//
// As for ScalarLogLik, every constant that changes the model must be in Name (it goes into the ops' hashes).
type LaplaceLogLik interface {
	ScalarLogLik
	// DerivsF returns ∂/∂f, ∂²/∂f² and ∂³/∂f³ of log p(y | f, θ).
	DerivsF(f, y float64, theta []float64) (d1, d2, d3 float64)
	// DerivsFTheta writes ∂/∂θ_j of ∂log p/∂f into d1[j] and of ∂²log p/∂f² into d2[j] (len NumTheta each).
	DerivsFTheta(f, y float64, theta []float64, d1, d2 []float64)
	// LogConcave reports whether log p(y | f, θ) is concave in f for every y and θ (W ≥ 0): then R&W's
	// B = I + W^½KW^½ factorises the approximation; otherwise (Student-t) the factorisation through chol(K) that
	// stays valid for negative W is used (see GaussApprox).
	LogConcave() bool
}

// TiltedLogLik is an optional capability of a ScalarLogLik: EP's tilted moments in closed form (R&W §3.6, eq.
// 3.58 for the probit). Likelihoods without it get them by Gauss–Hermite quadrature (TiltedMoments).
type TiltedLogLik interface {
	ScalarLogLik
	// Tilted returns log Ẑ = log ∫ p(y | f, θ) N(f; μ, v) df and its first two derivatives in μ (the tilted
	// distribution's mean is μ + v·d1 and its variance v + v²·d2).
	Tilted(y, mu, v float64, theta []float64) (logZ, d1, d2 float64)
}

// Defaults of the number of Gauss–Hermite nodes of the tilted moments of a likelihood without closed forms
// (TiltedMoments).
const (
	// DefaultEPQuadPoints is the default of a log-concave likelihood: the rule is centred on the tilted
	// density's mode and scaled by its curvature, so 32 nodes integrate the smooth unimodal tilted densities of
	// gp/likelihoods (logit, Poisson) to about machine precision.
	DefaultEPQuadPoints = 32
	// DefaultEPQuadPointsHeavy is the default of other likelihoods (heavy-tailed: Student-t), whose rule is the
	// cavity's: their densities' poles near the real line (at y ± i·σ√ν for the Student-t) slow its convergence.
	DefaultEPQuadPointsHeavy = 96
)

// EPQuadPoints returns the number of nodes TiltedMoments uses for lik when asked for points (≤ 0: the default
// for lik: DefaultEPQuadPoints for a log-concave LaplaceLogLik, DefaultEPQuadPointsHeavy otherwise).
func EPQuadPoints(lik ScalarLogLik, points int) int {
	if points > 0 {
		return points
	}
	if ll, ok := lik.(LaplaceLogLik); ok && ll.LogConcave() {
		return DefaultEPQuadPoints
	}
	return DefaultEPQuadPointsHeavy
}

// Tilted holds the moments of one tilted distribution p̂(f) ∝ p(y | f, θ) N(f; μ, v).
type Tilted struct {
	LogZ      float64 // log Ẑ = log ∫ p(y | f, θ) N(f; μ, v) df
	Mean, Var float64 // the tilted distribution's mean and variance
}

// TiltedMoments returns the tilted moments of lik at the cavity N(μ, v), v > 0: in closed form for a
// TiltedLogLik, else by a points-node Gauss–Hermite rule (tiltedQuad): centred on the tilted density's mode and
// scaled by its curvature there for a log-concave LaplaceLogLik, on the cavity otherwise.
// When dtheta is not nil it receives ∂log Ẑ/∂θ_j (len NumTheta), the tilted expectations of ∂log p/∂θ_j (by
// the same rule, closed forms included). Errors: a non-positive or non-finite v or a non-finite result.
func TiltedMoments(lik ScalarLogLik, y, mu, v float64, theta []float64, points int, dtheta []float64) (Tilted, error) {
	if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(mu) || math.IsInf(mu, 0) {
		return Tilted{}, fmt.Errorf("ops: tilted moments of %s: cavity N(%v, %v) (want a finite mean and a positive variance)", lik.Name(), mu, v)
	}
	if tl, ok := lik.(TiltedLogLik); ok {
		lz, d1, d2 := tl.Tilted(y, mu, v, theta)
		t := Tilted{LogZ: lz, Mean: mu + v*d1, Var: v + v*v*d2}
		if lik.NumTheta() == 0 || dtheta == nil {
			return t, checkTilted(lik, t)
		}
		// θ's derivatives by quadrature (no closed-form likelihood has parameters today).
		if _, err := tiltedQuad(lik, y, mu, v, theta, points, dtheta); err != nil {
			return Tilted{}, err
		}
		return t, checkTilted(lik, t)
	}
	t, err := tiltedQuad(lik, y, mu, v, theta, points, dtheta)
	if err != nil {
		return Tilted{}, err
	}
	return t, checkTilted(lik, t)
}

func checkTilted(lik ScalarLogLik, t Tilted) error {
	if math.IsNaN(t.LogZ) || math.IsInf(t.LogZ, 0) || math.IsNaN(t.Mean) || math.IsInf(t.Mean, 0) || !(t.Var > 0) || math.IsInf(t.Var, 0) {
		return fmt.Errorf("ops: tilted moments of %s: log Ẑ %v, mean %v, variance %v (want finite values and a positive variance)", lik.Name(), t.LogZ, t.Mean, t.Var)
	}
	return nil
}

// tiltedCentre returns the mode c of the tilted density h(f) = log p(y | f, θ) − (f − μ)²/(2v) of a log-concave
// likelihood and −1/h″(c)'s root, by safeguarded Newton steps from μ.
func tiltedCentre(ll LaplaceLogLik, y, mu, v float64, theta []float64) (c, s float64) {
	h := func(f float64) float64 { return ll.LogProb(f, y, theta) - (f-mu)*(f-mu)/(2*v) }
	f, hf := mu, h(mu)
	for it := 0; it < 50; it++ {
		d1, d2, _ := ll.DerivsF(f, y, theta)
		g, hh := d1-(f-mu)/v, d2-1/v
		if !(hh < 0) {
			break
		}
		step := -g / hh
		t, moved := 1.0, false
		for k := 0; k < 30; k++ {
			fn := f + t*step
			if hn := h(fn); hn >= hf {
				f, hf, moved = fn, hn, true
				break
			}
			t /= 2
		}
		if !moved || math.Abs(t*step) <= 1e-13*(1+math.Abs(f)) {
			break
		}
	}
	_, d2, _ := ll.DerivsF(f, y, theta)
	if hh := d2 - 1/v; hh < 0 && !math.IsInf(hh, 0) {
		return f, math.Sqrt(-1 / hh)
	}
	return f, math.Sqrt(v)
}

// tiltedQuad is TiltedMoments by a points-node Gauss–Hermite rule for the normal N(c, s²): at the tilted mode and
// scaled by its curvature for a log-concave LaplaceLogLik (adaptive Gauss–Hermite: the integrand
// p(y | f)N(f; μ, v)/N(f; c, s²) is then nearly constant), the cavity N(μ, v) otherwise (a heavy-tailed
// likelihood's tilted density has the cavity's tails; its peak, when much narrower than the cavity, needs more
// nodes: EPOptions.QuadPoints).
func tiltedQuad(lik ScalarLogLik, y, mu, v float64, theta []float64, points int, dtheta []float64) (Tilted, error) {
	rule, err := gaussHermiteRule(EPQuadPoints(lik, points))
	if err != nil {
		return Tilted{}, err
	}
	c, s := mu, math.Sqrt(v)
	if ll, ok := lik.(LaplaceLogLik); ok && ll.LogConcave() {
		c, s = tiltedCentre(ll, y, mu, v, theta)
	}
	// Ẑ = ∫ N(f; c, s²)·[p(y | f)N(f; μ, v)/N(f; c, s²)] df ≈ Σ_k w_k·(that ratio at f_k = c + √2·s·x_k).
	lw := make([]float64, len(rule.x))
	fs := make([]float64, len(rule.x))
	for k, x := range rule.x {
		f := c + math.Sqrt2*s*x
		fs[k] = f
		z := (f - mu) / math.Sqrt(v)
		lw[k] = math.Log(rule.w[k]) + lik.LogProb(f, y, theta) - 0.5*z*z - 0.5*math.Log(v) + x*x + math.Log(s)
	}
	lse := LogSumExp(lw)
	t := Tilted{LogZ: lse}
	mean := 0.0
	for k := range lw {
		lw[k] = math.Exp(lw[k] - lse) // the normalised weights
		mean += lw[k] * fs[k]
	}
	variance := 0.0
	for k, f := range fs {
		variance += lw[k] * (f - mean) * (f - mean)
	}
	t.Mean, t.Var = mean, variance
	if nt := lik.NumTheta(); nt > 0 && dtheta != nil {
		clear(dtheta[:nt])
		tmp := make([]float64, nt)
		for k, f := range fs {
			lik.DLogProbDTheta(f, y, theta, tmp)
			for j, d := range tmp {
				dtheta[j] += lw[k] * d
			}
		}
	}
	return t, nil
}
