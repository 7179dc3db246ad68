package ops

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Lanczos tridiagonals: stochastic Lanczos quadrature of log-determinants (Ubaru, Chen & Saad 2017; Gardner et
// al. 2018, §4 and Appendix A) and the LanczOs Variance Estimates of Pleiss, Gardner, Weinberger & Wilson 2018
// ("Constant-Time Predictive Distributions for Gaussian Processes", arXiv 1803.06058).

// eigTridiag returns the eigenvalues of the symmetric tridiagonal t and the first component of each unit
// eigenvector.
func eigTridiag(t Tridiag) (vals, first []float64, err error) {
	m := len(t.Diag)
	if m == 0 || len(t.Off) != m-1 {
		return nil, nil, &ShapeError{Op: "tridiagonal eigen-decomposition", Want: "a diagonal of m ≥ 1 values and an off-diagonal of m−1", Got: fmt.Sprintf("%d and %d", m, len(t.Off))}
	}
	a := make([]float64, m*m)
	for i, v := range t.Diag {
		a[i*m+i] = v
	}
	for i, v := range t.Off {
		a[i*m+i+1], a[(i+1)*m+i] = v, v
	}
	if err := CheckFinite("Lanczos tridiagonal", a, m); err != nil {
		return nil, nil, err
	}
	vals = make([]float64, m)
	work := []float64{0}
	sym := blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: a}
	lapack64.Syev(lapack.EVCompute, sym, vals, work, -1)
	work = make([]float64, int(work[0]))
	if !lapack64.Syev(lapack.EVCompute, sym, vals, work, len(work)) {
		return nil, nil, fmt.Errorf("ops: eigen-decomposition of a %d×%d Lanczos tridiagonal failed", m, m)
	}
	return vals, a[:m], nil // row 0 of the eigenvector matrix: the first components
}

// LanczosQuadrature returns e₁ᵀ f(T) e₁ = Σ_i τ_i² f(λ_i) for the Lanczos tridiagonal T of a symmetric matrix A
// started at a unit vector u (λ_i its Ritz values, τ_i the first components of its unit eigenvectors): the Gauss
// quadrature of uᵀ f(A) u, exact for polynomials of degree < 2m. With f = log and a probe w, ‖w‖²·e₁ᵀ log(T) e₁
// estimates wᵀ log(A) w, and their mean over probes with E[wwᵀ] = I estimates log|A| (stochastic Lanczos
// quadrature). A non-positive Ritz value (A not positive definite) is an error wrapping ErrNotPD.
func LanczosQuadrature(t Tridiag, f func(float64) float64) (float64, error) {
	vals, first, err := eigTridiag(t)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for i, l := range vals {
		if !(l > 0) {
			return 0, fmt.Errorf("ops: Lanczos quadrature: Ritz value %g of a %d-step tridiagonal: %w", l, len(vals), ErrNotPD)
		}
		s += first[i] * first[i] * f(l)
	}
	return s, nil
}

// Lanczos runs k steps of the Lanczos process on the symmetric n×n matrix A (apply(v, out) writes A·v for a
// vector v [n]) from b [n] (normalised), with full reorthogonalisation (classical Gram–Schmidt, twice), and returns
// the orthonormal basis Q [n,m] (row-major; m ≤ k: fewer when the Krylov space is exhausted, a β below 1e-10 of
// ‖A‖'s estimate) and the tridiagonal T = QᵀAQ.
func Lanczos(apply func(v, out []float64) error, b []float64, n, k int) (q []float64, t Tridiag, err error) {
	if n <= 0 || k <= 0 || len(b) != n {
		return nil, Tridiag{}, &ShapeError{Op: "Lanczos", Want: fmt.Sprintf("a start vector of %d values and k ≥ 1", n), Got: fmt.Sprintf("%d values, k = %d", len(b), k)}
	}
	if err := CheckFinite("Lanczos start vector", b, 1); err != nil {
		return nil, Tridiag{}, err
	}
	k = min(k, n)
	nb := blas64.Nrm2(blas64.Vector{N: n, Inc: 1, Data: b})
	if nb == 0 {
		return nil, Tridiag{}, fmt.Errorf("ops: Lanczos: zero start vector")
	}
	cols := make([][]float64, 0, k) // the Lanczos vectors
	v := make([]float64, n)
	for i, x := range b {
		v[i] = x / nb
	}
	w := make([]float64, n)
	scale := 0.0
	for j := 0; j < k; j++ {
		cols = append(cols, v)
		if err := apply(v, w); err != nil {
			return nil, Tridiag{}, err
		}
		if err := CheckFinite("Lanczos product", w, 1); err != nil {
			return nil, Tridiag{}, err
		}
		a := vecDot(v, w)
		t.Diag = append(t.Diag, a)
		scale = max(scale, math.Abs(a))
		for pass := 0; pass < 2; pass++ { // w ⟂ every earlier vector, twice for stability
			for _, u := range cols {
				c := vecDot(u, w)
				for i := range w {
					w[i] -= c * u[i]
				}
			}
		}
		beta := math.Sqrt(vecDot(w, w))
		if j == k-1 || beta <= 1e-10*scale {
			break
		}
		t.Off = append(t.Off, beta)
		nv := make([]float64, n)
		for i, x := range w {
			nv[i] = x / beta
		}
		v = nv
	}
	m := len(cols)
	q = make([]float64, n*m)
	for j, c := range cols {
		for i, x := range c {
			q[i*m+j] = x
		}
	}
	return q, t, nil
}

func vecDot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// LOVECache returns the LanczOs Variance Estimates cache of K̂ (Pleiss et al. 2018) in the form V [n,c]
// (row-major) and W [c,c] (symmetric) with
//
//	kᵀK̂⁻¹k ≈ ‖k‖²/σ² + (Vᵀk)ᵀ·W·(Vᵀk)
//
// from the preconditioner P = U·diag(s²)·Uᵀ + σ²I (nil: P = σ²I) and the Lanczos basis q [n,m] and tridiagonal t
// of the preconditioned M = P^(−1/2)·K̂·P^(−1/2): K̂⁻¹ = P⁻¹ + P^(−1/2)(M⁻¹ − I)P^(−1/2), where P⁻¹ = I/σ² +
// U·diag(1/(σ² + s²) − 1/σ²)·Uᵀ is exact (the first r columns of V, U, with W's diagonal block) and M⁻¹ − I ≈
// Q(T⁻¹ − I)Qᵀ on the Krylov space (the last m columns of V, P^(−1/2)Q, with W's block T⁻¹ − I). M ⪰ I (the
// pivoted-Cholesky P is below K̂), so that Lanczos finds first the directions where M⁻¹ − I is largest: with a
// good preconditioner far fewer steps reach a given accuracy than on K̂ itself. A tridiagonal that is not
// positive definite is an error wrapping ErrNotPD.
func LOVECache(q []float64, t Tridiag, n int, sigma2 float64, pre *LowRankPrecond) (v []float64, c int, w []float64, err error) {
	m := len(t.Diag)
	if m == 0 || len(q) != n*m || len(t.Off) != m-1 {
		return nil, 0, nil, &ShapeError{Op: "LOVECache", Want: fmt.Sprintf("Q of %d×m values and a tridiagonal of order m ≥ 1", n), Got: fmt.Sprintf("%d values, order %d", len(q), m)}
	}
	// T⁻¹ by its Cholesky factor (T = L·Lᵀ, L lower bidiagonal): column j of T⁻¹ solves T·x = e_j.
	ld, lo := make([]float64, m), make([]float64, max(m-1, 0))
	for i := 0; i < m; i++ {
		d := t.Diag[i]
		if i > 0 {
			lo[i-1] = t.Off[i-1] / ld[i-1]
			d -= lo[i-1] * lo[i-1]
		}
		if !(d > 0) {
			return nil, 0, nil, fmt.Errorf("ops: LOVECache: Lanczos tridiagonal not positive definite at step %d: %w", i, ErrNotPD)
		}
		ld[i] = math.Sqrt(d)
	}
	tinv := make([]float64, m*m)
	x := make([]float64, m)
	for j := 0; j < m; j++ {
		clear(x)
		x[j] = 1
		for i := 0; i < m; i++ { // L·z = e_j
			if i > 0 {
				x[i] -= lo[i-1] * x[i-1]
			}
			x[i] /= ld[i]
		}
		for i := m - 1; i >= 0; i-- { // Lᵀ·x = z
			if i < m-1 {
				x[i] -= lo[i] * x[i+1]
			}
			x[i] /= ld[i]
		}
		for i := 0; i < m; i++ {
			tinv[i*m+j] = x[i]
		}
	}
	r := 0
	var u, s2 []float64
	if pre != nil {
		u, s2 = pre.Eigen()
		r = len(s2)
	}
	c = r + m
	v, w = make([]float64, n*c), make([]float64, c*c)
	qp := q
	if pre != nil {
		qp = make([]float64, n*m)
		pre.InvSqrt(q, qp, m)
	} else {
		qp = make([]float64, n*m)
		for i, val := range q {
			qp[i] = val / math.Sqrt(sigma2)
		}
	}
	for i := 0; i < n; i++ {
		copy(v[i*c:i*c+r], u[i*r:(i+1)*r])
		copy(v[i*c+r:(i+1)*c], qp[i*m:(i+1)*m])
	}
	for a, val := range s2 {
		w[a*c+a] = 1/(sigma2+val) - 1/sigma2
	}
	for a := 0; a < m; a++ {
		for b := 0; b < m; b++ {
			val := tinv[a*m+b]
			if a == b {
				val--
			}
			w[(r+a)*c+r+b] = val
		}
	}
	return v, c, w, nil
}
