package ops

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

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
	initial, retries := p.normalized()
	scale := 0.0
	for i := 0; i < n; i++ {
		scale += a[i*n+i]
	}
	scale /= float64(n)
	if !(scale > 0) || math.IsInf(scale, 1) {
		scale = 1
	}
	jitter := 0.0
	for k := 0; k <= retries; k++ {
		if k > 0 {
			jitter = initial * math.Pow(10, float64(k-1)) * scale
		}
		symLowerTo(dst, a, n, jitter)
		if potrfLower(dst, n) {
			zeroUpper(dst, n)
			// +Inf on the diagonal of A factorises "successfully" (L_jj = +Inf): catch it here.
			if !finiteDiag(dst, n) {
				if err := CheckFinite("Cholesky input", a, n); err != nil {
					p.Stats.record(jitter, k, true)
					return CholInfo{Jitter: jitter, Retries: k}, err
				}
			}
			p.Stats.record(jitter, k, false)
			return CholInfo{Jitter: jitter, Retries: k}, nil
		}
		if k == 0 {
			if err := CheckFinite("Cholesky input", a, n); err != nil {
				p.Stats.record(0, 0, true)
				return CholInfo{}, err
			}
		}
	}
	p.Stats.record(jitter, retries, true)
	return CholInfo{Jitter: jitter, Retries: retries}, &NotPDError{N: n, MaxJitter: jitter, Tries: 1 + retries}
}

// symLowerTo writes the lower triangle (diagonal included) of (A+Aᵀ)/2 + jitter·I into dst.
func symLowerTo(dst, a []float64, n int, jitter float64) {
	for i := 0; i < n; i++ {
		ri := a[i*n : i*n+n]
		di := dst[i*n : i*n+i+1]
		for j := 0; j < i; j++ {
			di[j] = 0.5*ri[j] + 0.5*a[j*n+i]
		}
		di[i] = ri[i] + jitter
	}
}

func zeroUpper(a []float64, n int) {
	for i := 0; i < n; i++ {
		clear(a[i*n+i+1 : i*n+n])
	}
}

func zeroLowerStrict(a []float64, n int) {
	for i := 0; i < n; i++ {
		clear(a[i*n : i*n+i])
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
	if !sameStart(dst, b) {
		copy(dst, b)
	}
	trsm(blas.Left, blasTrans(trans), triangular(t, n, upper), dense(dst, n, m))
}

// TriSolveBackward computes the gradients of a loss through X = op(T)⁻¹·B (see TriSolveTo), given T, the solution
// X and the loss gradient gx = ∂loss/∂X (n×m):
//
//	dB = op(T)⁻ᵀ·gx,   ∂/∂op(T) = −dB·Xᵀ,   so dT = −dB·Xᵀ (or −X·dBᵀ when trans), masked to T's triangle
//
// (the other triangle is not read by the forward, so its gradient is 0). dT (n×n) or dB (n×m) may be nil when not
// needed; dB may alias gx. Cost: n²m (dtrsm) + 2n²m (dgemm, only when dT is wanted) flops.
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
		blas64.Gemm(blas.NoTrans, blas.Trans, -1, dense(dB, n, m), dense(x, n, m), 0, dense(dT, n, n))
	} else { // dT = −X·dBᵀ
		blas64.Gemm(blas.NoTrans, blas.Trans, -1, dense(x, n, m), dense(dB, n, m), 0, dense(dT, n, n))
	}
	if upper {
		zeroLowerStrict(dT, n)
	} else {
		zeroUpper(dT, n)
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
	trsm(blas.Left, blas.NoTrans, lt, d)
	trsm(blas.Left, blas.Trans, lt, d)
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
	trmm(blas.Right, blas.NoTrans, -1, triangular(l, n, false), dense(dL, n, n))
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
// dst may alias lbar but not l. Cost: n³ (dtrmm) + 2·n³ (two dtrsm) = 3n³ flops, all BLAS-3; 5n³/3 flops with the
// pure-Go BLAS, which skips the known zeros of the triangular intermediates (see cholBackwardTri).
func CholeskyBackward(dst, l, lbar []float64, n int) {
	checkLen("CholeskyBackward", "l", len(l), n*n)
	checkLen("CholeskyBackward", "lbar", len(lbar), n*n)
	checkLen("CholeskyBackward", "dst", len(dst), n*n)
	if n == 0 {
		return
	}
	if !sameStart(dst, lbar) {
		copy(dst, lbar)
	}
	zeroUpper(dst, n)
	lt, d := triangular(l, n, false), dense(dst, n, n)
	if tunedLevel3 {
		cholBackwardTri(dst, l, n)
	} else {
		trmm(blas.Left, blas.Trans, 1, lt, d) // P = Lᵀ·tril(L̄)
		for i := 0; i < n; i++ {              // Φ
			clear(dst[i*n+i+1 : i*n+n])
			dst[i*n+i] *= 0.5
		}
		trsm(blas.Left, blas.Trans, lt, d)    // L⁻ᵀ·P
		trsm(blas.Right, blas.NoTrans, lt, d) // ·L⁻¹
	}
	for i := 0; i < n; i++ { // (M+Mᵀ)/2
		for j := 0; j < i; j++ {
			s := 0.5 * (dst[i*n+j] + dst[j*n+i])
			dst[i*n+j], dst[j*n+i] = s, s
		}
	}
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

// Level-3 routines tuned for gonum's pure-Go BLAS (used when tunedLevel3, i.e. in the default build; see
// blas_purego.go and blas_openblas.go).
//
// gonum v0.17's Dtrsm and Dtrmm are unblocked and sequential: one AxpyUnitary (or DotUnitary) per row, i.e. per
// right-hand side. Its Dgemm is blocked and parallel, but its kernel is itself a loop of AxpyUnitary calls of
// length ≤ 64, which on one core runs SLOWER than Dtrsm's long axpys (measured on the 2-core reference machine,
// best of several runs, n = 1000: Dtrsm 8–9 GFLOP/s, Dgemm NN/NT 5.8, Dgemm TN 5.6). A recursive triangular
// solve or product whose off-diagonal blocks go to Dgemm (tried with base blocks of 64 to 256) was therefore never
// faster than simply running the unblocked routine on all cores: the right-hand sides of a triangular solve or
// product are independent, so trsm/trmm below split them into GOMAXPROCS chunks run concurrently (parRHS), which
// was the fastest option for every side/uplo/trans combination (1.2–2.1× the sequential routine on a loaded
// machine). The Cholesky factorisation, whose trailing update needs a true matrix product, is recursive:
// potrfLowerRec (Gustavson 1997) puts its O(n³) work into that parallel triangular solve and Dgemm.

const (
	// parMinRHS is the least number of right-hand sides (columns of B for side Left, rows for side Right) given
	// to each goroutine by parRHS; with fewer the solve is memory-bound and is run sequentially.
	parMinRHS = 64
	// cholRecMin: matrices of order below this are factorised by the plain lapack64.Potrf (gonum's blocked
	// dpotrf), which is as fast at that size.
	cholRecMin = 320
	// cholBlock: the recursion of potrfLowerRec stops at diagonal blocks of at most this order (lapack64.Potrf).
	cholBlock = 96
	// syrkBlock: syrkLowerRec computes diagonal blocks of at most this order with the plain Dsyrk.
	syrkBlock = 64
)

// trsm solves op(T)·X = B (side Left) or X·op(T) = B (side Right) in place in b: blas64.Trsm with alpha = 1, run on
// all cores when tunedLevel3.
func trsm(s blas.Side, tA blas.Transpose, t blas64.Triangular, b blas64.General) {
	if tunedLevel3 {
		parRHS(s, b, func(b blas64.General) { blas64.Trsm(s, tA, 1, t, b) })
		return
	}
	blas64.Trsm(s, tA, 1, t, b)
}

// trmm computes B = alpha·op(T)·B (side Left) or B = alpha·B·op(T) (side Right) in place: blas64.Trmm, run on all
// cores when tunedLevel3.
func trmm(s blas.Side, tA blas.Transpose, alpha float64, t blas64.Triangular, b blas64.General) {
	if tunedLevel3 {
		parRHS(s, b, func(b blas64.General) { blas64.Trmm(s, tA, alpha, t, b) })
		return
	}
	blas64.Trmm(s, tA, alpha, t, b)
}

// potrfLower factorises in place the n×n row-major matrix whose lower triangle is stored in a, overwriting the
// lower triangle with its Cholesky factor L (the strictly upper triangle is not read but may be overwritten): it
// is lapack64.Potrf, made recursive (potrfLowerRec) for large n when tunedLevel3. It reports false exactly when
// Potrf does: when a leading minor is not (numerically) positive definite.
func potrfLower(a []float64, n int) bool {
	if tunedLevel3 && n >= cholRecMin {
		return potrfLowerRec(a, n, n)
	}
	_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: a})
	return ok
}

// parRHS applies f — a triangular solve or product, which treats the right-hand sides of b independently — to b
// split into up to GOMAXPROCS chunks of right-hand sides (columns for side Left, rows for side Right), run
// concurrently. Each chunk gets at least parMinRHS right-hand sides; f(b) is called directly when that leaves one.
func parRHS(s blas.Side, b blas64.General, f func(blas64.General)) {
	rhs := b.Cols
	if s == blas.Right {
		rhs = b.Rows
	}
	w := min(runtime.GOMAXPROCS(0), rhs/parMinRHS)
	if w <= 1 {
		f(b)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < w-1; k++ {
		c := rhsChunk(s, b, k*rhs/w, (k+1)*rhs/w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(c)
		}()
	}
	f(rhsChunk(s, b, (w-1)*rhs/w, rhs))
	wg.Wait()
}

// rhsChunk returns the right-hand sides lo ≤ k < hi of b: columns for side Left, rows for side Right.
func rhsChunk(s blas.Side, b blas64.General, lo, hi int) blas64.General {
	if s == blas.Left {
		return subGeneral(b, 0, lo, b.Rows, hi-lo)
	}
	return subGeneral(b, lo, 0, hi-lo, b.Cols)
}

// subGeneral returns the r×c sub-matrix of g starting at (i, j).
func subGeneral(g blas64.General, i, j, r, c int) blas64.General {
	if r == 0 || c == 0 {
		return blas64.General{Rows: r, Cols: c, Stride: g.Stride}
	}
	return blas64.General{Rows: r, Cols: c, Stride: g.Stride, Data: g.Data[i*g.Stride+j:]}
}

// recSplit returns the order of the leading diagonal block when a recursion splits an order-n triangle: about
// n/2, rounded to a multiple of 32 to keep the Dgemm operands aligned with gonum's 64-blocking.
func recSplit(n int) int {
	n1 := (n/2 + 16) &^ 31
	if n1 <= 0 || n1 >= n {
		n1 = n / 2
	}
	return n1
}

// syrkLowerRec computes the lower triangle (diagonal included) of C = alpha·A·Aᵀ + beta·C for A n×k: the
// off-diagonal blocks by Dgemm (blocked, parallel), the diagonal blocks of order ≤ syrkBlock by the plain Dsyrk
// (gonum's is unblocked and sequential). The strictly upper triangle of C is not referenced.
func syrkLowerRec(alpha float64, a blas64.General, beta float64, c blas64.Symmetric) {
	n := c.N
	if n <= syrkBlock {
		blas64.Syrk(blas.NoTrans, alpha, a, beta, c)
		return
	}
	n1 := recSplit(n)
	n2 := n - n1
	a1, a2 := subGeneral(a, 0, 0, n1, a.Cols), subGeneral(a, n1, 0, n2, a.Cols)
	syrkLowerRec(alpha, a1, beta, blas64.Symmetric{Uplo: blas.Lower, N: n1, Stride: c.Stride, Data: c.Data})
	cg := blas64.General{Rows: n, Cols: n, Stride: c.Stride, Data: c.Data}
	blas64.Gemm(blas.NoTrans, blas.Trans, alpha, a2, a1, beta, subGeneral(cg, n1, 0, n2, n1))
	syrkLowerRec(alpha, a2, beta, blas64.Symmetric{Uplo: blas.Lower, N: n2, Stride: c.Stride, Data: c.Data[n1*c.Stride+n1:]})
}

// potrfLowerRec is a recursive Cholesky factorisation (Gustavson 1997): it factorises in place the symmetric
// positive definite matrix whose lower triangle is stored in a (order n, row stride lda) as L·Lᵀ, overwriting the
// lower triangle with L; the strictly upper triangle is neither read nor written. With A = [A11 ·; A21 A22]:
//
//	L11 = chol(A11),   L21 = A21·L11⁻ᵀ (parallel Dtrsm),   L22 = chol(A22 − L21·L21ᵀ) (syrkLowerRec),
//
// recursively, down to diagonal blocks of order ≤ cholBlock factorised by lapack64.Potrf. Like dpotrf it reports
// false when a leading minor is not positive definite — a non-positive or NaN pivot in any diagonal block, which
// stops the factorisation; the content of a is then unspecified.
func potrfLowerRec(a []float64, n, lda int) bool {
	if n <= cholBlock {
		_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: lda, Data: a})
		return ok
	}
	n1 := recSplit(n)
	n2 := n - n1
	if !potrfLowerRec(a, n1, lda) {
		return false
	}
	l11 := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n1, Stride: lda, Data: a}
	a21 := subGeneral(blas64.General{Rows: n, Cols: n, Stride: lda, Data: a}, n1, 0, n2, n1)
	parRHS(blas.Right, a21, func(b blas64.General) { blas64.Trsm(blas.Right, blas.Trans, 1, l11, b) })
	a22 := a[n1*lda+n1:]
	syrkLowerRec(-1, a21, 1, blas64.Symmetric{Uplo: blas.Lower, N: n2, Stride: lda, Data: a22})
	return potrfLowerRec(a22, n2, lda)
}

// cholBlockCols is the width of the column/row panels of cholBackwardTri.
const cholBlockCols = 64

// cholBackwardTri overwrites dst, which holds tril(L̄) (zero strictly upper triangle), with M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹
// (see CholeskyBackward) in 5n³/3 flops instead of 3n³, by skipping the zero blocks of the triangular operands:
//
//   - P = Φ(Lᵀ·tril(L̄)) is lower triangular, so for the columns lo ≤ j < hi only the rows ≥ lo are needed, and
//     there tril(L̄) is zero above row lo: P[lo:, lo:hi] = L[lo:, lo:]ᵀ·L̄[lo:, lo:hi] (dtrmm of order n−lo; n³/3 in
//     all instead of n³);
//   - Y = P·L⁻¹ (the right-side solve is done first): rows lo ≤ i < hi of P are zero from column hi on, and so
//     are those of Y (X·L = P is solved from the last column), so Y[lo:hi, :hi] = P[lo:hi, :hi]·L[:hi, :hi]⁻¹
//     (n³/3 instead of n³);
//   - M = L⁻ᵀ·Y, a full solve (n³).
//
// The panels are independent and run on all cores, largest first (gonum's Dtrsm/Dtrmm are sequential).
func cholBackwardTri(dst, l []float64, n int) {
	lg, d := dense(l, n, n), dense(dst, n, n)
	tri := func(lo, hi int) blas64.Triangular { // L[lo:hi, lo:hi]
		return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: hi - lo, Stride: n, Data: lg.Data[lo*n+lo:]}
	}
	panels := (n + cholBlockCols - 1) / cholBlockCols
	parFor(panels, func(k int) { // P, panel k of columns (the widest triangles first)
		lo, hi := k*cholBlockCols, min((k+1)*cholBlockCols, n)
		blas64.Trmm(blas.Left, blas.Trans, 1, tri(lo, n), subGeneral(d, lo, lo, n-lo, hi-lo))
		for i := lo; i < hi; i++ { // Φ on the diagonal block (the rows below it are strictly lower)
			clear(dst[i*n+i+1 : i*n+hi])
			dst[i*n+i] *= 0.5
		}
	})
	parFor(panels, func(k int) { // Y = P·L⁻¹, panel of rows (the last rows, widest, first)
		lo, hi := (panels-1-k)*cholBlockCols, min((panels-k)*cholBlockCols, n)
		blas64.Trsm(blas.Right, blas.NoTrans, 1, tri(0, hi), subGeneral(d, lo, 0, hi-lo, hi))
	})
	trsm(blas.Left, blas.Trans, tri(0, n), d) // M = L⁻ᵀ·Y
}

// parFor calls f(0), …, f(k−1) on up to GOMAXPROCS goroutines, handing the indices out in increasing order.
func parFor(k int, f func(int)) {
	w := min(runtime.GOMAXPROCS(0), k)
	if w <= 1 {
		for i := 0; i < k; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for i := int(next.Add(1)) - 1; i < k; i = int(next.Add(1)) - 1 {
			f(i)
		}
	}
	wg.Add(w - 1)
	for g := 0; g < w-1; g++ {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
