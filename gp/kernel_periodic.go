package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KindPeriodic is the Spec kind of the periodic kernel.
const KindPeriodic = "kernel/periodic"

// PeriodicCov is the covariance function of the periodic kernel (see periodicCov below for its exact form).
var PeriodicCov ops.CovFunc = periodicCov{}

// NewPeriodic returns the periodic kernel (MacKay 1998) with period p (initial p: KernelConfig.Period,
// default DefaultPeriod), k = σ² exp(−2 Σ_d sin²(π (x_d − x'_d)/p) / ℓ_d²).
func NewPeriodic(c KernelConfig) (*Stationary, error) {
	k, err := NewStationaryKernel(KindPeriodic, PeriodicCov, c, orDefault(c.Period, DefaultPeriod))
	if err == nil {
		k.dataInit = initPeriodicFromData
	}
	return k, err
}

func init() {
	RegisterStationaryKind(KindPeriodic, NewPeriodic, KernelFamily{Name: "periodic", Doc: "periodic σ² exp(−2 Σ_d sin²(π(x_d − x′_d)/p)/ℓ_d²), trainable period p; initialised from the targets' periodogram"})
}

// PeriodFromData returns the period the periodic kernel starts from on inputs x [N,D] and targets y [N,P]
// (column 0): 1/f for the strongest peak f of the Lomb–Scargle periodograms (Lomb 1976; Scargle 1982, eq. 10)
// of the standardised targets, less their least-squares linear trend, against each input column, the spectral
// initialisation Wilson & Adams (2013, §3) give the spectral mixture, read here for its leading frequency only
// (a periodic kernel started far from the data's period rarely reaches it: the likelihood is multimodal in p).
// At most 4000 rows are read, a random subset drawn from rng beyond (nil: the first rows). Errors: shapes,
// non-finite values, fewer than 2 rows; ok is false when the spectrum has no peak above frequency 0 (constant
// targets, one distinct input value).
func PeriodFromData(x, y *mat.Dense, rng *rand.Rand) (period float64, ok bool, err error) {
	if x == nil || y == nil {
		return 0, false, configErr("PeriodFromData needs inputs and targets")
	}
	n, d := x.Dims()
	ny, py := y.Dims()
	if ny != n || py < 1 || n < 2 {
		return 0, false, &ops.ShapeError{Op: "gp.PeriodFromData", Want: "x [N,D] and y [N,P] with N ≥ 2", Got: fmt.Sprintf("x %dx%d, y %dx%d", n, d, ny, py)}
	}
	if err := ops.CheckFinite("PeriodFromData inputs", mat.DenseCopyOf(x).RawMatrix().Data, d); err != nil {
		return 0, false, err
	}
	if err := ops.CheckFinite("PeriodFromData targets", mat.DenseCopyOf(y).RawMatrix().Data, py); err != nil {
		return 0, false, err
	}
	rows, ys, vy := periodogramTargets(x, y, rng)
	if !(vy > 0) || math.IsInf(vy, 0) {
		return 0, false, nil
	}
	_, res := linearDetrend(x, rows, ys)
	best := spectralPeak{}
	xs := make([]float64, len(rows))
	for k := 0; k < d; k++ {
		for i, r := range rows {
			xs[i] = x.At(r, k)
		}
		if p := periodogramPeaks(xs, res)[0]; p.freq > 0 && p.power > best.power {
			best = p
		}
	}
	if !(best.freq > 0) {
		return 0, false, nil
	}
	return 1 / best.freq, true, nil
}

// initPeriodicFromData sets a periodic kernel's period from PeriodFromData (the kernel's other hyperparameters
// and a spectrum without a peak leave it as it is).
func initPeriodicFromData(k *Stationary, x, y *mat.Dense, rng *rand.Rand) error {
	if x != nil {
		if _, d := x.Dims(); d != k.dim {
			return &ops.ShapeError{Op: "gp.PeriodFromData", Want: fmt.Sprintf("inputs with %d columns", k.dim), Got: fmt.Sprint(d)}
		}
	}
	p, ok, err := PeriodFromData(x, y, rng)
	if err != nil || !ok {
		return err
	}
	return k.Extra.Set([]float64{p})
}

// ---------------------------------------------------------------------------------------------------------------
// Periodic: k = σ² exp(E), E = −2 Σ_d sin²(π(x_d − x'_d)/p)/ℓ_d² = −Σ_d (1 − cos ω(x_d − x'_d))/ℓ_d², ω = 2π/p.
//
// With the features C = cos(ω x̃), S = sin(ω x̃) (x̃ = x − c, c the column mean of x1: ops.CovCentred),
// E = [C1 S1]/ℓ · ([C2 S2]/ℓ)ᵀ − Σ_d 1/ℓ_d²: one Gemm with inner dimension 2D. Near pairs (|E| < Σ1/ℓ² / 64,
// including coincident rows and rows a whole period apart) are recomputed with the sines directly.
// Backward with W = G ⊙ K (∂K/∂E = K) and the unscaled features, P = W [C2 S2], Q = Wᵀ [C1 S1]:
//
//	dX1_d = (ω/ℓ_d²)(C1_d ⊙ P_S − S1_d ⊙ P_C),   dX2_d = (ω/ℓ_d²)(C2_d ⊙ Q_S − S2_d ⊙ Q_C),
//	dℓ_d  = (2/ℓ_d³)(Σ W − Σ_i (C1_d P_C + S1_d P_S)_i),
//	dp    = −(1/p)(⟨x̃1, dX1⟩ + ⟨x̃2, dX2⟩)      (E depends on (x − x')/p only).

// periodicCov is the periodic covariance function: hyperparameters variance σ² (scalar), lengthscales ℓ [D],
// period p (scalar); k = σ² exp(−2 Σ_d sin²(π (x_d − x'_d)/p) / ℓ_d²), the standard (MacKay / Duvenaud) form,
// equal to GPflow's Periodic(SquaredExponential) with GPflow lengthscales ℓ/2.
type periodicCov struct{}

// Name returns "Periodic".
func (periodicCov) Name() string { return "Periodic" }

// Hypers returns variance, lengthscales [D], period.
func (periodicCov) Hypers() []ops.CovHyper {
	return []ops.CovHyper{{Name: "variance"}, {Name: "lengthscales", Vec: true}, {Name: "period"}}
}

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
	inv := ops.CovScratch(len(ell))
	for k, v := range ell {
		inv[k] = 1 / v
	}
	return inv
}

func (c periodicCov) eval(x1, x2 ops.CovInput, h []ops.CovInput, s2 float64, out []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	at, bt := ops.CovCentred(x1, x2) // centred, unscaled
	inv, t1, t2 := covInv(h[1].Data), ops.CovScratch(2*n*d), ops.CovScratch(2*m*d)
	defer ops.CovRelease(at, bt, inv, t1, t2)
	per := h[2].Scalar()
	omega := 2 * math.Pi / per
	covTrig(at, d, n, omega, inv, true, t1)
	covTrig(bt, d, m, omega, inv, false, t2)
	ops.CovGemm(false, false, 1, t1, n, 2*d, t2, 2*d, m, out)
	l := 0.0
	for _, v := range inv {
		l += v * v
	}
	ops.CovForRows(ops.CovChunks(n, m), n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			row, xi := out[i*m:(i+1)*m], x1.Data[i*d:(i+1)*d]
			for j, v := range row {
				e := v - l
				if e > -ops.CovNearRel*l { // near: recompute E directly
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
			ops.VecExp(row, row)
			for j, v := range row {
				row[j] = s2 * v
			}
		}
	})
}

func (c periodicCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	c.eval(x1, x2, h, h[0].Scalar(), out)
}

func (c periodicCov) MatrixGrad(wrt int, x1, x2 ops.CovInput, h []ops.CovInput, k, g []float64, dst []float64) {
	s2 := h[0].Scalar()
	if wrt == ops.CovWrtH0 {
		dst[0] = ops.CovVarianceGrad(g, k, s2, func(u []float64) { c.eval(x1, x2, h, 1, u) })
		return
	}
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	per := h[2].Scalar()
	omega := 2 * math.Pi / per
	at, bt := ops.CovCentred(x1, x2)
	inv, w, u1, u2 := covInv(h[1].Data), ops.CovScratch(n*m), ops.CovScratch(2*n*d), ops.CovScratch(2*m*d)
	defer ops.CovRelease(at, bt, inv, w, u1, u2)
	for i, v := range g[:n*m] {
		w[i] = v * k[i]
	}
	covTrig(at, d, n, omega, nil, false, u1) // [C1; S1] transposed [2d,n]
	covTrig(bt, d, m, omega, nil, false, u2) // [C2; S2] transposed [2d,m]
	// pt = (W [C2 S2])ᵀ [2d,n]
	pt := func() []float64 {
		pt := ops.CovScratch(2 * n * d)
		ops.CovGemm(false, true, 1, u2, 2*d, m, w, n, m, pt)
		return pt
	}
	dx1 := func(out []float64) {
		pt := pt()
		defer ops.CovRelease(pt)
		for kk := 0; kk < d; kk++ {
			f := omega * inv[kk] * inv[kk]
			for i := 0; i < n; i++ {
				out[i*d+kk] = f * (u1[kk*n+i]*pt[(d+kk)*n+i] - u1[(d+kk)*n+i]*pt[kk*n+i])
			}
		}
	}
	dx2 := func(out []float64) {
		qt := ops.CovScratch(2 * m * d) // (Wᵀ [C1 S1])ᵀ [2d,m]
		defer ops.CovRelease(qt)
		ops.CovGemm(false, false, 1, u1, 2*d, n, w, n, m, qt)
		for kk := 0; kk < d; kk++ {
			f := omega * inv[kk] * inv[kk]
			for j := 0; j < m; j++ {
				out[j*d+kk] = f * (u2[kk*m+j]*qt[(d+kk)*m+j] - u2[(d+kk)*m+j]*qt[kk*m+j])
			}
		}
	}
	switch wrt {
	case ops.CovWrtX1:
		dx1(dst)
	case ops.CovWrtX2:
		dx2(dst)
	case ops.CovWrtH0 + 1: // lengthscales
		pt := pt()
		defer ops.CovRelease(pt)
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
	case ops.CovWrtH0 + 2: // period
		a, b := ops.CovScratch(n*d), ops.CovScratch(m*d)
		defer ops.CovRelease(a, b)
		dx1(a)
		dx2(b)
		s := 0.0
		for kk := 0; kk < d; kk++ {
			for i := 0; i < n; i++ {
				s += at[kk*n+i] * a[i*d+kk]
			}
			for j := 0; j < m; j++ {
				s += bt[kk*m+j] * b[j*d+kk]
			}
		}
		dst[0] = -s / per
	}
}

func (periodicCov) Diag(_ ops.CovInput, h []ops.CovInput, out []float64) {
	s2 := h[0].Scalar()
	for i := range out {
		out[i] = s2
	}
}

func (periodicCov) DiagGrad(wrt int, _ ops.CovInput, _ []ops.CovInput, _, g []float64, dst []float64) {
	ops.CovConstDiagGrad(wrt, g, dst)
}
