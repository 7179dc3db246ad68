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
// dst may alias lbar but not l. Cost: n³ (dtrmm) + 2·n³ (two dtrsm) = 3n³ flops, all BLAS-3.
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
	trmm(blas.Left, blas.Trans, 1, lt, d) // P = Lᵀ·tril(L̄)
	for i := 0; i < n; i++ {              // Φ
		clear(dst[i*n+i+1 : i*n+n])
		dst[i*n+i] *= 0.5
	}
	trsm(blas.Left, blas.Trans, lt, d)    // L⁻ᵀ·P
	trsm(blas.Right, blas.NoTrans, lt, d) // ·L⁻¹
	for i := 0; i < n; i++ {              // (M+Mᵀ)/2
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

// Recursive (Gemm-bound) level-3 routines.
//
// gonum's pure-Go Dtrsm, Dtrmm, Dsyrk and Dsyr2k are unblocked (each is a sequence of level-1 axpy/dot calls and
// runs at a few GFLOP/s), while its Dgemm is blocked and parallel. The routines below split the triangular
// operand into 2×2 blocks, recurse on the two diagonal blocks and do the off-diagonal work with one Gemm, so
// that for n ≫ recBlock almost all flops run in Gemm; the base case calls the plain BLAS routine. dpotrf is
// made recursive the same way (Gustavson 1997; Elmroth & Gustavson 2000). Whether the package uses them is
// decided per build by recursiveBLAS3 (true for the pure-Go BLAS, false with OpenBLAS, whose own level-3
// routines are blocked and faster than the recursion).

// Base-case sizes of the recursions, tuned on gonum v0.17 (whose Dgemm works on 64×64 blocks).
const (
	// recBlock: a triangular operand of at most this order goes to the plain Dtrsm/Dtrmm/Dsyrk.
	recBlock = 64
	// recMinRHS: with at most this many right-hand sides (the non-triangular dimension) a triangular solve or
	// product is memory-bound: the plain routine is used whatever the order.
	recMinRHS = 8
	// cholBlock: a diagonal block of at most this order is factorised by the plain Dpotrf.
	cholBlock = 96
)

// recSplit returns the order of the leading diagonal block when splitting an n×n triangle (n > recBlock):
// about n/2, rounded to a multiple of 32 so that the Gemm blocks stay aligned to gonum's 64-blocking.
func recSplit(n int) int {
	n1 := (n/2 + 16) &^ 31
	if n1 <= 0 || n1 >= n {
		n1 = n / 2
	}
	return n1
}

// subGeneral returns the r×c sub-matrix of g starting at (i, j).
func subGeneral(g blas64.General, i, j, r, c int) blas64.General {
	if r == 0 || c == 0 {
		return blas64.General{Rows: r, Cols: c, Stride: g.Stride}
	}
	return blas64.General{Rows: r, Cols: c, Stride: g.Stride, Data: g.Data[i*g.Stride+j:]}
}

// subTri returns the diagonal block of order n starting at (i, i) of t.
func subTri(t blas64.Triangular, i, n int) blas64.Triangular {
	return blas64.Triangular{Uplo: t.Uplo, Diag: t.Diag, N: n, Stride: t.Stride, Data: t.Data[i*t.Stride+i:]}
}

// offDiag returns the stored off-diagonal block of t split at n1: T21 ((n−n1)×n1) when t is lower, T12
// (n1×(n−n1)) when upper.
func offDiag(t blas64.Triangular, n1 int) blas64.General {
	g := blas64.General{Rows: t.N, Cols: t.N, Stride: t.Stride, Data: t.Data}
	if t.Uplo == blas.Lower {
		return subGeneral(g, n1, 0, t.N-n1, n1)
	}
	return subGeneral(g, 0, n1, n1, t.N-n1)
}

// effLower reports whether op(T) is lower triangular.
func effLower(t blas64.Triangular, tA blas.Transpose) bool {
	return (t.Uplo == blas.Lower) == (tA == blas.NoTrans)
}

// trsmRec solves op(T)·X = B (side Left) or X·op(T) = B (side Right) in place in b, like blas64.Trsm with
// alpha = 1, by recursion on T.
func trsmRec(s blas.Side, tA blas.Transpose, t blas64.Triangular, b blas64.General) {
	n := t.N
	rhs := b.Cols
	if s == blas.Right {
		rhs = b.Rows
	}
	if n <= recBlock || rhs <= recMinRHS {
		blas64.Trsm(s, tA, 1, t, b)
		return
	}
	n1 := recSplit(n)
	n2 := n - n1
	t11, t22, off := subTri(t, 0, n1), subTri(t, n1, n2), offDiag(t, n1)
	lower := effLower(t, tA)
	if s == blas.Left {
		b1, b2 := subGeneral(b, 0, 0, n1, b.Cols), subGeneral(b, n1, 0, n2, b.Cols)
		if lower { // X1 = T11⁻¹B1; B2 −= op(T)21·X1; X2 = T22⁻¹B2
			trsmRec(s, tA, t11, b1)
			blas64.Gemm(tA, blas.NoTrans, -1, off, b1, 1, b2)
			trsmRec(s, tA, t22, b2)
		} else { // X2 first, B1 −= op(T)12·X2, X1
			trsmRec(s, tA, t22, b2)
			blas64.Gemm(tA, blas.NoTrans, -1, off, b2, 1, b1)
			trsmRec(s, tA, t11, b1)
		}
		return
	}
	b1, b2 := subGeneral(b, 0, 0, b.Rows, n1), subGeneral(b, 0, n1, b.Rows, n2)
	if lower { // X·op(T) = B with op(T) lower: X2 = B2·T22⁻¹; B1 −= X2·op(T)21; X1 = B1·T11⁻¹
		trsmRec(s, tA, t22, b2)
		blas64.Gemm(blas.NoTrans, tA, -1, b2, off, 1, b1)
		trsmRec(s, tA, t11, b1)
	} else { // X1 first, B2 −= X1·op(T)12, X2
		trsmRec(s, tA, t11, b1)
		blas64.Gemm(blas.NoTrans, tA, -1, b1, off, 1, b2)
		trsmRec(s, tA, t22, b2)
	}
}

// trmmRec computes B = alpha·op(T)·B (side Left) or B = alpha·B·op(T) (side Right) in place, like blas64.Trmm,
// by recursion on T.
func trmmRec(s blas.Side, tA blas.Transpose, alpha float64, t blas64.Triangular, b blas64.General) {
	n := t.N
	rhs := b.Cols
	if s == blas.Right {
		rhs = b.Rows
	}
	if n <= recBlock || rhs <= recMinRHS {
		blas64.Trmm(s, tA, alpha, t, b)
		return
	}
	n1 := recSplit(n)
	n2 := n - n1
	t11, t22, off := subTri(t, 0, n1), subTri(t, n1, n2), offDiag(t, n1)
	lower := effLower(t, tA)
	if s == blas.Left {
		b1, b2 := subGeneral(b, 0, 0, n1, b.Cols), subGeneral(b, n1, 0, n2, b.Cols)
		if lower { // B2 = α(op21·B1 + op22·B2), B1 = α·op11·B1
			trmmRec(s, tA, alpha, t22, b2)
			blas64.Gemm(tA, blas.NoTrans, alpha, off, b1, 1, b2)
			trmmRec(s, tA, alpha, t11, b1)
		} else { // B1 = α(op11·B1 + op12·B2), B2 = α·op22·B2
			trmmRec(s, tA, alpha, t11, b1)
			blas64.Gemm(tA, blas.NoTrans, alpha, off, b2, 1, b1)
			trmmRec(s, tA, alpha, t22, b2)
		}
		return
	}
	b1, b2 := subGeneral(b, 0, 0, b.Rows, n1), subGeneral(b, 0, n1, b.Rows, n2)
	if lower { // B1 = α(B1·op11 + B2·op21), B2 = α·B2·op22
		trmmRec(s, tA, alpha, t11, b1)
		blas64.Gemm(blas.NoTrans, tA, alpha, b2, off, 1, b1)
		trmmRec(s, tA, alpha, t22, b2)
	} else { // B2 = α(B1·op12 + B2·op22), B1 = α·B1·op11
		trmmRec(s, tA, alpha, t22, b2)
		blas64.Gemm(blas.NoTrans, tA, alpha, b1, off, 1, b2)
		trmmRec(s, tA, alpha, t11, b1)
	}
}

// syrkLowerRec computes the lower triangle (diagonal included) of C = alpha·A·Aᵀ + beta·C for A n×k (C's strictly
// upper triangle is not referenced... except that blocks of order ≤ recBlock may be computed in full when
// recursion is used: the strictly upper triangle of C must be scratch space in that case).
func syrkLowerRec(alpha float64, a blas64.General, beta float64, c blas64.Symmetric) {
	n := c.N
	if n <= recBlock || a.Cols <= recMinRHS {
		blas64.Syrk(blas.NoTrans, alpha, a, beta, c)
		return
	}
	n1 := recSplit(n)
	n2 := n - n1
	cg := blas64.General{Rows: n, Cols: n, Stride: c.Stride, Data: c.Data}
	a1, a2 := subGeneral(a, 0, 0, n1, a.Cols), subGeneral(a, n1, 0, n2, a.Cols)
	syrkLowerRec(alpha, a1, beta, blas64.Symmetric{Uplo: blas.Lower, N: n1, Stride: c.Stride, Data: c.Data})
	blas64.Gemm(blas.NoTrans, blas.Trans, alpha, a2, a1, beta, subGeneral(cg, n1, 0, n2, n1))
	syrkLowerRec(alpha, a2, beta, blas64.Symmetric{Uplo: blas.Lower, N: n2, Stride: c.Stride, Data: c.Data[n1*c.Stride+n1:]})
}

// potrfLowerRec factorises in place the symmetric positive definite matrix whose lower triangle is stored in a
// (order n, row stride lda) as L·Lᵀ, overwriting the lower triangle with L (the strictly upper triangle is
// scratch). It reports false, like dpotrf, when a leading minor is not positive definite (a non-positive or NaN
// pivot in any diagonal block; the content of a is then unspecified).
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
	g := blas64.General{Rows: n, Cols: n, Stride: lda, Data: a}
	l11 := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n1, Stride: lda, Data: a}
	a21 := subGeneral(g, n1, 0, n2, n1)
	trsmRec(blas.Right, blas.Trans, l11, a21) // L21 = A21·L11⁻ᵀ
	a22 := a[n1*lda+n1:]
	syrkLowerRec(-1, a21, 1, blas64.Symmetric{Uplo: blas.Lower, N: n2, Stride: lda, Data: a22}) // A22 −= L21·L21ᵀ
	return potrfLowerRec(a22, n2, lda)
}

// trsm solves op(T)·X = B (side Left) or X·op(T) = B (side Right) in place in b: blas64.Trsm with alpha = 1, made
// recursive when recursiveBLAS3.
func trsm(s blas.Side, tA blas.Transpose, t blas64.Triangular, b blas64.General) {
	if recursiveBLAS3 {
		trsmRec(s, tA, t, b)
		return
	}
	blas64.Trsm(s, tA, 1, t, b)
}

// trmm computes B = alpha·op(T)·B (side Left) or B = alpha·B·op(T) (side Right) in place: blas64.Trmm, made
// recursive when recursiveBLAS3.
func trmm(s blas.Side, tA blas.Transpose, alpha float64, t blas64.Triangular, b blas64.General) {
	if recursiveBLAS3 {
		trmmRec(s, tA, alpha, t, b)
		return
	}
	blas64.Trmm(s, tA, alpha, t, b)
}

// potrfLower factorises in place the n×n row-major matrix whose lower triangle is stored in a (see
// potrfLowerRec): lapack64.Potrf, made recursive when recursiveBLAS3. It reports false when a is not (numerically)
// positive definite.
func potrfLower(a []float64, n int) bool {
	if recursiveBLAS3 {
		return potrfLowerRec(a, n, n)
	}
	_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: a})
	return ok
}
