package ops

import (
	"math"

	"github.com/gpzoo/gpzoo/internal/vmath"
)

// The covariance families of CovMatrix / CovDiag (see CovFamily for the formulas and the hyperparameter order).

var (
	covHyperStationary = []covHyper{{name: "variance"}, {name: "lengthscales", vec: true}}
	covHyperRQ         = []covHyper{{name: "variance"}, {name: "lengthscales", vec: true}, {name: "alpha"}}
	covHyperPeriodic   = []covHyper{{name: "variance"}, {name: "lengthscales", vec: true}, {name: "period"}}
	covHyperLinear     = []covHyper{{name: "variance", vec: true, scalarOK: true}}
)

// covFuncOf returns the implementation of a family.
func covFuncOf(f CovFamily) (covFunc, bool) {
	switch f {
	case SquaredExp, Matern12, Matern32, Matern52, RationalQuadratic:
		return covStationary{fam: f}, true
	case Periodic:
		return covPeriodic{}, true
	case Linear:
		return covLinear{}, true
	}
	return nil, false
}

// Operand indices of CovMatrix (x1, x2, hyper...) and CovDiag (x, hyper...).
const (
	covWrtX1 = 0
	covWrtX2 = 1
	covWrtH0 = 2 // first hyperparameter of CovMatrix; hyperparameter j is covWrtH0+j
)

// ---------------------------------------------------------------------------------------------------------------
// Stationary kernels k = σ² φ(r²): SquaredExp, Matérn 1/2, 3/2, 5/2, RationalQuadratic.
//
// Forward: r² by covPair.sqdist (one Gemm), then φ elementwise (its exponentials by vmath.Exp, in blocks).
// Backward: W = G ⊙ ∂K/∂r² (N×M, from the forward output K, so no exp is re-evaluated), then with
// a = (x1 − c)/ℓ, b = (x2 − c)/ℓ and ∂r²/∂x1_d = 2(a_d − b_d)/ℓ_d, ∂r²/∂ℓ_d = −2(a_d − b_d)²/ℓ_d:
//
//	dX1 = 2(diag(W1) a − W b)/ℓ,   dX2 = 2(diag(Wᵀ1) b − Wᵀ a)/ℓ,
//	dℓ_d = −(2/ℓ_d) [Σ_i (W1)_i a_id² + Σ_j (Wᵀ1)_j b_jd² − 2 Σ_i a_id (W b)_id],
//
// one Gemm each (covPair.weighted). Families other than SquaredExp need r² for ∂K/∂r², recomputed by one more
// Gemm (each gradient op recomputes what it needs: gradient ops share no state); their
// near pairs (covNearRel) are taken out of W and added directly, so the expansion above never cancels badly
// (this matters for Matern12, whose ∂K/∂r² = −K/(2r) is unbounded near r = 0).

type covStationary struct{ fam CovFamily }

func (s covStationary) family() CovFamily { return s.fam }

func (s covStationary) hyper() []covHyper {
	if s.fam == RationalQuadratic {
		return covHyperRQ
	}
	return covHyperStationary
}

func (s covStationary) alpha(h []arg) float64 {
	if s.fam == RationalQuadratic {
		return h[2].scalar()
	}
	return 0
}

// covExpChunk is the block over which profile vectorises its exponentials (its buffer stays in the L1 cache).
const covExpChunk = 256

// profile maps r² to s2·φ(r²) in place: per block of covExpChunk entries, the exponent of each entry into a
// buffer, one vmath.Exp over it, then the products.
func (s covStationary) profile(s2, alpha float64, v []float64) {
	var buf [covExpChunk]float64
	for len(v) > 0 {
		c := v[:min(len(v), covExpChunk)]
		v = v[len(c):]
		e := buf[:len(c)]
		switch s.fam {
		case SquaredExp:
			for i, r2 := range c {
				e[i] = -0.5 * r2
			}
			vmath.Exp(e, e)
			for i := range c {
				c[i] = s2 * e[i]
			}
		case Matern12:
			for i, r2 := range c {
				e[i] = -math.Sqrt(covFloor(r2))
			}
			vmath.Exp(e, e)
			for i := range c {
				c[i] = s2 * e[i]
			}
		case Matern32:
			for i, r2 := range c {
				r := math.Sqrt(3 * covFloor(r2))
				c[i], e[i] = r, -r
			}
			vmath.Exp(e, e)
			for i, r := range c {
				c[i] = s2 * (1 + r) * e[i]
			}
		case Matern52:
			for i, r2 := range c {
				r := math.Sqrt(5 * covFloor(r2))
				c[i], e[i] = r, -r
			}
			vmath.Exp(e, e)
			for i, r := range c {
				c[i] = s2 * (1 + r + r*r/3) * e[i]
			}
		case RationalQuadratic:
			for i, r2 := range c {
				e[i] = -alpha * math.Log1p(r2/(2*alpha))
			}
			vmath.Exp(e, e)
			for i := range c {
				c[i] = s2 * e[i]
			}
		}
	}
}

// covFloor returns max(r2, covR2Floor) (NaN propagates); inlined, unlike math.Max.
func covFloor(r2 float64) float64 {
	if r2 < covR2Floor {
		return covR2Floor
	}
	return r2
}

// slope writes w_i = g_i · ∂K/∂r² at r2_i, given the kernel values k_i (r2 is unused by SquaredExp).
//
//	SE: −K/2   M12: −K/(2r) (0 for r² < covR2Floor: the subgradient)   M32: −(3/2) K/(1+√3r)
//	M52: −(5/6) K (1+√5r)/(1+√5r+5r²/3)   RQ: −K/(2(1+r²/(2α)))
func (s covStationary) slope(alpha float64, r2, k, g, w []float64) {
	switch s.fam {
	case SquaredExp:
		for i := range w {
			w[i] = -0.5 * g[i] * k[i]
		}
	case Matern12:
		for i := range w {
			if r2[i] < covR2Floor {
				w[i] = 0
			} else {
				w[i] = -0.5 * g[i] * k[i] / math.Sqrt(r2[i])
			}
		}
	case Matern32:
		for i := range w {
			r := math.Sqrt(3 * covFloor(r2[i]))
			w[i] = -1.5 * g[i] * k[i] / (1 + r)
		}
	case Matern52:
		for i := range w {
			r := math.Sqrt(5 * covFloor(r2[i]))
			w[i] = -(5.0 / 6) * g[i] * k[i] * (1 + r) / (1 + r + r*r/3)
		}
	case RationalQuadratic:
		for i := range w {
			w[i] = -0.5 * g[i] * k[i] / (1 + r2[i]/(2*alpha))
		}
	}
}

func (s covStationary) eval(x1, x2 arg, h []arg, s2 float64, out []float64) {
	p := covNewPair(x1, x2, h[1].data, true)
	defer p.release()
	m, alpha := x2.rows(), s.alpha(h)
	p.sqdist(out, func(_, lo, hi int) { s.profile(s2, alpha, out[lo*m:hi*m]) })
}

func (s covStationary) matrix(x1, x2 arg, h []arg, out []float64) {
	s.eval(x1, x2, h, h[0].scalar(), out)
}

func (s covStationary) matrixGrad(wrt int, x1, x2 arg, h []arg, k, g arg, dst []float64) {
	s2, alpha := h[0].scalar(), s.alpha(h)
	if wrt == covWrtH0 { // variance
		dst[0] = covVarianceGrad(g.data, k.data, s2, func(u []float64) { s.eval(x1, x2, h, 1, u) })
		return
	}
	n, m, d := x1.rows(), x2.rows(), x1.cols()
	needR2 := s.fam != SquaredExp
	p := covNewPair(x1, x2, h[1].data, needR2)
	w := covScratch(n * m)
	defer func() { p.release(); covRelease(w) }()
	chunks := covChunks(n, m)
	if wrt == covWrtH0+2 { // RationalQuadratic alpha: ∂K/∂α = K (u/(1+u) − log1p(u)), u = r²/(2α)
		part := make([]float64, chunks)
		p.sqdist(w, func(c, lo, hi int) {
			sum := 0.0
			for i := lo * m; i < hi*m; i++ {
				u := w[i] / (2 * alpha)
				sum += g.data[i] * k.data[i] * (u/(1+u) - math.Log1p(u))
			}
			part[c] = sum
		})
		dst[0] = 0
		for _, v := range part {
			dst[0] += v
		}
		return
	}
	// W = G ⊙ ∂K/∂r²: the Gemm part in w; near pairs go to extras[chunk] (same shape as dst, allocated on demand).
	extras := make([][]float64, chunks)
	if !needR2 {
		s.slope(0, nil, k.data, g.data, w)
	} else {
		p.sqdist(w, func(c, lo, hi int) {
			tmp := covScratch(m)
			defer covRelease(tmp)
			for i := lo; i < hi; i++ {
				row := w[i*m : (i+1)*m]
				s.slope(alpha, row, k.data[i*m:(i+1)*m], g.data[i*m:(i+1)*m], tmp)
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

func (s covStationary) diag(_ arg, h []arg, out []float64) { covFill(out, h[0].scalar()) }

func (s covStationary) diagGrad(wrt int, _ arg, _ []arg, _, g arg, dst []float64) {
	covConstDiagGrad(wrt, g, dst)
}

func covFill(out []float64, v float64) {
	for i := range out {
		out[i] = v
	}
}

// covConstDiagGrad is the gradient of diag K = σ²·1 (stationary and periodic kernels): Σg for the variance
// (CovDiag operand 1), zero for everything else.
func covConstDiagGrad(wrt int, g arg, dst []float64) {
	if wrt == 1 {
		s := 0.0
		for _, v := range g.data {
			s += v
		}
		dst[0] = s
		return
	}
	clear(dst)
}

// ---------------------------------------------------------------------------------------------------------------
// Periodic: k = σ² exp(E), E = −2 Σ_d sin²(π(x_d − x'_d)/p)/ℓ_d² = −Σ_d (1 − cos ω(x_d − x'_d))/ℓ_d², ω = 2π/p.
//
// With the features C = cos(ω x̃), S = sin(ω x̃) (x̃ = x − c, c the common column mean),
// E = [C1 S1]/ℓ · ([C2 S2]/ℓ)ᵀ − Σ_d 1/ℓ_d²: one Gemm with inner dimension 2D. Near pairs (|E| < Σ1/ℓ² / 64,
// including coincident rows and rows a whole period apart) are recomputed with the sines directly.
// Backward with W = G ⊙ K (∂K/∂E = K) and the unscaled features, P = W [C2 S2], Q = Wᵀ [C1 S1]:
//
//	dX1_d = (ω/ℓ_d²)(C1_d ⊙ P_S − S1_d ⊙ P_C),   dX2_d = (ω/ℓ_d²)(C2_d ⊙ Q_S − S2_d ⊙ Q_C),
//	dℓ_d  = (2/ℓ_d³)(Σ W − Σ_i (C1_d P_C + S1_d P_S)_i),
//	dp    = −(1/p)(⟨x̃1, dX1⟩ + ⟨x̃2, dX2⟩)      (E depends on (x − x')/p only).

type covPeriodic struct{}

func (covPeriodic) family() CovFamily { return Periodic }
func (covPeriodic) hyper() []covHyper { return covHyperPeriodic }

// covTrig writes the features cos(ω x), sin(ω x) of the transposed inputs xt [d,n], times inv[k] when inv is
// non-nil, into dst: row-major [n,2d] rows (cos_1..cos_d, sin_1..sin_d) when rowMajor, else transposed [2d,n].
func covTrig(xt []float64, d, n int, omega float64, inv []float64, rowMajor bool, dst []float64) {
	for k := 0; k < d; k++ {
		for i, x := range xt[k*n : (k+1)*n] {
			sn, cs := math.Sincos(omega * x)
			if inv != nil {
				sn, cs = sn*inv[k], cs*inv[k]
			}
			if rowMajor {
				dst[2*i*d+k], dst[2*i*d+d+k] = cs, sn
			} else {
				dst[k*n+i], dst[(d+k)*n+i] = cs, sn
			}
		}
	}
}

// covInv returns 1/ℓ (pooled).
func covInv(ell []float64) []float64 {
	inv := covScratch(len(ell))
	for k, v := range ell {
		inv[k] = 1 / v
	}
	return inv
}

func (c covPeriodic) eval(x1, x2 arg, h []arg, s2 float64, out []float64) {
	n, m, d := x1.rows(), x2.rows(), x1.cols()
	p := covNewPair(x1, x2, nil, false) // centred, unscaled
	inv, t1, t2 := covInv(h[1].data), covScratch(2*n*d), covScratch(2*m*d)
	defer func() { p.release(); covRelease(inv, t1, t2) }()
	per := h[2].scalar()
	omega := 2 * math.Pi / per
	covTrig(p.at, d, n, omega, inv, true, t1)
	covTrig(p.bt, d, m, omega, inv, false, t2)
	covGemm(false, false, 1, t1, n, 2*d, t2, 2*d, m, out)
	l := 0.0
	for _, v := range inv {
		l += v * v
	}
	covForRows(covChunks(n, m), n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			row, xi := out[i*m:(i+1)*m], x1.data[i*d:(i+1)*d]
			for j, v := range row {
				e := v - l
				if e > -covNearRel*l { // near: recompute E directly
					e = 0
					xj := x2.data[j*d : (j+1)*d]
					for k, xv := range xi {
						sn := math.Sin(math.Pi*(xv-xj[k])/per) * inv[k]
						e -= 2 * sn * sn
					}
				}
				if e > 0 {
					e = 0
				}
				row[j] = e
			}
			vmath.Exp(row, row)
			for j, v := range row {
				row[j] = s2 * v
			}
		}
	})
}

func (c covPeriodic) matrix(x1, x2 arg, h []arg, out []float64) {
	c.eval(x1, x2, h, h[0].scalar(), out)
}

func (c covPeriodic) matrixGrad(wrt int, x1, x2 arg, h []arg, k, g arg, dst []float64) {
	s2 := h[0].scalar()
	if wrt == covWrtH0 {
		dst[0] = covVarianceGrad(g.data, k.data, s2, func(u []float64) { c.eval(x1, x2, h, 1, u) })
		return
	}
	n, m, d := x1.rows(), x2.rows(), x1.cols()
	per := h[2].scalar()
	omega := 2 * math.Pi / per
	p := covNewPair(x1, x2, nil, false)
	inv, w, u1, u2 := covInv(h[1].data), covScratch(n*m), covScratch(2*n*d), covScratch(2*m*d)
	defer func() { p.release(); covRelease(inv, w, u1, u2) }()
	for i, v := range g.data[:n*m] {
		w[i] = v * k.data[i]
	}
	covTrig(p.at, d, n, omega, nil, false, u1) // [C1; S1] transposed [2d,n]
	covTrig(p.bt, d, m, omega, nil, false, u2) // [C2; S2] transposed [2d,m]
	// pt = (W [C2 S2])ᵀ [2d,n]
	pt := func() []float64 {
		pt := covScratch(2 * n * d)
		covGemm(false, true, 1, u2, 2*d, m, w, n, m, pt)
		return pt
	}
	dx1 := func(out []float64) {
		pt := pt()
		defer covRelease(pt)
		for kk := 0; kk < d; kk++ {
			f := omega * inv[kk] * inv[kk]
			for i := 0; i < n; i++ {
				out[i*d+kk] = f * (u1[kk*n+i]*pt[(d+kk)*n+i] - u1[(d+kk)*n+i]*pt[kk*n+i])
			}
		}
	}
	dx2 := func(out []float64) {
		qt := covScratch(2 * m * d) // (Wᵀ [C1 S1])ᵀ [2d,m]
		defer covRelease(qt)
		covGemm(false, false, 1, u1, 2*d, n, w, n, m, qt)
		for kk := 0; kk < d; kk++ {
			f := omega * inv[kk] * inv[kk]
			for j := 0; j < m; j++ {
				out[j*d+kk] = f * (u2[kk*m+j]*qt[(d+kk)*m+j] - u2[(d+kk)*m+j]*qt[kk*m+j])
			}
		}
	}
	switch wrt {
	case covWrtX1:
		dx1(dst)
	case covWrtX2:
		dx2(dst)
	case covWrtH0 + 1: // lengthscales
		pt := pt()
		defer covRelease(pt)
		total := 0.0
		for _, v := range w {
			total += v
		}
		for kk := 0; kk < d; kk++ {
			s := 0.0
			for i := 0; i < n; i++ {
				s += u1[kk*n+i]*pt[kk*n+i] + u1[(d+kk)*n+i]*pt[(d+kk)*n+i]
			}
			dst[kk] = 2 * inv[kk] * inv[kk] * inv[kk] * (total - s)
		}
	case covWrtH0 + 2: // period
		a, b := covScratch(n*d), covScratch(m*d)
		defer covRelease(a, b)
		dx1(a)
		dx2(b)
		s := 0.0
		for kk := 0; kk < d; kk++ {
			for i := 0; i < n; i++ {
				s += p.at[kk*n+i] * a[i*d+kk]
			}
			for j := 0; j < m; j++ {
				s += p.bt[kk*m+j] * b[j*d+kk]
			}
		}
		dst[0] = -s / per
	}
}

func (covPeriodic) diag(_ arg, h []arg, out []float64) { covFill(out, h[0].scalar()) }

func (covPeriodic) diagGrad(wrt int, _ arg, _ []arg, _, g arg, dst []float64) {
	covConstDiagGrad(wrt, g, dst)
}

// ---------------------------------------------------------------------------------------------------------------
// Linear: K = X1 diag(σ²) X2ᵀ (one Gemm on the scaled x1; a scalar σ² is the Gemm's alpha).
//
//	dX1 = G X2 diag(σ²),   dX2 = Gᵀ X1 diag(σ²),   dσ²_d = Σ_i x1_id (G X2)_id   (summed over d for a scalar σ²).

type covLinear struct{}

func (covLinear) family() CovFamily { return Linear }
func (covLinear) hyper() []covHyper { return covHyperLinear }

// covLinScale returns (alpha, scale) with diag(σ²) = alpha·diag(scale): (σ², nil) for a scalar σ², (1, σ²) for
// a vector.
func covLinScale(v arg) (float64, []float64) {
	if len(v.data) == 1 {
		return v.data[0], nil
	}
	return 1, v.data
}

func (covLinear) matrix(x1, x2 arg, h []arg, out []float64) {
	n, m, d := x1.rows(), x2.rows(), x1.cols()
	alpha, scale := covLinScale(h[0])
	x2t := covScratch(d * m) // diag(scale) X2ᵀ [d,m]
	defer covRelease(x2t)
	covTranspose(x2.data, m, d, scale, x2t)
	covGemm(false, false, alpha, x1.data, n, d, x2t, d, m, out)
}

func (covLinear) matrixGrad(wrt int, x1, x2 arg, h []arg, _, g arg, dst []float64) {
	n, m, d := x1.rows(), x2.rows(), x1.cols()
	alpha, scale := covLinScale(h[0])
	switch wrt {
	case covWrtX1: // dX1ᵀ = σ² X2ᵀ Gᵀ
		x2t, t := covScratch(d*m), covScratch(d*n)
		defer covRelease(x2t, t)
		covTranspose(x2.data, m, d, scale, x2t)
		covGemm(false, true, alpha, x2t, d, m, g.data, n, m, t)
		covTranspose(t, d, n, nil, dst)
	case covWrtX2: // dX2ᵀ = σ² X1ᵀ G
		x1t, t := covScratch(d*n), covScratch(d*m)
		defer covRelease(x1t, t)
		covTranspose(x1.data, n, d, scale, x1t)
		covGemm(false, false, alpha, x1t, d, n, g.data, n, m, t)
		covTranspose(t, d, m, nil, dst)
	default: // variance: dσ²_k = Σ_i x1_ik (G X2)_ik, (G X2)ᵀ = X2ᵀ Gᵀ
		x2t, pt, x1t := covScratch(d*m), covScratch(d*n), covScratch(d*n)
		defer covRelease(x2t, pt, x1t)
		covTranspose(x2.data, m, d, nil, x2t)
		covGemm(false, true, 1, x2t, d, m, g.data, n, m, pt)
		covTranspose(x1.data, n, d, nil, x1t)
		covColDots(x1t, pt, d, n, dst)
	}
}

// covColDots writes Σ_i at_ki bt_ki per row k of the row-major d×n matrices at, bt into dst ([d], or the total
// when len(dst) == 1 < d: a scalar hyperparameter shared by all dimensions).
func covColDots(at, bt []float64, d, n int, dst []float64) {
	total := 0.0
	for k := 0; k < d; k++ {
		s := 0.0
		for i, v := range at[k*n : (k+1)*n] {
			s += v * bt[k*n+i]
		}
		if len(dst) == d {
			dst[k] = s
		}
		total += s
	}
	if len(dst) != d {
		dst[0] = total
	}
}

func (covLinear) diag(x arg, h []arg, out []float64) {
	n, d := x.rows(), x.cols()
	v := h[0].data
	for i := 0; i < n; i++ {
		s := 0.0
		for k, xv := range x.data[i*d : (i+1)*d] {
			s += v[k%len(v)] * xv * xv
		}
		out[i] = s
	}
}

func (covLinear) diagGrad(wrt int, x arg, h []arg, _, g arg, dst []float64) {
	n, d := x.rows(), x.cols()
	v := h[0].data
	if wrt == 0 {
		for i := 0; i < n; i++ {
			for k := 0; k < d; k++ {
				dst[i*d+k] = 2 * g.data[i] * v[k%len(v)] * x.data[i*d+k]
			}
		}
		return
	}
	// dσ²_k = Σ_i g_i x_ik² (summed over k for a scalar σ²).
	xt, gx := covScratch(n*d), covScratch(n*d)
	defer covRelease(xt, gx)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			xv := x.data[i*d+k]
			xt[k*n+i], gx[k*n+i] = xv, g.data[i]*xv
		}
	}
	covColDots(xt, gx, d, n, dst)
}
