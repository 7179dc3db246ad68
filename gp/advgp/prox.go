package advgp

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// Prox applies, in place, the proximal operator of h (eq. 15) with per-coordinate steps: it returns
// argmin_θ h(θ) + Σ_k (θ_k − θ′_k)²/(2γ_k) for θ′ = (mu [M], l [M,M] triangular, row-major), which is
// separable and closed form (Peng et al. 2017, eqs. 18–20):
//
//	μ_i ← μ′_i/(1+γ_i),  l_ij ← l′_ij/(1+γ_ij) (i ≠ j),  l_ii ← (l′_ii + √(l′_ii² + 4(1+γ_ii)γ_ii)) / (2(1+γ_ii)).
//
// The paper writes it for U (upper); h depends on the factor only through ‖l‖²_F and Σ ln l_ii, so the same
// formulas hold for the lower factor Uᵀ that gpzoo stores. Entries of l outside its triangle must be zero and
// stay zero. gammaMu has length M or 1 (one step for all), gammaL length M·M or 1; every γ must be positive and
// finite. The new diagonal is always positive.
func Prox(mu, l []float64, m int, gammaMu, gammaL []float64) error {
	if len(mu) != m || len(l) != m*m || (len(gammaMu) != m && len(gammaMu) != 1) || (len(gammaL) != m*m && len(gammaL) != 1) {
		return &ops.ShapeError{Op: "advgp.Prox", Want: fmt.Sprintf("μ [%d], factor [%d,%d], steps of length 1 or the same", m, m, m),
			Got: fmt.Sprintf("%d, %d, %d, %d", len(mu), len(l), len(gammaMu), len(gammaL))}
	}
	for _, gs := range [][]float64{gammaMu, gammaL} {
		for _, g := range gs {
			if !(g > 0) || math.IsInf(g, 0) {
				return fmt.Errorf("%w: proximal step γ must be positive and finite, got %g", ErrConfig, g)
			}
		}
	}
	for i := range mu {
		mu[i] /= 1 + elem(gammaMu, i)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			k := i*m + j
			g := elem(gammaL, k)
			if i != j {
				l[k] /= 1 + g
				continue
			}
			u := l[k]
			r := math.Sqrt(u*u + 4*(1+g)*g)
			if u >= 0 {
				l[k] = (u + r) / (2 * (1 + g))
			} else { // the same root without cancellation: (u + r)(r − u) = 4(1+γ)γ
				l[k] = 2 * g / (r - u)
			}
		}
	}
	return nil
}

// QGrads converts the gradients of a data term with respect to the raw values of μ and of the factor's Param
// (what a worker's program returns) into gradients with respect to μ and the lower factor Uᵀ itself: the
// factor's diagonal is softplus(raw) + floor, so ∂/∂l_ii = (∂/∂raw_ii)/sigmoid(raw_ii); its strictly lower
// part is raw. The results are new slices.
func (m *Model) QGrads(gradMuRaw, gradSqrtRaw []float64) (gMu, gL []float64, err error) {
	n := m.M()
	if len(gradMuRaw) != n || len(gradSqrtRaw) != n*n {
		return nil, nil, &ops.ShapeError{Op: "advgp.QGrads", Want: fmt.Sprintf("%d and %d gradient values", n, n*n), Got: fmt.Sprintf("%d and %d", len(gradMuRaw), len(gradSqrtRaw))}
	}
	raw := m.Sqrt().Raw()
	gL = make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			gL[i*n+j] = gradSqrtRaw[i*n+j]
		}
		gL[i*n+i] = gradSqrtRaw[i*n+i] / sigmoid(raw[i*n+i])
	}
	return append([]float64(nil), gradMuRaw...), gL, nil
}

// ProxStep performs one proximal gradient update of q(w) for the objective F + w·h, where F is the data term
// whose (value-space, see QGrads) step directions are dMu and dL and w > 0 weighs h (1/n when F is the data
// term per training point): θ′ = θ − η⊙d, then θ ← Prox(θ′) with γ = w·η. etaMu and etaL follow Prox's length
// rules. A diagonal entry the proximal map puts at or below the factor's floor (possible only for tiny γ) is
// raised to twice the floor; clamped counts them. Only the lower triangle of dL is read.
func (m *Model) ProxStep(dMu, dL, etaMu, etaL []float64, w float64) (clamped int, err error) {
	n := m.M()
	if len(dMu) != n || len(dL) != n*n {
		return 0, &ops.ShapeError{Op: "advgp.ProxStep", Want: fmt.Sprintf("%d and %d step directions", n, n*n), Got: fmt.Sprintf("%d and %d", len(dMu), len(dL))}
	}
	if (len(etaMu) != n && len(etaMu) != 1) || (len(etaL) != n*n && len(etaL) != 1) {
		return 0, &ops.ShapeError{Op: "advgp.ProxStep", Want: fmt.Sprintf("steps of length 1 or %d and 1 or %d", n, n*n), Got: fmt.Sprintf("%d and %d", len(etaMu), len(etaL))}
	}
	if !(w > 0) || math.IsInf(w, 0) {
		return 0, fmt.Errorf("%w: weight of h must be positive and finite, got %g", ErrConfig, w)
	}
	mu, l := m.Mu().Value(), m.Sqrt().Value()
	gMu, gL := make([]float64, len(etaMu)), make([]float64, len(etaL))
	for i := range mu {
		mu[i] -= elem(etaMu, i) * dMu[i]
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			l[i*n+j] -= elem(etaL, i*n+j) * dL[i*n+j]
		}
	}
	for i, e := range etaMu {
		gMu[i] = w * e
	}
	for i, e := range etaL {
		gL[i] = w * e
	}
	if err := Prox(mu, l, n, gMu, gL); err != nil {
		return 0, err
	}
	floor := graph.DefaultPositiveFloor
	if t, ok := m.Sqrt().Transform().(graph.LowerTriangular); ok && t.Floor > 0 {
		floor = t.Floor
	}
	for i := 0; i < n; i++ {
		if l[i*n+i] <= floor {
			l[i*n+i] = 2 * floor
			clamped++
		}
	}
	// Both new values are checked before either is set, so an error changes nothing.
	if err := ops.CheckFinite("advgp.ProxStep μ", mu, 1); err != nil {
		return 0, err
	}
	if err := ops.CheckFinite("advgp.ProxStep factor", l, n); err != nil {
		return 0, err
	}
	if err := m.Mu().Set(mu); err != nil {
		return clamped, err
	}
	return clamped, m.Sqrt().Set(l)
}

// elem returns v[k], or v[0] for a slice of length 1 (one step for every coordinate).
func elem(v []float64, k int) float64 {
	if len(v) == 1 {
		return v[0]
	}
	return v[k]
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
