package ops

import (
	"math"

	"github.com/gpzoo/gpzoo/ops/internal/vmath"
)

// Stationary is a CovFunc for the common stationary case k = σ² φ(r²), r² = Σ_d (x_d − x'_d)²/ℓ_d²: a kernel is
// its profile and its slope on slices, plus any extra scalar hyperparameters, and Stationary supplies the rest —
// r² on centred, ℓ-scaled inputs, directly (Σ_d (a_d − b_d)², vectorised; for D > 32 by one Gemm of the expansion
// ‖a‖² + ‖b‖² − 2abᵀ, pairs where it cancels badly recomputed directly), so that r² ≥ 0 and exactly 0 for
// coincident rows; the backward pass to both inputs and every hyperparameter in one shared pass; workspaces
// held by the op and row-parallel passes whose results do not depend on the number of goroutines.
//
// Hyperparameters: variance σ² (scalar), lengthscales ℓ [D], then Extra (scalars) in order. Use it by pointer.
//
// Backward: W = G ⊙ ∂K/∂r² (from Slope, given the forward output K, so no exponential is re-evaluated), then
// with a = (x1 − c)/ℓ, b = (x2 − c)/ℓ: dX1 = 2(diag(W1) a − W b)/ℓ, dX2 = 2(diag(Wᵀ1) b − Wᵀ a)/ℓ,
// dℓ_d = −(2/ℓ_d) Σ_ij W_ij (a_id − b_jd)² = −(2/ℓ_d)(Σ_i (W1)_i a_id² + Σ_j (Wᵀ1)_j b_jd² − 2 Σ_i a_id (W b)_id),
// dσ² = Σ G⊙K/σ². In the CovMatrix op these share one row-parallel pass per forward run: each row of W (Slope),
// its sum and its products with b's columns (vmath.Dots), Σ_j G_ij K_ij and the extra hyperparameters' sums per
// row; the column sums of W per fixed block of rows, combined in block order; Wᵀa, for x2's gradient only, by a
// column pass that makes W again tile by tile (W is never held whole). For NeedR2 functions, pairs where the expansion of dX would cancel badly (near pairs, as above:
// coincident rows included) are left out of W and added directly.
type Stationary struct {
	// Label is the Name (unique; it enters the op's hash).
	Label string
	// Extra are the hyperparameters after variance and lengthscales (scalars only).
	Extra []CovHyper
	// Profile maps r² to s2·φ(r²) in place on v; extra holds the Extra values in order. It is called on blocks of
	// rows (concurrently on disjoint blocks), so it can vectorise its exponentials (VecExp, VecScale).
	Profile func(s2 float64, extra []float64, v []float64)
	// Slope writes w_i = g_i · ∂K/∂r² at r2_i, given the kernel values k_i, entry by entry (it is called on a row
	// of K or on a tile of one, concurrently on distinct ones, and an entry must come out the same either way).
	// r2 is nil unless NeedR2.
	Slope func(extra []float64, r2, k, g, w []float64)
	// NeedR2: Slope needs r² (the op keeps the forward pass's); otherwise it is a function of K alone (SE).
	NeedR2 bool
	// ExtraGrad returns Σ_i g_i ∂K_i/∂θ_j for Extra hyperparameter j over one block of pairs (r2, k, g: one row of
	// K, concurrently on distinct rows; the op sums the rows in order). Required when Extra is non-empty.
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

// needR2 reports whether the backward pass needs r² (for Slope or for the extra hyperparameters).
func (s *Stationary) needR2() bool { return s.NeedR2 || len(s.Extra) > 0 }

// covFused is implemented by covariance functions whose CovMatrix op hands them its workspace: buffers reused
// from run to run, and one backward pass per forward run shared by every gradient (ops.Stationary).
type covFused interface {
	matrixWS(ws *covWork, x1, x2 CovInput, h []CovInput, out []float64)
	matrixGradWS(ws *covWork, wrt int, x1, x2 CovInput, h []CovInput, k, g, dst []float64)
}

// Matrix writes K(x1, x2).
func (s *Stationary) Matrix(x1, x2 CovInput, h []CovInput, out []float64) {
	s.matrixWS(new(covWork), x1, x2, h, out)
}

// MatrixGrad writes the gradient with respect to operand wrt.
func (s *Stationary) MatrixGrad(wrt int, x1, x2 CovInput, h []CovInput, k, g []float64, dst []float64) {
	s.matrixGradWS(new(covWork), wrt, x1, x2, h, k, g, dst)
}

func (s *Stationary) matrixWS(ws *covWork, x1, x2 CovInput, h []CovInput, out []float64) {
	keep := ws.keepR2 && s.needR2()
	s.eval(ws, x1, x2, h, h[0].Scalar(), out, keep)
	if keep {
		ws.r2Runs, ws.r2Key = ws.runs, [3]*float64{dataPtr(x1.Data), dataPtr(x2.Data), dataPtr(h[1].Data)}
	}
}

// eval writes s2·φ(r²) into out: one row-parallel pass computes r² (covPair.sqdist) and applies the profile to
// each group of rows while it is in cache; r² is copied into ws.r2 first when keep.
func (s *Stationary) eval(ws *covWork, x1, x2 CovInput, h []CovInput, s2 float64, out []float64, keep bool) {
	ws.preparePair(x1, x2, h[1].Data)
	p := &ws.pair
	m, extra := p.m, ws.extraOf(h)
	if keep {
		ws.r2 = covGrow(ws.r2, p.n*m)
	}
	r2 := ws.r2
	p.sqdist(out, func(lo, hi int) {
		if keep {
			copy(r2[lo*m:hi*m], out[lo*m:hi*m])
		}
		s.Profile(s2, extra, out[lo*m:hi*m])
	})
}

// matrixGradWS writes the gradient with respect to operand wrt, from what the gradients share (see covGrads),
// computed once per forward run: W = G ⊙ ∂K/∂r² with its row sums, column sums, W·b and Σ G⊙K in one
// row-parallel pass (near pairs set aside), Wᵀa by a column pass when x2's gradient is asked for.
func (s *Stationary) matrixGradWS(ws *covWork, wrt int, x1, x2 CovInput, h []CovInput, k, g []float64, dst []float64) {
	c := &ws.grad
	key := [5]*float64{dataPtr(x1.Data), dataPtr(x2.Data), dataPtr(h[1].Data), dataPtr(k), dataPtr(g)}
	bit := uint64(1) << min(wrt, 63)
	if c.runs == 0 || c.runs != ws.runs || c.key != key || c.served&bit != 0 {
		s.gradBase(ws, x1, x2, h, k, g)
		c.runs, c.key, c.served = ws.runs, key, 0
	}
	c.served |= bit
	p := &ws.pair
	n, m, d := p.n, p.m, p.d
	switch wrt {
	case covWrtX1: // dX1 = 2(diag(W1) a − W b)/ℓ
		for i := 0; i < n; i++ {
			wb := c.wb[i*(d+1) : (i+1)*(d+1)]
			rs := wb[d]
			for kk := 0; kk < d; kk++ {
				dst[i*d+kk] = (rs*p.at[kk*n+i] - wb[kk]) * (2 * p.inv[kk])
			}
		}
	case covWrtX2: // dX2 = 2(diag(Wᵀ1) b − Wᵀ a)/ℓ
		if !c.haveWat {
			c.wat, c.wcol = covGrow(c.wat, d*m), covGrow(c.wcol, m)
			covColumnPass(func(i, j0, j1 int, w []float64) { s.wTile(ws, i, j0, j1, c.r2, k, g, w, nil) }, p.a, n, m, d, c.wat, c.wcol)
			c.haveWat = true
		}
		for j := 0; j < m; j++ {
			for kk := 0; kk < d; kk++ {
				dst[j*d+kk] = (c.cs[j]*p.bt[kk*m+j] - c.wat[kk*m+j]) * (2 * p.inv[kk])
			}
		}
	case covWrtH0: // variance: Σ G⊙K / σ², or Σ G⊙U with U recomputed at σ² = 1 when σ² is too small to divide by
		s2 := h[0].Scalar()
		if math.Abs(s2) >= covTinyVariance {
			sum := 0.0
			for _, v := range c.vrow[:n] {
				sum += v
			}
			dst[0] = sum / s2
			return
		}
		ws.unit = covGrow(ws.unit, n*m)
		s.eval(ws, x1, x2, h, 1, ws.unit, false)
		sum := 0.0
		for i := 0; i < n; i++ {
			sum += vmath.Dot(g[i*m:(i+1)*m], ws.unit[i*m:(i+1)*m])
		}
		dst[0] = sum
		return
	case covWrtH0 + 1: // lengthscales: dℓ_d = −(2/ℓ_d) Σ_ij W_ij (a_id − b_jd)²
		for kk := 0; kk < d; kk++ {
			sum := 0.0
			for i, av := range p.at[kk*n : (kk+1)*n] {
				wb := c.wb[i*(d+1) : (i+1)*(d+1)]
				sum += av * (wb[d]*av - 2*wb[kk])
			}
			for j, bv := range p.bt[kk*m : (kk+1)*m] {
				sum += c.cs[j] * bv * bv
			}
			dst[kk] = sum * (-2 * p.inv[kk])
		}
	default: // an extra hyperparameter
		e, ne := wrt-covWrtH0-2, len(s.Extra)
		sum := 0.0
		for i := 0; i < n; i++ {
			sum += c.xrow[i*ne+e]
		}
		dst[0] = sum
		return
	}
	for b := 0; b < c.blocks; b++ { // the near pairs, in row order
		for _, q := range c.near[b] {
			covNearGrad(wrt, p, q.i, q.j, q.w, dst)
		}
	}
}

// gradBase computes what the gradients share (covGrads) for K = out of the current forward run and G = g.
func (s *Stationary) gradBase(ws *covWork, x1, x2 CovInput, h []CovInput, k, g []float64) {
	ws.preparePair(x1, x2, h[1].Data)
	p, c := &ws.pair, &ws.grad
	n, m, d := p.n, p.m, p.d
	extra := ws.extraOf(h)
	var r2 []float64
	if s.needR2() {
		key := [3]*float64{dataPtr(x1.Data), dataPtr(x2.Data), dataPtr(h[1].Data)}
		if ws.runs == 0 || ws.r2Runs != ws.runs || ws.r2Key != key || len(ws.r2) != n*m {
			ws.r2 = covGrow(ws.r2, n*m)
			p.sqdist(ws.r2, nil)
		}
		r2 = ws.r2
		ws.keepR2 = true // from now on the forward pass keeps r² for the backward pass
	}
	nb, ne := covBlocks(n), len(s.Extra)
	c.blocks, c.r2, c.extra = nb, r2, extra
	c.haveWat = false
	c.w = covGrow(c.w, nb*m) // one row per block
	c.wb = covGrow(c.wb, n*(d+1))
	c.vrow = covGrow(c.vrow, n)
	c.xrow = covGrow(c.xrow, n*ne)
	c.csPart = covGrow(c.csPart, nb*m)
	c.cs = covGrow(c.cs, m)
	for len(c.near) < nb {
		c.near = append(c.near, nil)
	}
	covRun(covParallel(n*m), nb, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			s.gradRows(ws, b, k, g)
		}
	})
	copy(c.cs, c.csPart[:m])
	for b := 1; b < nb; b++ {
		vmath.Axpys(c.cs, m, covOne[:], c.csPart[b*m:(b+1)*m])
	}
}

// covOne is the coefficient of an elementwise sum by vmath.Axpys (fma(1, x, y) = x + y, rounded once).
var covOne = [1]float64{1}

// gradRows is the row pass over row block b: W's rows (wTile, each in the block's row of c.w), Σ_j G_ij K_ij, the extra hyperparameters' sums, W's row sums and W·b (one vmath.Dots over bt's
// rows and its row of ones), and the block's column sums of W.
func (s *Stationary) gradRows(ws *covWork, b int, k, g []float64) {
	p, c := &ws.pair, &ws.grad
	n, m, d, ne := p.n, p.m, p.d, len(s.Extra)
	lo, hi := covBlock(b, c.blocks, n)
	part, near := c.csPart[b*m:(b+1)*m], c.near[b][:0]
	for i := lo; i < hi; i++ {
		w := c.w[b*m : (b+1)*m]
		s.wTile(ws, i, 0, m, c.r2, k, g, w, &near)
		kr, gr := k[i*m:(i+1)*m], g[i*m:(i+1)*m]
		for e := 0; e < ne; e++ {
			c.xrow[i*ne+e] = s.ExtraGrad(e, c.extra, c.r2[i*m:(i+1)*m], kr, gr)
		}
		c.vrow[i] = vmath.Dot(gr, kr)
		vmath.Dots(c.wb[i*(d+1):(i+1)*(d+1)], w, p.bt, m)
		if i == lo {
			copy(part, w)
		} else {
			vmath.Axpys(part, m, covOne[:], w)
		}
	}
	c.near[b] = near
}

// wTile writes the columns [j0, j1) of row i of W = G ⊙ ∂K/∂r² into w (Slope, elementwise: a tile's entries
// have the bits of the whole row's), with the near pairs' weights (NeedR2 only) set to 0 and, when near is
// non-nil, appended to it.
func (s *Stationary) wTile(ws *covWork, i, j0, j1 int, r2, k, g, w []float64, near *[]covNear) {
	p, m := &ws.pair, ws.pair.m
	kr, gr := k[i*m+j0:i*m+j1], g[i*m+j0:i*m+j1]
	if !s.NeedR2 {
		s.Slope(ws.grad.extra, nil, kr, gr, w)
		return
	}
	rr := r2[i*m+j0 : i*m+j1]
	s.Slope(ws.grad.extra, rr, kr, gr, w)
	nai := p.na[i]
	for jj, v := range rr {
		j := j0 + jj
		if v < covNearRel*(nai+p.nb[j]) { // p.near(i, j, v)
			if near != nil && w[jj] != 0 {
				*near = append(*near, covNear{i: i, j: j, w: w[jj]})
			}
			w[jj] = 0
		}
	}
}

// covNearGrad adds the contribution of the near pair (i, j) with weight wij = g_ij ∂K_ij/∂r² to dst, the
// gradient with respect to operand wrt (x1, x2 or the lengthscales).
func covNearGrad(wrt int, p *covPair, i, j int, wij float64, dst []float64) {
	d := p.d
	for k := 0; k < d; k++ {
		t := p.at[k*p.n+i] - p.bt[k*p.m+j]
		switch wrt {
		case covWrtX1:
			dst[i*d+k] += 2 * wij * t * p.inv[k]
		case covWrtX2:
			dst[j*d+k] -= 2 * wij * t * p.inv[k]
		default: // lengthscales
			dst[k] -= 2 * wij * t * t * p.inv[k]
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
// as Stationary computes them (directly; for D > 32 by the Gemm expansion with badly cancelling pairs recomputed
// directly): every entry ≥ 0, exactly 0 for coincident rows. For covariance functions outside ops.
func SqDist(x1, x2 CovInput, ell []float64, out []float64) {
	var p covPair
	p.prepare(x1, x2, ell)
	p.sqdist(out, nil)
}

// CovScratch returns a pooled slice of length n (contents undefined); give it back with CovRelease.
func CovScratch(n int) []float64 { return covScratch(n) }

// CovRelease returns slices from CovScratch to the pool.
func CovRelease(s ...[]float64) { covRelease(s...) }

// VecExp writes exp(x_i) into dst_i (dst and x may be the same slice): gpzoo's vectorised exponential (≤ 1 ulp,
// the same bits on every CPU kernel), for the profiles of covariance functions.
func VecExp(dst, x []float64) { vmath.Exp(dst, x) }

// VecScale writes a·x_i into dst_i (dst may be x), vectorised, with the bits of the Go expression on every CPU
// kernel: for the profiles and slopes of covariance functions.
func VecScale(dst []float64, a float64, x []float64) { vmath.Scale(dst, a, x) }

// VecMulScale writes (a·x_i)·y_i into dst_i (dst may be x or y), vectorised, with the bits of the Go expression
// a*x[i]*y[i] on every CPU kernel.
func VecMulScale(dst []float64, a float64, x, y []float64) { vmath.MulScale(dst, a, x, y) }
