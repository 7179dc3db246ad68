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
// ‖A‖'s estimate) and the tridiagonal T = QᵀAQ. With a deflation basis u [n,r] (orthonormal columns, row-major;
// nil: none) the process runs on (I − UUᵀ)A(I − UUᵀ): b and every new vector are made orthogonal to U too, so Q
// extends U.
func Lanczos(apply func(v, out []float64) error, b []float64, n, k int, u []float64) (q []float64, t Tridiag, err error) {
	if n <= 0 || k <= 0 || len(b) != n {
		return nil, Tridiag{}, &ShapeError{Op: "Lanczos", Want: fmt.Sprintf("a start vector of %d values and k ≥ 1", n), Got: fmt.Sprintf("%d values, k = %d", len(b), k)}
	}
	if err := CheckFinite("Lanczos start vector", b, 1); err != nil {
		return nil, Tridiag{}, err
	}
	r := 0
	if u != nil {
		if len(u)%n != 0 {
			return nil, Tridiag{}, &ShapeError{Op: "Lanczos", Want: fmt.Sprintf("a deflation basis of %d×r values", n), Got: fmt.Sprint(len(u))}
		}
		r = len(u) / n
	}
	deflate := func(w []float64) {
		if r == 0 {
			return
		}
		c := make([]float64, r) // Uᵀw
		ua := blas64.General{Rows: n, Cols: r, Stride: r, Data: u}
		blas64.Gemv(blas.Trans, 1, ua, blas64.Vector{N: n, Inc: 1, Data: w}, 0, blas64.Vector{N: r, Inc: 1, Data: c})
		blas64.Gemv(blas.NoTrans, -1, ua, blas64.Vector{N: r, Inc: 1, Data: c}, 1, blas64.Vector{N: n, Inc: 1, Data: w})
	}
	k = min(k, n-r)
	if k <= 0 {
		return nil, Tridiag{}, fmt.Errorf("ops: Lanczos: no room beside a deflation basis of %d of %d columns", r, n)
	}
	b = append([]float64(nil), b...)
	deflate(b)
	deflate(b)
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
		for pass := 0; pass < 2; pass++ { // w ⟂ U and every earlier vector, twice for stability
			deflate(w)
			for _, qj := range cols {
				c := vecDot(qj, w)
				for i := range w {
					w[i] -= c * qj[i]
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

// LOVECache returns R = L_G⁻¹·Sᵀ [c,n] for a basis S [n,c] (row-major, linearly independent columns) and
// G = SᵀK̂S [c,c] = L_G·L_Gᵀ (Cholesky, with jitter retries as CholeskyLower; a failure is an error wrapping
// ErrNotPD): the Galerkin approximation S·G⁻¹·Sᵀ = RᵀR of K̂⁻¹ on span(S), below K̂⁻¹ (so that the predictive
// variances k** − ‖R·k*‖² are never below the exact ones, and a covariance built from it stays positive
// semi-definite). With S the Lanczos basis Q of K̂ (G = T, its tridiagonal) it is the LanczOs Variance Estimates
// cache of Pleiss et al. 2018.
func LOVECache(s, g []float64, n, c int) ([]float64, error) {
	if n <= 0 || c <= 0 || len(s) != n*c || len(g) != c*c {
		return nil, &ShapeError{Op: "LOVECache", Want: fmt.Sprintf("S of %d×%d values and G of %d×%d", n, c, c, c), Got: fmt.Sprintf("%d and %d", len(s), len(g))}
	}
	l := make([]float64, c*c)
	if _, err := CholeskyLower(l, g, c, JitterPolicy{}); err != nil {
		return nil, fmt.Errorf("ops: LOVECache: %w", err)
	}
	r := make([]float64, c*n)
	CovTranspose(s, n, c, nil, r)
	TriSolveTo(r, l, r, c, n, false, false)
	return r, nil
}
