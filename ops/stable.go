package ops

import (
	"fmt"
	"math"
)

// Plain, numerically stable scalar functions. The graph ops of op_unary.go evaluate their values and derivatives
// with these, so a parameter transform applied to plain floats (e.g. when setting a parameter) and the same
// transform inside a graph agree bit for bit.
//
// The graph ops Softplus and LogPhi (on *G.Node) own the short names; the plain float64 versions carry the
// suffix Float.

// SoftplusFloat returns log(1 + eˣ) computed as max(x, 0) + log1p(e^−|x|): no overflow for large x, no loss of
// the tiny value eˣ for very negative x. SoftplusFloat(±Inf) = +Inf / 0; NaN gives NaN.
func SoftplusFloat(x float64) float64 {
	if math.IsInf(x, 1) {
		return x
	}
	return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
}

// Log1pExp returns log(1 + eˣ) (the same function as SoftplusFloat), evaluated with Mächler's thresholds
// ("Accurately computing log(1 − exp(−|a|))", 2012): eˣ for x ≤ −37, log1p(eˣ) up to 18, x + e^−ˣ up to 33.3,
// x beyond. Each branch is accurate to about one ulp.
func Log1pExp(x float64) float64 {
	switch {
	case x <= -37:
		return math.Exp(x)
	case x <= 18:
		return math.Log1p(math.Exp(x))
	case x <= 33.3:
		return x + math.Exp(-x)
	default:
		return x
	}
}

// SoftplusInverse returns the x with SoftplusFloat(x) + floor = y, i.e. log(e^(y−floor) − 1) computed as
// z + log(−expm1(−z)) with z = y − floor. It is the inverse of Positive, used to set a parameter from its
// constrained value. It returns an error if y ≤ floor (outside the range of the transform) or y, floor are not
// finite.
func SoftplusInverse(y, floor float64) (float64, error) {
	if y-y != 0 || floor-floor != 0 {
		return 0, fmt.Errorf("ops: SoftplusInverse(%v, floor %v): %w", y, floor, ErrNonFinite)
	}
	z := y - floor
	if !(z > 0) {
		return 0, fmt.Errorf("ops: SoftplusInverse: value %v must exceed the floor %v", y, floor)
	}
	return z + math.Log(-math.Expm1(-z)), nil
}

// LogSumExp returns log Σᵢ exp(xsᵢ) = m + log1p(Σ_{i≠argmax} exp(xsᵢ − m)) with the maximum m outside the
// logarithm, so no term overflows, the largest does not underflow, and small terms are not lost next to 1.
// An empty slice or all −Inf gives −Inf; any +Inf gives +Inf; any NaN gives NaN.
func LogSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		if math.IsNaN(x) {
			return x
		}
		if x > m {
			m = x
		}
	}
	if math.IsInf(m, 0) { // all −Inf (or empty): the sum is 0; any +Inf: the sum is +Inf
		return m
	}
	s, skipped := 0.0, false
	for _, x := range xs {
		if x == m && !skipped { // the maximum's term is 1: added by Log1p, so tiny others are not lost next to it
			skipped = true
			continue
		}
		s += math.Exp(x - m)
	}
	return m + math.Log1p(s)
}

// logPhiTail is the argument below which LogPhiFloat uses log φ(x) − log millsCF(−x) instead of
// log(erfc(−x/√2)/2). Above it erfc is far from underflow (erfc(20/√2) ≈ 5.5e−89) and the two branches agree to
// a few ulps at the switch; erfc(−x/√2) itself underflows to 0 for x < −38.5.
const logPhiTail = -20

// millsCFMin is the argument t from which millsCF is used instead of erfc. Below it erfc is ~30× cheaper than
// the continued fraction (which needs ~50 terms near t = 3) and the rounding of its argument t/√2 costs at most
// t²·2⁻⁵³ ≈ 7e-15 relative; above it the continued fraction converges in a few terms and avoids that rounding.
const millsCFMin = 8

const (
	lnSqrt2Pi   = 0.91893853320467274178032973640561763986139747363778 // log √(2π)
	invSqrt2Pi  = 0.39894228040143267793994605993438186847585863116493 // 1/√(2π)
	millsMaxIts = 500                                                  // never reached for t ≥ millsCFMin
)

// millsCF returns φ(t)/Φ(−t) for t ≥ millsCFMin, the reciprocal of Mills' ratio, from Laplace's continued fraction
// t + 1/(t + 2/(t + 3/(t + …))) evaluated with the modified Lentz algorithm (a few ulps; 52 terms at t = 3, 8 at
// t = 20). It is ≈ t for large t and never under- or overflows.
func millsCF(t float64) float64 {
	const tiny = 1e-300
	if !(t < math.Inf(1)) { // +Inf or NaN
		return t
	}
	f, c, d := t, t, 0.0
	for k := 1; k < millsMaxIts; k++ {
		a := float64(k)
		d = t + a*d
		if d == 0 {
			d = tiny
		}
		d = 1 / d
		c = t + a/c
		if c == 0 {
			c = tiny
		}
		delta := c * d
		f *= delta
		if math.Abs(delta-1) < 2e-16 {
			break
		}
	}
	return f
}

// expHalfSq returns e^(−x²/2) with x² split exactly into hi + lo (by FMA), so the rounding of x² does not cost the
// relative accuracy x²·2⁻⁵³ that exp(−0.5·x·x) loses.
func expHalfSq(x float64) float64 {
	hi := x * x
	lo := math.FMA(x, x, -hi)
	return math.Exp(-0.5*hi) * math.Exp(-0.5*lo)
}

// phiPDF returns φ(x) = e^(−x²/2)/√(2π).
func phiPDF(x float64) float64 { return invSqrt2Pi * expHalfSq(x) }

// upperTail returns Φ(−t) = 1 − Φ(t) for t ≥ 0 to full relative precision: erfc(t/√2)/2 below millsCFMin,
// φ(t)/millsCF(t) above.
func upperTail(t float64) float64 {
	if t < millsCFMin {
		return 0.5 * math.Erfc(t/math.Sqrt2)
	}
	return phiPDF(t) / millsCF(t)
}

// phiCDF returns Φ(x), the standard normal CDF, with full relative precision in the lower tail.
func phiCDF(x float64) float64 {
	if x < 0 {
		return upperTail(-x)
	}
	return 1 - upperTail(x)
}

// LogPhiFloat returns log Φ(x), the log of the standard normal CDF, without underflow for very negative x:
// −x²/2 − log√(2π) − log millsCF(−x) below logPhiTail (a continued fraction for φ/Φ, no erfc underflow:
// LogPhiFloat(−1e3) ≈ −500007.83), log(erfc(−x/√2)/2) on [logPhiTail, 0], and log1p(−Φ(−x)) for x > 0 (so the tiny
// value log Φ(x) ≈ −Φ(−x) keeps its relative precision). Finite for every finite x whose square does not
// overflow; 0 for x ≳ 38.5.
func LogPhiFloat(x float64) float64 {
	switch {
	case x < logPhiTail:
		return -0.5*x*x - lnSqrt2Pi - math.Log(millsCF(-x))
	case x <= 0:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	default:
		return math.Log1p(-upperTail(x))
	}
}

// logPhiDeriv returns d/dx log Φ(x) = φ(x)/Φ(x) stably: the continued fraction millsCF(−x) for x < −millsCFMin
// (no ratio of underflowing quantities; ≈ −x), φ(x)/Φ(x) above (→ 0 as x → ∞).
func logPhiDeriv(x float64) float64 {
	if x < -millsCFMin {
		return millsCF(-x)
	}
	return phiPDF(x) / phiCDF(x)
}

// stableSigmoid returns 1/(1 + e^−x) without overflow: e^x/(1 + e^x) for x < 0.
func stableSigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
