package ops

import (
	"math"

	"github.com/gpzoo/gpzoo/internal/vmath"
)

// The covariance families of CovMatrix / CovDiag implemented in ops: Periodic and Linear (the stationary ones are Stationary values in package gp).

var (
	covHyperPeriodic = []CovHyper{{Name: "variance"}, {Name: "lengthscales", Vec: true}, {Name: "period"}}
	covHyperLinear   = []CovHyper{{Name: "variance", Vec: true, ScalarOK: true}}
)

// Operand indices of CovMatrix (x1, x2, hyper...) and CovDiag (x, hyper...).
const (
	covWrtX1 = 0
	covWrtX2 = 1
	covWrtH0 = 2 // first hyperparameter of CovMatrix; hyperparameter j is covWrtH0+j
)

func covFill(out []float64, v float64) {
	for i := range out {
		out[i] = v
	}
}

// covConstDiagGrad is the gradient of diag K = σ²·1 (stationary and periodic kernels): Σg for the variance
// (CovDiag operand 1), zero for everything else.
func covConstDiagGrad(wrt int, g []float64, dst []float64) {
	if wrt == 1 {
		s := 0.0
		for _, v := range g {
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

// PeriodicCov is the periodic covariance function: hyperparameters variance σ² (scalar), lengthscales ℓ [D],
// period p (scalar); k = σ² exp(−2 Σ_d sin²(π (x_d − x'_d)/p) / ℓ_d²), the standard (MacKay / Duvenaud) form,
// equal to GPflow's Periodic(SquaredExponential) with GPflow lengthscales ℓ/2.
type PeriodicCov struct{}

// Name returns "Periodic".
func (PeriodicCov) Name() string { return "Periodic" }

// Hypers returns variance, lengthscales [D], period.
func (PeriodicCov) Hypers() []CovHyper { return covHyperPeriodic }

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

func (c PeriodicCov) eval(x1, x2 CovInput, h []CovInput, s2 float64, out []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	p := covNewPair(x1, x2, nil, false) // centred, unscaled
	inv, t1, t2 := covInv(h[1].Data), covScratch(2*n*d), covScratch(2*m*d)
	defer func() { p.release(); covRelease(inv, t1, t2) }()
	per := h[2].Scalar()
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
			row, xi := out[i*m:(i+1)*m], x1.Data[i*d:(i+1)*d]
			for j, v := range row {
				e := v - l
				if e > -covNearRel*l { // near: recompute E directly
					e = 0
					xj := x2.Data[j*d : (j+1)*d]
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

func (c PeriodicCov) Matrix(x1, x2 CovInput, h []CovInput, out []float64) {
	c.eval(x1, x2, h, h[0].Scalar(), out)
}

func (c PeriodicCov) MatrixGrad(wrt int, x1, x2 CovInput, h []CovInput, k, g []float64, dst []float64) {
	s2 := h[0].Scalar()
	if wrt == covWrtH0 {
		dst[0] = covVarianceGrad(g, k, s2, func(u []float64) { c.eval(x1, x2, h, 1, u) })
		return
	}
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	per := h[2].Scalar()
	omega := 2 * math.Pi / per
	p := covNewPair(x1, x2, nil, false)
	inv, w, u1, u2 := covInv(h[1].Data), covScratch(n*m), covScratch(2*n*d), covScratch(2*m*d)
	defer func() { p.release(); covRelease(inv, w, u1, u2) }()
	for i, v := range g[:n*m] {
		w[i] = v * k[i]
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

func (PeriodicCov) Diag(_ CovInput, h []CovInput, out []float64) { covFill(out, h[0].Scalar()) }

func (PeriodicCov) DiagGrad(wrt int, _ CovInput, _ []CovInput, _, g []float64, dst []float64) {
	covConstDiagGrad(wrt, g, dst)
}

// ---------------------------------------------------------------------------------------------------------------
// Linear: K = X1 diag(σ²) X2ᵀ (one Gemm on the scaled x1; a scalar σ² is the Gemm's alpha).
//
//	dX1 = G X2 diag(σ²),   dX2 = Gᵀ X1 diag(σ²),   dσ²_d = Σ_i x1_id (G X2)_id   (summed over d for a scalar σ²).

// LinearCov is the linear covariance function K = Σ_d σ²_d x_d x'_d: one hyperparameter, the variance (a
// scalar, or [D] for ARD).
type LinearCov struct{}

// Name returns "Linear".
func (LinearCov) Name() string { return "Linear" }

// Hypers returns the variance (scalar or [D]).
func (LinearCov) Hypers() []CovHyper { return covHyperLinear }

// covLinScale returns (alpha, scale) with diag(σ²) = alpha·diag(scale): (σ², nil) for a scalar σ², (1, σ²) for
// a vector.
func covLinScale(v CovInput) (float64, []float64) {
	if len(v.Data) == 1 {
		return v.Data[0], nil
	}
	return 1, v.Data
}

func (LinearCov) Matrix(x1, x2 CovInput, h []CovInput, out []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	alpha, scale := covLinScale(h[0])
	x2t := covScratch(d * m) // diag(scale) X2ᵀ [d,m]
	defer covRelease(x2t)
	covTranspose(x2.Data, m, d, scale, x2t)
	covGemm(false, false, alpha, x1.Data, n, d, x2t, d, m, out)
}

func (LinearCov) MatrixGrad(wrt int, x1, x2 CovInput, h []CovInput, _, g []float64, dst []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	alpha, scale := covLinScale(h[0])
	switch wrt {
	case covWrtX1: // dX1ᵀ = σ² X2ᵀ Gᵀ
		x2t, t := covScratch(d*m), covScratch(d*n)
		defer covRelease(x2t, t)
		covTranspose(x2.Data, m, d, scale, x2t)
		covGemm(false, true, alpha, x2t, d, m, g, n, m, t)
		covTranspose(t, d, n, nil, dst)
	case covWrtX2: // dX2ᵀ = σ² X1ᵀ G
		x1t, t := covScratch(d*n), covScratch(d*m)
		defer covRelease(x1t, t)
		covTranspose(x1.Data, n, d, scale, x1t)
		covGemm(false, false, alpha, x1t, d, n, g, n, m, t)
		covTranspose(t, d, m, nil, dst)
	default: // variance: dσ²_k = Σ_i x1_ik (G X2)_ik, (G X2)ᵀ = X2ᵀ Gᵀ
		x2t, pt, x1t := covScratch(d*m), covScratch(d*n), covScratch(d*n)
		defer covRelease(x2t, pt, x1t)
		covTranspose(x2.Data, m, d, nil, x2t)
		covGemm(false, true, 1, x2t, d, m, g, n, m, pt)
		covTranspose(x1.Data, n, d, nil, x1t)
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

func (LinearCov) Diag(x CovInput, h []CovInput, out []float64) {
	n, d := x.Rows(), x.Cols()
	v := h[0].Data
	for i := 0; i < n; i++ {
		s := 0.0
		for k, xv := range x.Data[i*d : (i+1)*d] {
			s += v[k%len(v)] * xv * xv
		}
		out[i] = s
	}
}

func (LinearCov) DiagGrad(wrt int, x CovInput, h []CovInput, _, g []float64, dst []float64) {
	n, d := x.Rows(), x.Cols()
	v := h[0].Data
	if wrt == 0 {
		for i := 0; i < n; i++ {
			for k := 0; k < d; k++ {
				dst[i*d+k] = 2 * g[i] * v[k%len(v)] * x.Data[i*d+k]
			}
		}
		return
	}
	// dσ²_k = Σ_i g_i x_ik² (summed over k for a scalar σ²).
	xt, gx := covScratch(n*d), covScratch(n*d)
	defer covRelease(xt, gx)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			xv := x.Data[i*d+k]
			xt[k*n+i], gx[k*n+i] = xv, g[i]*xv
		}
	}
	covColDots(xt, gx, d, n, dst)
}
