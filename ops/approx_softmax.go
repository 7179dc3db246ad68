package ops

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// The Laplace approximation of an exact multi-class GP classifier with the softmax likelihood (Rasmussen &
// Williams 2006, "R&W", §3.5, Algorithms 3.3 and 3.4; the gradient as §5.5.1's, derived for this likelihood):
// C latent functions f_c ~ GP(0, K), independent a priori and sharing the kernel K, and
// p(y_i = c | f) = softmax(f_i)_c. The latent vector f [CN] is class-major (f_c's N values, then f_{c+1}'s), the
// prior covariance K_C = I_C ⊗ K block diagonal.
//
// W = −∂²log p(y | f) is block diagonal over the data points: W_i = diag(π_i) − π_iπ_iᵀ [C,C] (π_i = softmax(f_i)),
// positive semi-definite (π_i is in its null space). The Newton step is Algorithm 3.1's with W's symmetric square
// root S = W^½ (W_i^½ per point, by its eigendecomposition): B = I + S K_C S is positive definite (eigenvalues
// ≥ 1), B[(a,i),(b,j)] = δ + K_ij (S_iS_j)_ab. This works on the whole CN × CN matrix, O((CN)³) per Newton
// iteration, where R&W's Algorithm 3.3 needs O(CN³) by exploiting the blocks: it fits a few classes and rows up
// to a few thousand (MaxSoftmaxLaplaceSize), the scale of the exact GP's approximations.

// MaxSoftmaxLaplaceSize bounds C·N, the size of the softmax Laplace approximation's dense matrices (four of
// (CN)² float64: 1.15 GB at the bound).
const MaxSoftmaxLaplaceSize = 6000

// SoftmaxApprox is the Laplace approximation of a multi-class GP classifier's posterior (SoftmaxLaplaceApprox).
type SoftmaxApprox struct {
	N, C int
	// LogZ is the approximate log marginal likelihood log q(y | X, θ) = ψ(f̂) − ½log|B|.
	LogZ float64
	// Alpha is α = K_C⁻¹f̂ = y − π̂ at the mode [CN] (one-hot y), class-major.
	Alpha []float64
	// Mean is the mode f̂ [CN], class-major.
	Mean []float64
	// Iters is the number of Newton iterations it took.
	Iters int

	k  []float64 // K [N,N] (the caller's slice)
	pi []float64 // π̂ [N,C], row i = π_i
	sq []float64 // W_i^½ [N,C,C]
	l  []float64 // chol(B) [CN,CN]
	r  []float64 // R = S B⁻¹ S = (K_C + W⁻¹)⁻¹ [CN,CN], when computed
}

// softmaxLabels returns y's labels as integers, checking each is a class 0..c−1.
func softmaxLabels(op string, y []float64, c int) ([]int, error) {
	labs := make([]int, len(y))
	for i, v := range y {
		if v != math.Trunc(v) || v < 0 || v >= float64(c) {
			return nil, fmt.Errorf("%w: %s: row %d: label %v is not a class 0..%d", ErrLabel, op, i, v, c-1)
		}
		labs[i] = int(v)
	}
	return labs, nil
}

// softmaxRows writes π_i = softmax(f_i) into pi [n,c] and returns Σ_i log π_i[y_i].
func softmaxRows(pi, f []float64, labs []int, n, c int) float64 {
	ll := 0.0
	for i := 0; i < n; i++ {
		p := pi[i*c : (i+1)*c]
		for a := range p {
			p[a] = f[a*n+i]
		}
		lse := LogSumExp(p)
		for a := range p {
			p[a] = math.Exp(p[a] - lse)
		}
		ll += f[labs[i]*n+i] - lse
	}
	return ll
}

// sqrtW writes W_i^½ = (diag π_i − π_iπ_iᵀ)^½ [c,c] for every point into sq [n,c,c].
func sqrtW(sq, pi []float64, n, c int) error {
	w := mat.NewSymDense(c, nil)
	var eig mat.EigenSym
	var v mat.Dense
	for i := 0; i < n; i++ {
		p := pi[i*c : (i+1)*c]
		for a := 0; a < c; a++ {
			for b := a; b < c; b++ {
				x := -p[a] * p[b]
				if a == b {
					x += p[a]
				}
				w.SetSym(a, b, x)
			}
		}
		if !eig.Factorize(w, true) {
			return fmt.Errorf("ops: softmax Laplace: the eigendecomposition of W_%d failed", i)
		}
		vals := eig.Values(nil)
		eig.VectorsTo(&v)
		out := sq[i*c*c : (i+1)*c*c]
		for a := 0; a < c; a++ {
			for b := 0; b < c; b++ {
				s := 0.0
				for e, l := range vals {
					s += v.At(a, e) * math.Sqrt(math.Max(l, 0)) * v.At(b, e)
				}
				out[a*c+b] = s
			}
		}
	}
	return nil
}

// applyS writes S·v (S = W^½, block diagonal over points) into dst [CN] (dst may not be v).
func applyS(dst, sq, v []float64, n, c int) {
	for i := 0; i < n; i++ {
		s := sq[i*c*c : (i+1)*c*c]
		for a := 0; a < c; a++ {
			x := 0.0
			for b := 0; b < c; b++ {
				x += s[a*c+b] * v[b*n+i]
			}
			dst[a*n+i] = x
		}
	}
}

// applyKC writes K_C·v = (I_C ⊗ K)v into dst [CN] (dst may not be v).
func applyKC(dst, k, v []float64, n, c int) {
	for a := 0; a < c; a++ {
		matVec(dst[a*n:(a+1)*n], k, v[a*n:(a+1)*n], n, n)
	}
}

// softmaxB factorises B = I + S K_C S into l [CN,CN] (lower Cholesky): B[(a,i),(b,j)] = δ + K_ij (S_iS_j)_ab,
// row by row as K[i,:] ⊙ Σ_e S_i[a,e]·S_·[e,b] over contiguous columns j.
func softmaxB(l, k, sq []float64, n, c int) error {
	cn := c * n
	tb := make([]float64, c*c*n) // tb[(e·c+b)·n + j] = S_j[e,b]
	for j := 0; j < n; j++ {
		for eb, v := range sq[j*c*c : (j+1)*c*c] {
			tb[eb*n+j] = v
		}
	}
	for a := 0; a < c; a++ {
		for i := 0; i < n; i++ {
			row, krow, u := l[(a*n+i)*cn:(a*n+i+1)*cn], k[i*n:(i+1)*n], sq[i*c*c+a*c:i*c*c+a*c+c]
			for b := 0; b < c; b++ {
				dst := row[b*n : (b+1)*n]
				clear(dst)
				for e, ue := range u {
					src := tb[(e*c+b)*n : (e*c+b+1)*n]
					for j, v := range src {
						dst[j] += ue * v
					}
				}
				for j, kv := range krow {
					dst[j] *= kv
				}
			}
			row[a*n+i]++
		}
	}
	if _, err := CholeskyLower(l, l, cn, JitterPolicy{MaxTries: -1}); err != nil {
		return fmt.Errorf("%w (softmax B = I + W^½K_CW^½: %v)", ErrApproxNotPD, err)
	}
	return nil
}

// applyR writes R·v = S B⁻¹ S v into dst [CN] (dst may be v), with l = chol(B).
func softmaxApplyR(dst, l, sq, v []float64, n, c int) {
	cn := c * n
	t := make([]float64, cn)
	applyS(t, sq, v, n, c)
	TriSolveTo(t, l, t, cn, 1, false, false)
	TriSolveTo(t, l, t, cn, 1, false, true)
	applyS(dst, sq, t, n, c)
}

// softmaxPsi returns ψ = Σ_i log π_i[y_i] − ½αᵀf (and fills pi).
func softmaxPsi(pi, f, a []float64, labs []int, n, c int) float64 {
	q := 0.0
	for j, v := range a {
		q += v * f[j]
	}
	return softmaxRows(pi, f, labs, n, c) - 0.5*q
}

// SoftmaxLaplaceApprox returns the Laplace approximation of the posterior of a C-class GP classifier (see the
// section's doc): k [n,n] row-major, the shared prior covariance; y [n] the labels 0..c−1; Newton's method starts
// at α = start ([cn]; nil or worse than f = 0: at f = 0) and takes R&W's step with a backtracking line search on
// ψ, to o's tolerance as LaplaceApprox does.
//
// Errors: a *ShapeError, *NonFiniteError or ErrLabel (wrapped) for bad operands, a *ShapeError when C·N exceeds
// MaxSoftmaxLaplaceSize, a *ConvergenceError when the iterations run out or the line search stalls.
func SoftmaxLaplaceApprox(k, y []float64, n, c int, o LaplaceOptions, start []float64) (q *SoftmaxApprox, err error) {
	const op = "SoftmaxLaplaceApprox"
	if c < 2 || n < 1 || len(k) != n*n || len(y) != n {
		return nil, &ShapeError{Op: op, Want: fmt.Sprintf("C ≥ 2 classes, K [%d,%d] and y [%d]", n, n, n), Got: fmt.Sprintf("C = %d, %d and %d entries", c, len(k), len(y))}
	}
	if c*n > MaxSoftmaxLaplaceSize {
		return nil, &ShapeError{Op: op, Want: fmt.Sprintf("C·N ≤ %d (dense (CN)² matrices)", MaxSoftmaxLaplaceSize), Got: fmt.Sprintf("C·N = %d·%d", c, n)}
	}
	if err := CheckFinite(op+" K", k, n); err != nil {
		return nil, err
	}
	labs, err := softmaxLabels(op, y, c)
	if err != nil {
		return nil, err
	}
	iters := 0
	defer func() { o.Stats.record(iters, err != nil) }()
	cn := c * n
	tol, maxIter := o.tol(), o.maxIter()
	a, f := make([]float64, cn), make([]float64, cn)
	pi := make([]float64, n*c)
	psi := softmaxPsi(pi, f, a, labs, n, c)
	if len(start) == cn {
		fs := make([]float64, cn)
		applyKC(fs, k, start, n, c)
		if ps := softmaxPsi(pi, fs, start, labs, n, c); ps > psi && !math.IsNaN(ps) {
			copy(a, start)
			f, psi = fs, ps
		}
	}
	sq, l := make([]float64, n*c*c), make([]float64, cn*cn)
	g, b, kb, da, kda, at, ft := make([]float64, cn), make([]float64, cn), make([]float64, cn), make([]float64, cn),
		make([]float64, cn), make([]float64, cn), make([]float64, cn)
	grad := func() (res, scale float64) { // g = y − π at f; the residual max |g − α|
		softmaxRows(pi, f, labs, n, c)
		scale = 1
		for i := 0; i < n; i++ {
			for e := 0; e < c; e++ {
				v := -pi[i*c+e]
				if labs[i] == e {
					v++
				}
				g[e*n+i] = v
				res = math.Max(res, math.Abs(v-a[e*n+i]))
				scale = math.Max(scale, math.Abs(v))
			}
		}
		return res, scale
	}
	prevRes := math.Inf(1)
	for ; ; iters++ {
		res, scale := grad()
		if math.IsNaN(res) {
			return nil, &ConvergenceError{Method: "Laplace (softmax)", Iters: iters, Change: res, Tol: tol, Reason: "non-finite gradient"}
		}
		if res <= 1e-15*scale || (res > prevRes/2 && res <= tol*scale) {
			break
		}
		prevRes = res
		if iters == maxIter {
			return nil, &ConvergenceError{Method: "Laplace (softmax)", Iters: iters, Change: res / scale, Tol: tol, Reason: "iteration limit"}
		}
		if err := sqrtW(sq, pi, n, c); err != nil {
			return nil, err
		}
		if err := softmaxB(l, k, sq, n, c); err != nil {
			return nil, err
		}
		// b = W f + ∇log p (W f = S S f); α_new = b − R K_C b; the direction dα = α_new − α.
		applyS(kb, sq, f, n, c)
		applyS(b, sq, kb, n, c)
		for j := range b {
			b[j] += g[j]
		}
		applyKC(kb, k, b, n, c)
		softmaxApplyR(kb, l, sq, kb, n, c)
		for j := range da {
			da[j] = b[j] - kb[j] - a[j]
		}
		applyKC(kda, k, da, n, c)
		var moved bool
		psi, moved = backtrack(a, f, da, kda, at, ft, psi, func(f, a []float64) float64 { return softmaxPsi(pi, f, a, labs, n, c) })
		if !moved {
			if res <= math.Sqrt(tol)*scale {
				break
			}
			return nil, &ConvergenceError{Method: "Laplace (softmax)", Iters: iters + 1, Change: res / scale, Tol: tol, Reason: "the line search found no increase of ψ"}
		}
	}
	softmaxRows(pi, f, labs, n, c) // π at the mode (a failed line search leaves a trial point's)
	if err := sqrtW(sq, pi, n, c); err != nil {
		return nil, err
	}
	if err := softmaxB(l, k, sq, n, c); err != nil {
		return nil, fmt.Errorf("ops: the softmax Laplace approximation at the mode: %w", err)
	}
	logDet := 0.0
	for d := 0; d < cn; d++ {
		logDet += 2 * math.Log(l[d*cn+d])
	}
	q = &SoftmaxApprox{N: n, C: c, LogZ: psi - 0.5*logDet, Alpha: a, Mean: f, Iters: iters, k: k, pi: pi, sq: sq, l: l}
	if math.IsNaN(q.LogZ) || math.IsInf(q.LogZ, 0) {
		return nil, &NonFiniteError{Where: "SoftmaxLaplaceApprox log marginal likelihood", Value: q.LogZ}
	}
	return q, nil
}

// R returns R = (K_C + W⁻¹)⁻¹ = S B⁻¹ S [CN,CN] (computed once, about (CN)³/3 flops for B⁻¹, then kept).
func (q *SoftmaxApprox) R() []float64 {
	if q.r != nil {
		return q.r
	}
	n, c := q.N, q.C
	cn := c * n
	binv := append([]float64(nil), q.l...)
	lapack64.Potri(triangular(binv, cn, false))
	for i := 0; i < cn; i++ {
		for j := 0; j < i; j++ {
			binv[j*cn+i] = binv[i*cn+j]
		}
	}
	// R = S·B⁻¹·S. S acts on the class index within each point: the rows of B⁻¹S are S applied to B⁻¹'s rows (both
	// symmetric), and R's row (a,i) is Σ_b S_i[a,b]·(B⁻¹S)'s row (b,i).
	row := make([]float64, cn)
	for j := 0; j < cn; j++ {
		applyS(row, q.sq, binv[j*cn:(j+1)*cn], n, c)
		copy(binv[j*cn:(j+1)*cn], row)
	}
	r := make([]float64, cn*cn)
	for i := 0; i < n; i++ {
		si := q.sq[i*c*c : (i+1)*c*c]
		for a := 0; a < c; a++ {
			dst := r[(a*n+i)*cn : (a*n+i+1)*cn]
			for b, w := range si[a*c : (a+1)*c] {
				for j, v := range binv[(b*n+i)*cn : (b*n+i+1)*cn] {
					dst[j] += w * v
				}
			}
		}
	}
	q.r = r
	return r
}

// SoftmaxLaplaceGrad writes g·∂LogZ/∂K into gk [n,n] (the shared K; symmetric), for q from SoftmaxLaplaceApprox:
// with ∇ = α = y − π̂, R = (K_C + W⁻¹)⁻¹, Σ = (K_C⁻¹ + W)⁻¹ = K_C − K_C R K_C,
//
//	s₂[(c,i)] = −½ Σ_ab Σ_i[a,b] ∂W_i[a,b]/∂f_ic,   t = (I − R K_C) s₂,
//	∂/∂K_C = ½(ααᵀ − R) + ½(t∇ᵀ + ∇tᵀ),   ∂/∂K = Σ_c (∂/∂K_C)[c,c]
//
// (R&W eq. 5.23 and Algorithm 5.1's implicit term, with ∂W_i[a,b]/∂f_c = δ_ab π_a(δ_ac − π_c) −
// π_a(δ_ac − π_c)π_b − π_aπ_b(δ_bc − π_c) of the softmax).
func SoftmaxLaplaceGrad(q *SoftmaxApprox, g float64, gk []float64) error {
	if q == nil || q.k == nil || len(gk) != q.N*q.N {
		return fmt.Errorf("ops: SoftmaxLaplaceGrad: no approximation, or gk of %d entries", len(gk))
	}
	n, c, k := q.N, q.C, q.k
	cn := c * n
	r := q.R()
	// Σ's diagonal blocks: Σ_i[a,b] = K_ii δ_ab − (K_C R K_C)[(a,i),(b,i)]; with T = R K_C (columns (b,i)),
	// (K_C T)[(a,i),(b,i)] = Σ_j K_ij T[(a,j),(b,i)].
	tm := make([]float64, cn*cn) // T = R·K_C: T[:, b-block] = R[:, b-block]·K
	for b := 0; b < c; b++ {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: cn, Cols: n, Stride: cn, Data: r[b*n:]},
			dense(k, n, n), 0, blas64.General{Rows: cn, Cols: n, Stride: cn, Data: tm[b*n:]})
	}
	sig := make([]float64, n*c*c)
	for i := 0; i < n; i++ {
		krow := k[i*n : (i+1)*n]
		for a := 0; a < c; a++ {
			for b := 0; b < c; b++ {
				s := 0.0
				for j, kij := range krow {
					s += kij * tm[(a*n+j)*cn+b*n+i]
				}
				v := -s
				if a == b {
					v += k[i*n+i]
				}
				sig[(i*c+a)*c+b] = v
			}
		}
	}
	// s₂ = −½ tr(Σ_i ∂W_i/∂f_ie) = −½ π_e(Σ_i[e,e] − Σ_a Σ_i[a,a]π_a − 2(Σ_iπ)_e + 2πᵀΣ_iπ), Σ_i symmetric.
	s2, sp := make([]float64, cn), make([]float64, c)
	for i := 0; i < n; i++ {
		p, si := q.pi[i*c:(i+1)*c], sig[i*c*c:(i+1)*c*c]
		d, quad := 0.0, 0.0
		for a := range p {
			sp[a] = 0
			for b, pb := range p {
				sp[a] += si[a*c+b] * pb
			}
			d += si[a*c+a] * p[a]
			quad += p[a] * sp[a]
		}
		for e, pe := range p {
			s2[e*n+i] = -0.5 * pe * (si[e*c+e] - d - 2*sp[e] + 2*quad)
		}
	}
	t := make([]float64, cn) // t = s₂ − R K_C s₂
	applyKC(t, k, s2, n, c)
	tmp := make([]float64, cn)
	matVec(tmp, r, t, cn, cn)
	for j := range t {
		t[j] = s2[j] - tmp[j]
	}
	al := q.Alpha
	clear(gk)
	for e := 0; e < c; e++ {
		o := e * n
		for i := 0; i < n; i++ {
			row, rrow := gk[i*n:(i+1)*n], r[(o+i)*cn+o:(o+i)*cn+o+n]
			ai, ti := al[o+i], t[o+i]
			for j := range row {
				row[j] += g * (0.5*(ai*al[o+j]-rrow[j]) + 0.5*(ti*al[o+j]+ai*t[o+j]))
			}
		}
	}
	return nil
}

// Predict returns the latent predictive means [m,C] and covariances [m,C,C] (row-major) at m test inputs, given
// kxs = K(X, X*) [N,m] and kss = diag K(X*, X*) [m] (R&W eqs. 3.40 and 3.43, Algorithm 3.4): μ*_c = k*ᵀα_c and
// Σ*[c,c'] = δ_cc'k** − k*ᵀR_cc'k*. Errors: a *ShapeError for wrong lengths.
func (q *SoftmaxApprox) Predict(kxs, kss []float64, m int) (mean, cov []float64, err error) {
	n, c := q.N, q.C
	cn := c * n
	if m < 1 || len(kxs) != n*m || len(kss) != m {
		return nil, nil, &ShapeError{Op: "SoftmaxApprox.Predict", Want: fmt.Sprintf("K(X, X*) [%d,%d] and diag K(X*, X*) [%d]", n, m, m), Got: fmt.Sprint(len(kxs), " and ", len(kss), " entries")}
	}
	r := q.R()
	mean, cov = make([]float64, m*c), make([]float64, m*c*c)
	for a := 0; a < c; a++ {
		for i := 0; i < n; i++ {
			al, row := q.Alpha[a*n+i], kxs[i*m:(i+1)*m]
			for p, v := range row {
				mean[p*c+a] += v * al
			}
		}
	}
	u := make([]float64, cn*m)
	for b := 0; b < c; b++ { // U = R[:, b-block]·K(X, X*) [CN,m]
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: cn, Cols: n, Stride: cn, Data: r[b*n:]},
			dense(kxs, n, m), 0, dense(u, cn, m))
		for a := 0; a < c; a++ {
			for i := 0; i < n; i++ {
				urow, krow := u[(a*n+i)*m:(a*n+i+1)*m], kxs[i*m:(i+1)*m]
				for p, v := range krow {
					cov[(p*c+a)*c+b] -= v * urow[p]
				}
			}
		}
	}
	for p, v := range kss {
		for a := 0; a < c; a++ {
			cov[(p*c+a)*c+a] += v
		}
	}
	return mean, cov, nil
}
