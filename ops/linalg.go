package ops

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Plain dense linear algebra on row-major n×n (or n×m) []float64, shared by the graph ops of this package
// (Cholesky, TriSolve, CholSolve, LogDetChol) and by non-graph code such as natural-gradient steps.
//
// Conventions: every matrix is row-major with stride = number of columns; a Cholesky factor is the LOWER
// triangular L with A = L·Lᵀ and a zero strictly upper triangle. Length mismatches make the functions without
// an error result panic (as BLAS does); CholeskyLower returns a *ShapeError instead.

// Defaults of JitterPolicy.
const (
	// DefaultJitter is the default JitterPolicy.Initial: the first retry adds 1e-8·mean(diag A) to the diagonal.
	DefaultJitter = 1e-8
	// DefaultMaxJitterTries is the default JitterPolicy.MaxTries: retries after the plain (unjittered) try.
	DefaultMaxJitterTries = 6
)

// JitterPolicy says how CholeskyLower (and the graph op Cholesky) retries a factorisation that failed because the
// matrix is not numerically positive definite.
//
// The first try factorises the symmetrised input S = (A+Aᵀ)/2 as given. Retry k = 1, …, MaxTries factorises
// S + j_k·I with
//
//	j_k = Initial · 10^(k−1) · s,   s = mean(diag S) if that is > 0 and finite, else s = 1 (absolute jitter).
//
// So with the defaults the jitters tried are 1e-8·s, 1e-7·s, …, 1e-3·s. The zero value is the default policy:
// Initial ≤ 0 (or NaN) means DefaultJitter, MaxTries == 0 means DefaultMaxJitterTries, and MaxTries < 0 means no
// retry at all (a single plain try).
type JitterPolicy struct {
	Initial  float64
	MaxTries int
	// Stats, if not nil, records every factorisation made with this policy (safe for concurrent use).
	Stats *CholeskyStats
}

// normalized returns the effective Initial and number of retries.
func (p JitterPolicy) normalized() (initial float64, retries int) {
	initial = p.Initial
	if !(initial > 0) {
		initial = DefaultJitter
	}
	switch {
	case p.MaxTries == 0:
		retries = DefaultMaxJitterTries
	case p.MaxTries < 0:
		retries = 0
	default:
		retries = p.MaxTries
	}
	return initial, retries
}

// CholInfo describes one successful (or the last failed) factorisation.
type CholInfo struct {
	Jitter  float64 // jitter added to the diagonal by the final try (0 when the plain try succeeded)
	Retries int     // tries after the plain one
}

// CholeskyStats accumulates statistics of Cholesky factorisations. It is safe for concurrent use; the zero value
// is ready to use; it must not be copied after first use (use Snapshot).
type CholeskyStats struct {
	mu sync.Mutex
	s  CholeskyStatsSnapshot
}

// CholeskyStatsSnapshot is a consistent copy of a CholeskyStats.
type CholeskyStatsSnapshot struct {
	Calls    int64 // factorisations requested (successful or not)
	Retries  int64 // total jittered tries after the plain ones, over all calls (failed calls included)
	Failures int64 // calls that returned an error (not PD after every retry, or non-finite input)
	// LastJitter is the jitter of the most recent call: the jitter that succeeded, or the largest one tried when the
	// call failed (0 when no jitter was added).
	LastJitter float64
	// MaxJitter is the largest LastJitter over all calls.
	MaxJitter float64
}

// Snapshot returns a consistent copy of the statistics. A nil receiver returns the zero snapshot.
func (s *CholeskyStats) Snapshot() CholeskyStatsSnapshot {
	if s == nil {
		return CholeskyStatsSnapshot{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

// Reset clears the statistics.
func (s *CholeskyStats) Reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.s = CholeskyStatsSnapshot{}
	s.mu.Unlock()
}

func (s *CholeskyStats) record(jitter float64, retries int, failed bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.s.Calls++
	s.s.Retries += int64(retries)
	if failed {
		s.s.Failures++
	}
	s.s.LastJitter = jitter
	if jitter > s.s.MaxJitter {
		s.s.MaxJitter = jitter
	}
	s.mu.Unlock()
}

// CholeskyLower writes into dst (n×n, row-major) the lower Cholesky factor L of the symmetrised input
// S = (A+Aᵀ)/2, S = L·Lᵀ, retrying with diagonal jitter as described by p (see JitterPolicy). The strictly upper
// triangle of dst is zeroed. a is a full n×n matrix (both triangles are read) and is not modified; dst may be a.
//
// Errors: *ShapeError if len(a) or len(dst) is not n·n; *NonFiniteError{Where: "Cholesky input"} naming the first
// NaN/±Inf of a (checked when the plain try fails, before any retry); *NotPDError{N, MaxJitter, Tries = 1+retries}
// when every try failed. On error the content of dst is unspecified. Every call is recorded in p.Stats if set.
//
// Cost: n³/3 flops per try (LAPACK dpotrf via gonum lapack64, blocked).
func CholeskyLower(dst, a []float64, n int, p JitterPolicy) (CholInfo, error) {
	if n < 0 || len(a) != n*n || len(dst) != n*n {
		return CholInfo{}, &ShapeError{Op: "CholeskyLower", Want: fmt.Sprintf("n=%d and two slices of length n·n", n),
			Got: fmt.Sprintf("len(dst)=%d, len(a)=%d", len(dst), len(a))}
	}
	if n == 0 {
		p.Stats.record(0, 0, false)
		return CholInfo{}, nil
	}
	if &dst[0] == &a[0] {
		a = slices.Clone(a)
	}
	trace := 0.0
	for i := 0; i < n; i++ {
		trace += a[i*n+i]
	}
	return choleskyTries(n, trace, p, func(jitter float64) (bool, bool) {
		symLowerTo(dst, a, n, jitter) // with a zero strict upper triangle, which Dpotrf(Lower) does not touch
		_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: dst})
		return ok, ok && finiteDiag(dst, n)
	}, func() error { return CheckFinite("Cholesky input", a, n) })
}

// choleskyTries runs the tries of JitterPolicy p on an n×n matrix (n > 0) whose diagonal sums to trace, as
// CholeskyLower describes: try(jitter) factorises with jitter·I added and reports whether it succeeded and whether
// the factor's diagonal is finite (+Inf on the input's diagonal factorises "successfully"); check returns the
// input's first non-finite value as an error, run after a failed plain try and after a success with a non-finite
// diagonal.
func choleskyTries(n int, trace float64, p JitterPolicy, try func(jitter float64) (ok, finite bool), check func() error) (CholInfo, error) {
	initial, retries := p.normalized()
	scale := trace / float64(n)
	if !(scale > 0) || math.IsInf(scale, 1) {
		scale = 1
	}
	jitter := 0.0
	for k := 0; k <= retries; k++ {
		if k > 0 {
			jitter = initial * math.Pow(10, float64(k-1)) * scale
		}
		if ok, finite := try(jitter); ok {
			if !finite {
				if err := check(); err != nil {
					p.Stats.record(jitter, k, true)
					return CholInfo{Jitter: jitter, Retries: k}, err
				}
			}
			p.Stats.record(jitter, k, false)
			return CholInfo{Jitter: jitter, Retries: k}, nil
		}
		if k == 0 {
			if err := check(); err != nil {
				p.Stats.record(0, 0, true)
				return CholInfo{}, err
			}
		}
	}
	p.Stats.record(jitter, retries, true)
	return CholInfo{Jitter: jitter, Retries: retries}, &NotPDError{N: n, MaxJitter: jitter, Tries: 1 + retries}
}

// CholeskyLowerInPlace factorises the symmetric n×n matrix A (row-major) in place, in n² memory where CholeskyLower
// takes 2n²: A is read from its upper triangle and diagonal; on return the lower triangle (diagonal included)
// holds L, L·Lᵀ = A (+ jitter·I, retried as p says, as CholeskyLower), and the strict upper triangle still holds
// A's, from which each retry rebuilds the lower one. Only the lower triangle is a factor (CholSolveTo,
// CholLogDet read only it). Errors as CholeskyLower's; on error the lower triangle is unspecified.
func CholeskyLowerInPlace(a []float64, n int, p JitterPolicy) (CholInfo, error) {
	if n < 0 || len(a) != n*n {
		return CholInfo{}, &ShapeError{Op: "CholeskyLowerInPlace", Want: fmt.Sprintf("n=%d and a slice of length n·n", n), Got: fmt.Sprintf("len(a)=%d", len(a))}
	}
	if n == 0 {
		p.Stats.record(0, 0, false)
		return CholInfo{}, nil
	}
	diag := make([]float64, n)
	trace := 0.0
	for i := range diag {
		diag[i] = a[i*n+i]
		trace += diag[i]
	}
	return choleskyTries(n, trace, p, func(jitter float64) (bool, bool) {
		for i := 0; i < n; i++ { // the lower triangle from the upper one
			for j := 0; j < i; j++ {
				a[i*n+j] = a[j*n+i]
			}
			a[i*n+i] = diag[i] + jitter
		}
		_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: a})
		return ok, ok && finiteDiag(a, n)
	}, func() error { return checkUpperFinite(a, diag, n) })
}

// checkUpperFinite returns a *NonFiniteError naming the first NaN or ±Inf of the symmetric matrix held by a's
// strict upper triangle and diag.
func checkUpperFinite(a, diag []float64, n int) error {
	for i := 0; i < n; i++ {
		if v := diag[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return &NonFiniteError{Where: "Cholesky input", Row: i, Col: i, Value: v}
		}
		for j := i + 1; j < n; j++ {
			if v := a[i*n+j]; math.IsNaN(v) || math.IsInf(v, 0) {
				return &NonFiniteError{Where: "Cholesky input", Row: i, Col: j, Value: v}
			}
		}
	}
	return nil
}

// symLowerTo writes the lower triangle (diagonal included) of (A+Aᵀ)/2 + jitter·I into dst, and zeros into its
// strict upper triangle. Eight rows at a time: A's transposed part is then read eight adjacent values at a time,
// and every row of a and dst in the block stays in cache across the columns.
func symLowerTo(dst, a []float64, n int, jitter float64) {
	i0 := 0
	for ; i0+8 <= n; i0 += 8 {
		for j := 0; j < i0; j++ {
			for r, v := range a[j*n+i0 : j*n+i0+8] {
				i := i0 + r
				dst[i*n+j] = 0.5*a[i*n+j] + 0.5*v
			}
		}
		symLowerRows(dst, a, n, i0, i0+8, i0, jitter)
	}
	symLowerRows(dst, a, n, i0, n, 0, jitter)
}

// symLowerRows is symLowerTo on the rows i0 … i1−1 from column j0 on.
func symLowerRows(dst, a []float64, n, i0, i1, j0 int, jitter float64) {
	for i := i0; i < i1; i++ {
		ri := a[i*n : i*n+n]
		di := dst[i*n : i*n+n]
		for j := j0; j < i; j++ {
			di[j] = 0.5*ri[j] + 0.5*a[j*n+i]
		}
		di[i] = ri[i] + jitter
		clear(di[i+1:])
	}
}

func zeroUpper(a []float64, n int) {
	for i := 0; i < n; i++ {
		clear(a[i*n+i+1 : i*n+n])
	}
}

func finiteDiag(a []float64, n int) bool {
	for i := 0; i < n; i++ {
		if x := a[i*n+i]; x-x != 0 {
			return false
		}
	}
	return true
}

func triangular(t []float64, n int, upper bool) blas64.Triangular {
	uplo := blas.Lower
	if upper {
		uplo = blas.Upper
	}
	return blas64.Triangular{Uplo: uplo, Diag: blas.NonUnit, N: n, Stride: n, Data: t}
}

func dense(d []float64, r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: d}
}

func blasTrans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func checkLen(fn, what string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("ops: %s: len(%s) = %d, want %d", fn, what, got, want))
	}
}

func sameStart(a, b []float64) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

// TriSolveTo solves op(T)·X = B for X (n×m) and writes it into dst, where T is n×n triangular (only its upper or
// lower triangle, per upper, is read; the diagonal must be non-zero) and op(T) = Tᵀ when trans. dst may be b.
// It panics if a length does not match. Cost: n²·m flops (BLAS dtrsm).
func TriSolveTo(dst, t, b []float64, n, m int, upper, trans bool) {
	checkLen("TriSolveTo", "t", len(t), n*n)
	checkLen("TriSolveTo", "b", len(b), n*m)
	checkLen("TriSolveTo", "dst", len(dst), n*m)
	if n == 0 || m == 0 {
		return
	}
	triSolveInto(dst, t, b, n, m, upper, trans)
}

// TriSolveBackward computes the gradients of a loss through X = op(T)⁻¹·B (see TriSolveTo), given T, the solution
// X and the loss gradient gx = ∂loss/∂X (n×m):
//
//	dB = op(T)⁻ᵀ·gx,   ∂/∂op(T) = −dB·Xᵀ,   so dT = −dB·Xᵀ (or −X·dBᵀ when trans), masked to T's triangle
//
// (the other triangle is not read by the forward, so its gradient is 0). dT (n×n) or dB (n×m) may be nil when not
// needed; dB may alias gx. Cost: n²m (dtrsm) + n²m (the triangle of a product, only when dT is wanted) flops.
func TriSolveBackward(dT, dB, t, x, gx []float64, n, m int, upper, trans bool) {
	checkLen("TriSolveBackward", "t", len(t), n*n)
	checkLen("TriSolveBackward", "x", len(x), n*m)
	checkLen("TriSolveBackward", "gx", len(gx), n*m)
	if dB == nil {
		dB = make([]float64, n*m)
	}
	TriSolveTo(dB, t, gx, n, m, upper, !trans)
	if dT == nil {
		return
	}
	checkLen("TriSolveBackward", "dT", len(dT), n*n)
	if n == 0 {
		return
	}
	if m == 0 {
		clear(dT)
		return
	}
	if !trans { // dT = −dB·Xᵀ
		gemmTri(upper, -1, dense(dB, n, m), dense(x, n, m), dense(dT, n, n))
	} else { // dT = −X·dBᵀ
		gemmTri(upper, -1, dense(x, n, m), dense(dB, n, m), dense(dT, n, n))
	}
}

// gemmTri writes the lower (or, when upper, the upper) triangle of alpha·A·Bᵀ into the square matrix c and zeroes
// the other one, for A, B [m,n]: about m²n flops instead of the 2m²n of a full product (gemmt).
func gemmTri(upper bool, alpha float64, a, b, c blas64.General) {
	m := c.Rows
	if a.Cols == 0 {
		for i := 0; i < m; i++ {
			clear(c.Data[i*c.Stride : i*c.Stride+m])
		}
		return
	}
	if a.Cols == 1 { // a rank-one triangle (a GP's y is one column): the products directly, as the BLAS rounds them
		for i := 0; i < m; i++ {
			lo, hi := 0, i+1
			if upper {
				lo, hi = i, m
			}
			ai, row := a.Data[i*a.Stride], c.Data[i*c.Stride:i*c.Stride+m]
			for j := lo; j < hi; j++ {
				row[j] = alpha * (ai * b.Data[j*b.Stride])
			}
		}
	} else {
		ul := blas.Lower
		if upper {
			ul = blas.Upper
		}
		gemmt(ul, alpha, a, b, c)
	}
	for i := 0; i < m; i++ {
		if upper {
			clear(c.Data[i*c.Stride : i*c.Stride+i])
		} else {
			clear(c.Data[i*c.Stride+i+1 : i*c.Stride+m])
		}
	}
}

// CholSolveTo writes X = (L·Lᵀ)⁻¹·B (n×m) into dst, for a lower Cholesky factor L (n×n; only its lower triangle
// is read). dst may be b. It panics if a length does not match. Cost: 2n²m flops (two dtrsm).
func CholSolveTo(dst, l, b []float64, n, m int) {
	checkLen("CholSolveTo", "l", len(l), n*n)
	checkLen("CholSolveTo", "b", len(b), n*m)
	checkLen("CholSolveTo", "dst", len(dst), n*m)
	if n == 0 || m == 0 {
		return
	}
	if !sameStart(dst, b) {
		copy(dst, b)
	}
	lt, d := triangular(l, n, false), dense(dst, n, m)
	blas64.Trsm(blas.Left, blas.NoTrans, 1, lt, d)
	blas64.Trsm(blas.Left, blas.Trans, 1, lt, d)
}

// CholSolveBackward computes the gradients of a loss through X = (L·Lᵀ)⁻¹·B, given L, X and gx = ∂loss/∂X:
//
//	dB = (L·Lᵀ)⁻¹·gx,   dL = −tril((dB·Xᵀ + X·dBᵀ)·L)
//
// (from dX = −(LLᵀ)⁻¹(dL·Lᵀ + L·dLᵀ)X). dL (n×n) or dB (n×m) may be nil when not needed; dB may alias gx.
// Cost: 2n²m (dtrsm) + 2n²m (dsyr2k) + n³ (dtrmm) flops, the last two only when dL is wanted.
func CholSolveBackward(dL, dB, l, x, gx []float64, n, m int) {
	checkLen("CholSolveBackward", "l", len(l), n*n)
	checkLen("CholSolveBackward", "x", len(x), n*m)
	checkLen("CholSolveBackward", "gx", len(gx), n*m)
	if dB == nil {
		dB = make([]float64, n*m)
	}
	CholSolveTo(dB, l, gx, n, m)
	if dL == nil {
		return
	}
	checkLen("CholSolveBackward", "dL", len(dL), n*n)
	if n == 0 {
		return
	}
	if m == 0 {
		clear(dL)
		return
	}
	// C = dB·Xᵀ + X·dBᵀ (lower triangle), mirrored to a full matrix, then C·L, negated and masked.
	blas64.Syr2k(blas.NoTrans, 1, dense(dB, n, m), dense(x, n, m), 0, blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: dL})
	mirrorLower(dL, n)
	blas64.Trmm(blas.Right, blas.NoTrans, -1, triangular(l, n, false), dense(dL, n, n))
	zeroUpper(dL, n)
}

// mirrorLower copies the strictly lower triangle of a onto the strictly upper one.
func mirrorLower(a []float64, n int) {
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			a[j*n+i] = a[i*n+j]
		}
	}
}

// CholeskyBackward writes into dst (n×n) the gradient of a loss with respect to the FULL input matrix A of
// L = CholeskyLower(A) (which factorises (A+Aᵀ)/2), given L and lbar = ∂loss/∂L (only its lower triangle is used:
// the upper triangle of L is constant zero). Following Murray (2016), "Differentiation of the Cholesky
// decomposition", arXiv:1602.07527, in the symmetric convention:
//
//	P = Φ(Lᵀ·tril(L̄)),  M = L⁻ᵀ·P·L⁻¹,  Ā = (M + Mᵀ)/2,
//
// where Φ keeps the lower triangle and halves the diagonal. Derivation: dS = dL·Lᵀ + L·dLᵀ gives
// L⁻¹dL = Φ(L⁻¹·dS·L⁻ᵀ), so ⟨L̄, dL⟩ = ⟨P, L⁻¹dS L⁻ᵀ⟩ = ⟨M, dS⟩, and dS = (dA+dAᵀ)/2 gives ⟨(M+Mᵀ)/2, dA⟩.
// Ā is symmetric, so perturbing a single entry A_ij (which moves S_ij and S_ji by half) is matched.
// A jitter added by the forward is a constant shift of the diagonal and does not change the gradient.
//
// dst may alias lbar but not l. Cost: with OpenBLAS, n³ (dtrmm) + 2·n³ (two dtrsm) = 3n³ flops, all BLAS-3; with
// gpzoo's BLAS about 2n³/3, by Murray's blocked reverse mode (ops/internal/blas.CholeskyBackward).
func CholeskyBackward(dst, l, lbar []float64, n int) {
	checkLen("CholeskyBackward", "l", len(l), n*n)
	checkLen("CholeskyBackward", "lbar", len(lbar), n*n)
	checkLen("CholeskyBackward", "dst", len(dst), n*n)
	if n == 0 {
		return
	}
	same := sameStart(dst, lbar)
	for i := 0; i < n; i++ { // tril(L̄), in one pass
		if !same {
			copy(dst[i*n:i*n+i+1], lbar[i*n:])
		}
		clear(dst[i*n+i+1 : i*n+n])
	}
	cholBackward(dst, l, n) // (M+Mᵀ)/2, M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹
}

// CholLogDet returns log det(L·Lᵀ) = 2·Σ log L_ii for a lower (or upper) Cholesky factor l (n×n). A non-positive
// diagonal entry gives NaN or −Inf. (The graph op with the same role is LogDetChol.)
func CholLogDet(l []float64, n int) float64 {
	checkLen("CholLogDet", "l", len(l), n*n)
	s := 0.0
	for i := 0; i < n; i++ {
		s += math.Log(l[i*n+i])
	}
	return 2 * s
}
