package ops

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// GaussApprox is a Gaussian approximation q(f) = N(μ, Σ), Σ = (K⁻¹ + W)⁻¹, to the posterior of an exact GP with
// prior N(m, K) on the N training latents and a non-Gaussian likelihood: the Laplace approximation at the mode
// (W = −∂²log p(y | f̂), R&W §3.4) or EP's (W = the sites' precisions τ̃, R&W §3.6). Both predict as R&W's
// Algorithms 3.2 and 3.6: at test inputs x*, f* has mean m(x*) + k*ᵀα and variance k** − k*ᵀ(K + W⁻¹)⁻¹k*.
//
// The factorisation is R&W's B = I + W₊^½KW₊^½ = LLᵀ of the non-negative part W₊ = max(W, 0): it needs no factor of
// K and is well conditioned (its eigenvalues are ≥ 1). A likelihood that is not log-concave (Student-t) or EP
// sites of negative precision give some W_i < 0, for which B alone does not apply; their S entries, W = W₊ − EDEᵀ
// (E the columns of I at S, D = −W_S > 0), enter through Woodbury's identity: with Σ₊ = (K⁻¹ + W₊)⁻¹,
// R₊ = W₊^½B⁻¹W₊^½, P = Eᵀ(I − KR₊) [S,N] and C = D⁻¹ − Σ₊[S,S] = L_C L_Cᵀ,
//
//	Σ = Σ₊ + Σ₊E C⁻¹ EᵀΣ₊,   (K + W⁻¹)⁻¹ = R₊ − PᵀC⁻¹P,   |I + KW| = |B|·|D|·|C|,
//
// and C is positive definite exactly when Σ is, so the factorisation stays valid wherever the approximation does
// (an alternative to the Cholesky factor of K that Jylänki, Vanhatalo & Vehtari 2011 use for the Student-t
// likelihood, which would need K well conditioned).
type GaussApprox struct {
	N int
	// LogZ is the approximate log marginal likelihood log q(y | X, θ).
	LogZ float64
	// Alpha is α = K⁻¹(μ − m) [N]: the Laplace approximation's ∇log p(y | f̂), EP's (K + W⁻¹)⁻¹(μ̃ − m).
	Alpha []float64
	// W are the site precisions [N] (Laplace: −∂²log p at the mode; EP: τ̃).
	W []float64
	// Nu are EP's sites' precision-adjusted means ν̃ = τ̃μ̃ [N] (nil for the Laplace approximation).
	Nu []float64
	// Mean is μ, the approximate posterior mean of the training latents [N] (the Laplace approximation's mode f̂).
	Mean []float64
	// Iters is the number of Newton iterations (Laplace) or sweeps (EP) it took.
	Iters int

	fac gaFactor
	k   []float64 // the prior covariance K it was computed for [N,N] (the caller's slice, not a copy)
}

// gaFactor is the factorisation of a GaussApprox (see its doc).
type gaFactor struct {
	n   int
	w   []float64 // W
	sw  []float64 // W₊^½
	l   []float64 // chol(B) [n,n]
	neg []int     // S: the entries with W < 0
	p   []float64 // P = Eᵀ(I − KR₊) [s,n]
	sp  []float64 // Σ₊E = K·Pᵀ [n,s]
	lc  []float64 // chol(C) [s,s]
}

// ErrApproxNotPD reports a Gaussian approximation whose posterior precision K⁻¹ + W is not positive definite:
// some negative site precisions outweigh the prior (an EP step that went too far, a Laplace "mode" that is not a
// maximum).
var ErrApproxNotPD = errors.New("ops: the approximate posterior precision K⁻¹ + W is not positive definite")

// factorise factorises the approximation of K (n×n) with site precisions w, as in GaussApprox's doc. Errors:
// ErrApproxNotPD (wrapped) when B or C is not positive definite.
func factorise(f *gaFactor, k, w []float64, n int) error {
	f.n, f.w = n, append(f.w[:0], w...)
	f.neg = f.neg[:0]
	f.sw = grow(f.sw, n)
	for i, v := range w {
		if v < 0 {
			f.neg = append(f.neg, i)
		}
		f.sw[i] = math.Sqrt(math.Max(v, 0))
	}
	f.l = grow(f.l, n*n)
	noRetry := JitterPolicy{MaxTries: -1}
	for i := 0; i < n; i++ { // B = I + W₊^½ K W₊^½
		row, krow := f.l[i*n:(i+1)*n], k[i*n:(i+1)*n]
		for j := range row {
			row[j] = f.sw[i] * krow[j] * f.sw[j]
		}
		row[i]++
	}
	if _, err := CholeskyLower(f.l, f.l, n, noRetry); err != nil {
		return fmt.Errorf("%w (B = I + W^½KW^½: %v)", ErrApproxNotPD, err)
	}
	s := len(f.neg)
	if s == 0 {
		return nil
	}
	// P = Eᵀ − K[S,:]R₊ (R₊ symmetric: its rows are R₊·K[:,S]'s columns), Σ₊E = K·Pᵀ, C = D⁻¹ − (Σ₊E)[S,:].
	f.p = grow(f.p, s*n)
	for a, i := range f.neg {
		copy(f.p[a*n:(a+1)*n], k[i*n:(i+1)*n])
	}
	f.applyRPosRows(f.p, s)
	for a, i := range f.neg {
		row := f.p[a*n : (a+1)*n]
		for j := range row {
			row[j] = -row[j]
		}
		row[i]++
	}
	f.sp = grow(f.sp, n*s)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, dense(k, n, n), dense(f.p, s, n), 0, dense(f.sp, n, s))
	f.lc = grow(f.lc, s*s)
	for a, i := range f.neg {
		for b := range f.neg {
			f.lc[a*s+b] = -f.sp[i*s+b]
		}
		f.lc[a*s+a] += -1 / w[i]
	}
	if _, err := CholeskyLower(f.lc, f.lc, s, noRetry); err != nil {
		return fmt.Errorf("%w (%d negative site precisions: %v)", ErrApproxNotPD, s, err)
	}
	return nil
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// applyRPosRows replaces each of the r rows v_a of x [r,n] by R₊v_a (R₊ = W₊^½B⁻¹W₊^½).
func (f *gaFactor) applyRPosRows(x []float64, r int) {
	n := f.n
	t := make([]float64, n*r) // column a holds W₊^½ v_a
	for a := 0; a < r; a++ {
		for i := 0; i < n; i++ {
			t[i*r+a] = f.sw[i] * x[a*n+i]
		}
	}
	CholSolveTo(t, f.l, t, n, r)
	for a := 0; a < r; a++ {
		for i := 0; i < n; i++ {
			x[a*n+i] = f.sw[i] * t[i*r+a]
		}
	}
}

// logDet returns log|I + KW| = log|B| + Σ_S log(−W_i) + log|C|.
func (f *gaFactor) logDet() float64 {
	d := CholLogDet(f.l, f.n)
	if s := len(f.neg); s > 0 {
		for _, i := range f.neg {
			d += math.Log(-f.w[i])
		}
		d += CholLogDet(f.lc, s)
	}
	return d
}

// applyRPos writes R₊v into dst (dst may be v).
func (f *gaFactor) applyRPos(dst, v []float64) {
	n := f.n
	t := make([]float64, n)
	for i := range t {
		t[i] = f.sw[i] * v[i]
	}
	CholSolveTo(t, f.l, t, n, 1)
	for i := range t {
		dst[i] = f.sw[i] * t[i]
	}
}

// sigmaApply returns Σ·v = Σ₊v + Σ₊E·C⁻¹·(Σ₊v)_S, Σ₊v = Kv − K·R₊·K·v.
func (f *gaFactor) sigmaApply(k, v []float64) []float64 {
	n := f.n
	kv := make([]float64, n)
	matVec(kv, k, v, n, n)
	t := make([]float64, n)
	f.applyRPos(t, kv)
	out := make([]float64, n)
	matVec(out, k, t, n, n)
	for i := range out {
		out[i] = kv[i] - out[i]
	}
	if s := len(f.neg); s > 0 {
		u := make([]float64, s)
		for a, i := range f.neg {
			u[a] = out[i]
		}
		CholSolveTo(u, f.lc, u, s, 1)
		blas64.Gemv(blas.NoTrans, 1, dense(f.sp, n, s), blas64.Vector{N: s, Inc: 1, Data: u}, 1, blas64.Vector{N: n, Inc: 1, Data: out})
	}
	return out
}

// sigmaFull returns Σ [n,n] = K − C₁ᵀC₁ + YᵀY (C₁ = L⁻¹W₊^½K, Y = L_C⁻¹(Σ₊E)ᵀ).
func (f *gaFactor) sigmaFull(k []float64) []float64 {
	n, s := f.n, len(f.neg)
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			c[i*n+j] = f.sw[i] * k[i*n+j]
		}
	}
	TriSolveTo(c, f.l, c, n, n, false, false)
	out := append([]float64(nil), k...)
	blas64.Gemm(blas.Trans, blas.NoTrans, -1, dense(c, n, n), dense(c, n, n), 1, dense(out, n, n))
	if s > 0 {
		y := make([]float64, s*n)
		for i := 0; i < n; i++ {
			for a := 0; a < s; a++ {
				y[a*n+i] = f.sp[i*s+a]
			}
		}
		TriSolveTo(y, f.lc, y, s, n, false, false)
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, dense(y, s, n), dense(y, s, n), 1, dense(out, n, n))
	}
	return out
}

// lowRank returns z = C⁻¹·(P·v) [s] (nil without negative sites).
func (f *gaFactor) lowRank(v []float64) []float64 {
	s, n := len(f.neg), f.n
	if s == 0 {
		return nil
	}
	z := make([]float64, s)
	blas64.Gemv(blas.NoTrans, 1, dense(f.p, s, n), blas64.Vector{N: n, Inc: 1, Data: v}, 0, blas64.Vector{N: s, Inc: 1, Data: z})
	CholSolveTo(z, f.lc, z, s, 1)
	return z
}

// applyR writes R·v into dst (len n) for R = (K + W⁻¹)⁻¹ = R₊ − PᵀC⁻¹P. dst may be v.
func (f *gaFactor) applyR(dst, v []float64) {
	n := f.n
	z := f.lowRank(v)
	f.applyRPos(dst, v)
	if z != nil {
		blas64.Gemv(blas.Trans, -1, dense(f.p, len(f.neg), n), blas64.Vector{N: len(z), Inc: 1, Data: z}, 1, blas64.Vector{N: n, Inc: 1, Data: dst})
	}
}

// sigmaParts returns diag Σ [n], and the full R = (K + W⁻¹)⁻¹ [n,n] when wantR: with C₁ = L⁻¹W₊^½K, diag Σ₊ =
// diag K − the column sums of C₁², R₊ = W₊^½B⁻¹W₊^½; the negative sites add the column sums of
// (L_C⁻¹(Σ₊E)ᵀ)² to diag Σ and subtract ZᵀZ (Z = L_C⁻¹P) from R. k is K.
func (f *gaFactor) sigmaParts(k []float64, wantR bool) (diag, r []float64) {
	n, s := f.n, len(f.neg)
	diag = make([]float64, n)
	c := make([]float64, n*n) // W₊^½K, then L⁻¹W₊^½K
	for i := 0; i < n; i++ {
		row, krow := c[i*n:(i+1)*n], k[i*n:(i+1)*n]
		for j := range row {
			row[j] = f.sw[i] * krow[j]
		}
	}
	TriSolveTo(c, f.l, c, n, n, false, false)
	colSumsSq(diag, c, n, n)
	for i := range diag {
		diag[i] = k[i*n+i] - diag[i]
	}
	if s > 0 {
		y := make([]float64, s*n) // (Σ₊E)ᵀ, then L_C⁻¹(Σ₊E)ᵀ
		for i := 0; i < n; i++ {
			for a := 0; a < s; a++ {
				y[a*n+i] = f.sp[i*s+a]
			}
		}
		TriSolveTo(y, f.lc, y, s, n, false, false)
		extra := make([]float64, n)
		colSumsSq(extra, y, s, n)
		for i := range diag {
			diag[i] += extra[i]
		}
	}
	if !wantR {
		return diag, nil
	}
	// R₊ = W₊^½B⁻¹W₊^½, B⁻¹ from its Cholesky factor (LAPACK's potri: about 2n³/3 flops, half of forming
	// (L⁻¹W₊^½)ᵀ(L⁻¹W₊^½)).
	r = append([]float64(nil), f.l...)
	if _, ok := lapack64.Potri(triangular(r, n, false)); !ok {
		return nil, nil // B was factorised: not reached
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := f.sw[i] * r[i*n+j] * f.sw[j]
			r[i*n+j], r[j*n+i] = v, v
		}
	}
	if s > 0 {
		z := append([]float64(nil), f.p...)
		TriSolveTo(z, f.lc, z, s, n, false, false)
		blas64.Gemm(blas.Trans, blas.NoTrans, -1, dense(z, s, n), dense(z, s, n), 1, dense(r, n, n))
	}
	return diag, r
}

// colSumsSq writes Σ_i a_ij² into dst [c] for a [r,c], rows in order (the same bits for every GOMAXPROCS).
func colSumsSq(dst, a []float64, r, c int) {
	clear(dst)
	for i := 0; i < r; i++ {
		row := a[i*c : (i+1)*c]
		for j, v := range row {
			dst[j] += v * v
		}
	}
}

// matVec writes a·x into dst for a [r,c] row-major (dst must not alias x).
func matVec(dst, a, x []float64, r, c int) {
	blas64.Gemv(blas.NoTrans, 1, dense(a, r, c), blas64.Vector{N: c, Inc: 1, Data: x}, 0, blas64.Vector{N: r, Inc: 1, Data: dst})
}

// PredictVar returns the approximation's latent variances at M test inputs, k** − k*ᵀ(K + W⁻¹)⁻¹k*, for kxs =
// K(X, X*) [N,M] (row-major) and kss = diag K(X*, X*) [M]; negative values (round-off) are clamped to 0. The
// latent means are m(X*) + kxsᵀ·Alpha.
func (q *GaussApprox) PredictVar(kxs, kss []float64) ([]float64, error) {
	n := q.N
	if n == 0 || len(kxs) != n*len(kss) {
		return nil, &ShapeError{Op: "GaussApprox.PredictVar", Want: fmt.Sprintf("K(X,X*) [%d,%d]", n, len(kss)), Got: fmt.Sprint(len(kxs), " entries")}
	}
	m := len(kss)
	out := make([]float64, m)
	quad := q.quadForms(kxs, m)
	for j := range out {
		out[j] = math.Max(kss[j]-quad[j], 0)
	}
	return out, nil
}

// PredictCov returns the approximation's latent covariance at M test inputs, K** − K*ᵀ(K + W⁻¹)⁻¹K* [M,M], for
// kxs = K(X, X*) [N,M] and kss = K(X*, X*) [M,M] (row-major).
func (q *GaussApprox) PredictCov(kxs, kss []float64, m int) ([]float64, error) {
	n := q.N
	if n == 0 || len(kxs) != n*m || len(kss) != m*m {
		return nil, &ShapeError{Op: "GaussApprox.PredictCov", Want: fmt.Sprintf("K(X,X*) [%d,%d] and K(X*,X*) [%d,%d]", n, m, m, m), Got: fmt.Sprint(len(kxs), " and ", len(kss), " entries")}
	}
	out := append([]float64(nil), kss...)
	a, z := q.predictFactors(kxs, m)
	s := len(q.fac.neg)
	blas64.Gemm(blas.Trans, blas.NoTrans, -1, dense(a, n, m), dense(a, n, m), 1, dense(out, m, m))
	if s > 0 {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, dense(z, s, m), dense(z, s, m), 1, dense(out, m, m))
	}
	return out, nil
}

// predictFactors returns A = L⁻¹W₊^½K* [n,m] and Z = L_C⁻¹PK* [s,m]: K*ᵀ(K + W⁻¹)⁻¹K* = AᵀA − ZᵀZ.
func (q *GaussApprox) predictFactors(kxs []float64, m int) (a, z []float64) {
	n, f := q.N, &q.fac
	a = make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			a[i*m+j] = f.sw[i] * kxs[i*m+j]
		}
	}
	TriSolveTo(a, f.l, a, n, m, false, false)
	if s := len(f.neg); s > 0 {
		z = make([]float64, s*m)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, dense(f.p, s, n), dense(kxs, n, m), 0, dense(z, s, m))
		TriSolveTo(z, f.lc, z, s, m, false, false)
	}
	return a, z
}

// quadForms returns diag(K*ᵀ(K + W⁻¹)⁻¹K*) [m].
func (q *GaussApprox) quadForms(kxs []float64, m int) []float64 {
	out := make([]float64, m)
	a, z := q.predictFactors(kxs, m)
	colSumsSq(out, a, q.N, m)
	if s := len(q.fac.neg); s > 0 {
		sq := make([]float64, m)
		colSumsSq(sq, z, s, m)
		for j := range out {
			out[j] -= sq[j]
		}
	}
	return out
}
