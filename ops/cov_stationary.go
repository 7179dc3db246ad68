package ops

import "github.com/gpzoo/gpzoo/ops/internal/vmath"

// Stationary is a CovFunc for the common stationary case k = σ² φ(r²), r² = Σ_d (x_d − x'_d)²/ℓ_d²: a kernel is
// its profile and its slope on slices, plus any extra scalar hyperparameters, and Stationary supplies the rest —
// r² by one Gemm on centred, ℓ-scaled inputs (‖a‖² + ‖b‖² − 2abᵀ), pairs where that expansion cancels badly
// (r² < (‖a‖²+‖b‖²)/64, coincident rows included) recomputed directly so that r² ≥ 0 and exactly 0 for coincident
// rows, the backward pass to both inputs and the lengthscales by Gemms (near pairs added directly), pooled
// scratch and row-parallel elementwise passes.
//
// Hyperparameters: variance σ² (scalar), lengthscales ℓ [D], then Extra (scalars) in order. Use it by pointer.
//
// Backward: W = G ⊙ ∂K/∂r² (from Slope, given the forward output K, so no exponential is re-evaluated), then
// with a = (x1 − c)/ℓ, b = (x2 − c)/ℓ: dX1 = 2(diag(W1) a − W b)/ℓ, dX2 = 2(diag(Wᵀ1) b − Wᵀ a)/ℓ,
// dℓ_d = −(2/ℓ_d) Σ_ij W_ij (a_id − b_jd)², one Gemm each.
type Stationary struct {
	// Label is the Name (unique; it enters the op's hash).
	Label string
	// Extra are the hyperparameters after variance and lengthscales (scalars only).
	Extra []CovHyper
	// Profile maps r² to s2·φ(r²) in place on v; extra holds the Extra values in order. It is called on blocks of
	// rows (concurrently on disjoint blocks), so it can vectorise its exponentials (ops/internal/vmath in gpzoo).
	Profile func(s2 float64, extra []float64, v []float64)
	// Slope writes w_i = g_i · ∂K/∂r² at r2_i, given the kernel values k_i. r2 is nil unless NeedR2.
	Slope func(extra []float64, r2, k, g, w []float64)
	// NeedR2: Slope needs r² (recomputed by one more Gemm); otherwise it is a function of K alone (SE).
	NeedR2 bool
	// ExtraGrad returns Σ_i g_i ∂K_i/∂θ_j for Extra hyperparameter j over one block of pairs (r2, k, g). Required
	// when Extra is non-empty.
	ExtraGrad func(j int, extra []float64, r2, k, g []float64) float64
}

var covHyperStationary = []CovHyper{{Name: "variance"}, {Name: "lengthscales", Vec: true}}

// Name returns Label.
func (s *Stationary) Name() string { return s.Label }

// Hypers returns variance, lengthscales [D], then Extra.
func (s *Stationary) Hypers() []CovHyper {
	if len(s.Extra) == 0 {
		return covHyperStationary
	}
	return append(append([]CovHyper(nil), covHyperStationary...), s.Extra...)
}

// CovR2Floor is the floor on r² before a square root, as GPflow's 1e-36: √r² has an infinite derivative at 0,
// the floored value keeps every gradient finite. (Matérn kernels take √max(r², CovR2Floor).)
const CovR2Floor = covR2Floor

func (s *Stationary) extra(h []CovInput) []float64 {
	if len(h) <= 2 {
		return nil
	}
	e := make([]float64, len(h)-2)
	for i := range e {
		e[i] = h[2+i].Scalar()
	}
	return e
}

func (s *Stationary) eval(x1, x2 CovInput, h []CovInput, s2 float64, out []float64) {
	p := covNewPair(x1, x2, h[1].Data, true)
	defer p.release()
	m, extra := x2.Rows(), s.extra(h)
	p.sqdist(out, func(_, lo, hi int) { s.Profile(s2, extra, out[lo*m:hi*m]) })
}

// Matrix writes K(x1, x2).
func (s *Stationary) Matrix(x1, x2 CovInput, h []CovInput, out []float64) {
	s.eval(x1, x2, h, h[0].Scalar(), out)
}

// MatrixGrad writes the gradient with respect to operand wrt.
func (s *Stationary) MatrixGrad(wrt int, x1, x2 CovInput, h []CovInput, k, g []float64, dst []float64) {
	s2, extra := h[0].Scalar(), s.extra(h)
	if wrt == covWrtH0 { // variance
		dst[0] = covVarianceGrad(g, k, s2, func(u []float64) { s.eval(x1, x2, h, 1, u) })
		return
	}
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	p := covNewPair(x1, x2, h[1].Data, s.NeedR2 || len(s.Extra) > 0)
	w := covScratch(n * m)
	defer func() { p.release(); covRelease(w) }()
	chunks := covChunks(n, m)
	if wrt >= covWrtH0+2 { // an extra hyperparameter
		j := wrt - covWrtH0 - 2
		part := make([]float64, chunks)
		p.sqdist(w, func(c, lo, hi int) {
			part[c] = s.ExtraGrad(j, extra, w[lo*m:hi*m], k[lo*m:hi*m], g[lo*m:hi*m])
		})
		dst[0] = 0
		for _, v := range part {
			dst[0] += v
		}
		return
	}
	// W = G ⊙ ∂K/∂r²: the Gemm part in w; near pairs go to extras[chunk] (same shape as dst, allocated on demand).
	extras := make([][]float64, chunks)
	if !s.NeedR2 {
		s.Slope(extra, nil, k, g, w)
	} else {
		p.sqdist(w, func(c, lo, hi int) {
			tmp := covScratch(m)
			defer covRelease(tmp)
			for i := lo; i < hi; i++ {
				row := w[i*m : (i+1)*m]
				s.Slope(extra, row, k[i*m:(i+1)*m], g[i*m:(i+1)*m], tmp)
				for j, r2 := range row {
					if !p.near(i, j, r2) {
						row[j] = tmp[j]
						continue
					}
					row[j] = 0
					if tmp[j] != 0 {
						if extras[c] == nil {
							extras[c] = covZeros(len(dst))
						}
						covNearGrad(wrt, p, i, j, tmp[j], extras[c])
					}
				}
			}
		})
	}
	switch wrt {
	case covWrtX1, covWrtX2:
		if wrt == covWrtX1 {
			p.weighted(w, dst, nil, nil)
		} else {
			p.weighted(w, nil, dst, nil)
		}
		for i := range dst {
			dst[i] *= 2 * p.inv[i%d]
		}
	case covWrtH0 + 1: // lengthscales
		p.weighted(w, nil, nil, dst)
		for i := range dst {
			dst[i] *= -2 * p.inv[i]
		}
	}
	for _, e := range extras {
		for i, v := range e {
			dst[i] += v
		}
		covRelease(e)
	}
}

// covNearGrad adds the contribution of the near pair (i, j) with weight wij = g_ij ∂K_ij/∂r² to extra.
func covNearGrad(wrt int, p *covPair, i, j int, wij float64, extra []float64) {
	d := p.d
	for k := 0; k < d; k++ {
		t := p.at[k*p.n+i] - p.bt[k*p.m+j]
		switch wrt {
		case covWrtX1:
			extra[i*d+k] += 2 * wij * t * p.inv[k]
		case covWrtX2:
			extra[j*d+k] -= 2 * wij * t * p.inv[k]
		default: // lengthscales
			extra[k] -= 2 * wij * t * t * p.inv[k]
		}
	}
}

// Diag writes σ² on every entry.
func (s *Stationary) Diag(_ CovInput, h []CovInput, out []float64) { covFill(out, h[0].Scalar()) }

// DiagGrad: Σg for the variance, zero for everything else.
func (s *Stationary) DiagGrad(wrt int, _ CovInput, _ []CovInput, _, g []float64, dst []float64) {
	covConstDiagGrad(wrt, g, dst)
}

// SqDist writes the scaled squared distances r²_ij = Σ_d (x1_id − x2_jd)²/ℓ_d² [N,M] into out (ell nil: ℓ = 1),
// by the Gemm expansion with badly cancelling pairs recomputed directly: every entry ≥ 0, exactly 0 for
// coincident rows. For covariance functions outside ops.
func SqDist(x1, x2 CovInput, ell []float64, out []float64) {
	p := covNewPair(x1, x2, ell, true)
	defer p.release()
	p.sqdist(out, nil)
}

// CovScratch returns a pooled slice of length n (contents undefined); give it back with CovRelease.
func CovScratch(n int) []float64 { return covScratch(n) }

// CovRelease returns slices from CovScratch to the pool.
func CovRelease(s ...[]float64) { covRelease(s...) }

// VecExp writes exp(x_i) into dst_i (dst and x may be the same slice): gpzoo's vectorised exponential (≤ 1 ulp,
// the same bits on every CPU kernel), for the profiles of covariance functions.
func VecExp(dst, x []float64) { vmath.Exp(dst, x) }
