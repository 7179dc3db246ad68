package ops

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CovFunc is a covariance function computed by the fused ops CovMatrix and CovDiag: forward K and its diagonal,
// backward to both inputs and every hyperparameter, on plain row-major slices (no engine types). Every built-in
// kernel of package gp is one (the stationary ones through Stationary); a kernel outside the module implements it
// to get the same fused op as the built-ins (see examples/customkernel).
//
// Hyperparameters reach it ALREADY CONSTRAINED (the caller applies Softplus or similar), in the order of Hypers;
// their shapes are validated against Hypers before any method runs, so the methods need not check them.
type CovFunc interface {
	// Name identifies the function: it labels the op and enters its hash, so it must be unique among covariance
	// functions and include every configuration field that changes the values (a fixed degree, say).
	Name() string
	// Hypers describes the hyperparameter operands, in order.
	Hypers() []CovHyper
	// Matrix writes K(x1, x2) [N,M] row-major into out.
	Matrix(x1, x2 CovInput, h []CovInput, out []float64)
	// MatrixGrad writes into dst the gradient of the loss with respect to CovMatrix operand wrt (0: x1, 1: x2,
	// 2+j: hyperparameter j; dst has that operand's size), given the forward output k and the output gradient g
	// (both [N,M]).
	MatrixGrad(wrt int, x1, x2 CovInput, h []CovInput, k, g, dst []float64)
	// Diag writes diag K(x, x) [N] into out.
	Diag(x CovInput, h []CovInput, out []float64)
	// DiagGrad is MatrixGrad for CovDiag; wrt is the CovDiag operand (0: x, 1+j: hyperparameter j).
	DiagGrad(wrt int, x CovInput, h []CovInput, k, g, dst []float64)
}

// CovInput is one operand of a covariance function: row-major values and their shape ([N,D] for inputs; [D],
// [1] or () for hyperparameters).
type CovInput struct {
	Data  []float64
	Shape []int
}

// Rows returns N (1 for a vector or scalar).
func (a CovInput) Rows() int {
	switch len(a.Shape) {
	case 0:
		return 1
	case 1:
		return a.Shape[0]
	}
	return a.Shape[0]
}

// Cols returns D (1 for a vector or scalar).
func (a CovInput) Cols() int {
	if len(a.Shape) < 2 {
		return 1
	}
	return a.Shape[1]
}

// Scalar returns the first value (a scalar hyperparameter's value).
func (a CovInput) Scalar() float64 { return a.Data[0] }

// CovHyper describes one hyperparameter operand of a CovFunc.
type CovHyper struct {
	Name string
	// Vec: a [D] vector (else a scalar: shape () or [1]).
	Vec bool
	// ScalarOK: a vector hyperparameter that may also be given as a scalar (shared by all dimensions).
	ScalarOK bool
}

// CovHyperNames returns the names of f's hyperparameters in order.
func CovHyperNames(f CovFunc) []string {
	hs := f.Hypers()
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return names
}

// CovMatrix returns K [N,M] with K_ij = k(x1_i, x2_j; θ) for x1 [N,D], x2 [M,D]; hyper are the (already
// constrained) hyperparameter nodes in the order of f.Hypers(). The op is differentiable with respect to x1, x2
// and every hyperparameter; passing the same node as x1 and x2 (K(X, X)) is supported, the two gradients add up.
func CovMatrix(f CovFunc, x1, x2 *G.Node, hyper ...*G.Node) (*G.Node, error) {
	if err := covLookup("CovMatrix", f, len(hyper)); err != nil {
		return nil, err
	}
	return apply(covMatrixK{f: f}, append([]*G.Node{x1, x2}, hyper...)...)
}

// CovDiag returns diag K(X, X) [N] for x [N,D], with the hyperparameters of CovMatrix.
func CovDiag(f CovFunc, x *G.Node, hyper ...*G.Node) (*G.Node, error) {
	if err := covLookup("CovDiag", f, len(hyper)); err != nil {
		return nil, err
	}
	return apply(covDiagK{f: f}, append([]*G.Node{x}, hyper...)...)
}

func covLookup(op string, f CovFunc, nhyper int) error {
	if f == nil {
		return fmt.Errorf("ops: %s: nil covariance function", op)
	}
	if hs := f.Hypers(); nhyper != len(hs) {
		return &ShapeError{Op: op + "(" + f.Name() + ")",
			Want: fmt.Sprintf("%d hyperparameters (%s)", len(hs), strings.Join(CovHyperNames(f), ", ")),
			Got:  fmt.Sprintf("%d", nhyper)}
	}
	return nil
}

// want describes the shapes h accepts with input dimension d. It is formatted only for an error: covCheckHyper
// runs on every execution.
func (h CovHyper) want(d int) string {
	switch {
	case h.Vec && h.ScalarOK:
		return fmt.Sprintf("a scalar or a vector [%d]", d)
	case h.Vec:
		return fmt.Sprintf("a vector [%d]", d)
	}
	return "a scalar"
}

func covIn(a arg) CovInput { return CovInput{Data: a.data, Shape: a.shape} }

func covIns(as []arg) []CovInput {
	out := make([]CovInput, len(as))
	for i, a := range as {
		out[i] = covIn(a)
	}
	return out
}

// covMatrixK is the kernel of CovMatrix: operands (x1, x2, hyper...).
type covMatrixK struct{ f CovFunc }

func (k covMatrixK) name() string       { return "CovMatrix" }
func (k covMatrixK) params(w io.Writer) { fmt.Fprintf(w, "family=%s", k.f.Name()) }
func (k covMatrixK) arity() int         { return 2 + len(k.f.Hypers()) }
func (k covMatrixK) diff() []bool       { return covAllTrue(k.arity()) }
func (k covMatrixK) label() string      { return "CovMatrix(" + k.f.Name() + ")" }

func (k covMatrixK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 2 || len(in[1]) != 2 {
		return nil, &ShapeError{Op: k.label(), Want: "matrices x1 [N,D] and x2 [M,D]", Got: fmt.Sprintf("%v and %v", in[0], in[1])}
	}
	if in[0][1] != in[1][1] {
		return nil, &ShapeError{Op: k.label(), Want: "x1 and x2 with the same number of columns D", Got: fmt.Sprintf("%v and %v", in[0], in[1])}
	}
	if in[0][0] <= 0 || in[1][0] <= 0 || in[0][1] <= 0 {
		return nil, &ShapeError{Op: k.label(), Want: "non-empty inputs", Got: fmt.Sprintf("%v and %v", in[0], in[1])}
	}
	if err := covCheckHyper(k.label(), k.f, in[2:], in[0][1]); err != nil {
		return nil, err
	}
	return tensor.Shape{in[0][0], in[1][0]}, nil
}

func (k covMatrixK) forward(in []arg, out []float64) error {
	if err := covRecheck(k, in, len(out)); err != nil {
		return err
	}
	k.f.Matrix(covIn(in[0]), covIn(in[1]), covIns(in[2:]), out)
	return nil
}

func (k covMatrixK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	if err := covRecheck(k, in, len(out.data)); err != nil {
		return err
	}
	if len(g.data) != len(out.data) {
		return &ShapeError{Op: k.label(), Want: fmt.Sprintf("an output gradient of shape %v", out.shape), Got: fmt.Sprintf("%v", g.shape)}
	}
	k.f.MatrixGrad(wrt, covIn(in[0]), covIn(in[1]), covIns(in[2:]), out.data, g.data, dst)
	return nil
}

// covDiagK is the kernel of CovDiag: operands (x, hyper...).
type covDiagK struct{ f CovFunc }

func (k covDiagK) name() string       { return "CovDiag" }
func (k covDiagK) params(w io.Writer) { fmt.Fprintf(w, "family=%s", k.f.Name()) }
func (k covDiagK) arity() int         { return 1 + len(k.f.Hypers()) }
func (k covDiagK) diff() []bool       { return covAllTrue(k.arity()) }
func (k covDiagK) label() string      { return "CovDiag(" + k.f.Name() + ")" }

func (k covDiagK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 2 || in[0][0] <= 0 || in[0][1] <= 0 {
		return nil, &ShapeError{Op: k.label(), Want: "a non-empty matrix x [N,D]", Got: fmt.Sprintf("%v", in[0])}
	}
	if err := covCheckHyper(k.label(), k.f, in[1:], in[0][1]); err != nil {
		return nil, err
	}
	return tensor.Shape{in[0][0]}, nil
}

func (k covDiagK) forward(in []arg, out []float64) error {
	if err := covRecheck(k, in, len(out)); err != nil {
		return err
	}
	k.f.Diag(covIn(in[0]), covIns(in[1:]), out)
	return nil
}

func (k covDiagK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	if err := covRecheck(k, in, len(out.data)); err != nil {
		return err
	}
	if len(g.data) != len(out.data) {
		return &ShapeError{Op: k.label(), Want: fmt.Sprintf("an output gradient of shape %v", out.shape), Got: fmt.Sprintf("%v", g.shape)}
	}
	k.f.DiagGrad(wrt, covIn(in[0]), covIns(in[1:]), out.data, g.data, dst)
	return nil
}

func covAllTrue(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// covCheckHyper checks the hyperparameter shapes against the family's description for d input columns.
func covCheckHyper(op string, f CovFunc, in []tensor.Shape, d int) error {
	hs := f.Hypers()
	if len(in) != len(hs) {
		return &ShapeError{Op: op, Want: fmt.Sprintf("%d hyperparameters", len(hs)), Got: fmt.Sprintf("%d", len(in))}
	}
	for j, h := range hs {
		s := in[j]
		scalar := len(s) == 0 || len(s) == 1 && s[0] == 1
		ok := scalar
		if h.Vec {
			ok = len(s) == 1 && s[0] == d || h.ScalarOK && scalar
		}
		if !ok {
			return &ShapeError{Op: op, Want: fmt.Sprintf("hyperparameter %d (%s) %s", j, h.Name, h.want(d)), Got: fmt.Sprintf("%v", s)}
		}
	}
	return nil
}

// covRecheck re-validates operand values at run time (a Let may have changed a shape after construction).
func covRecheck(k kernel, in []arg, outLen int) error {
	shapes := make([]tensor.Shape, len(in))
	for i, a := range in {
		shapes[i] = a.shape
		if n := a.shape.TotalSize(); len(a.data) < n || len(a.shape) == 0 && len(a.data) < 1 {
			return &ShapeError{Op: k.name(), Want: fmt.Sprintf("operand %d with %d values", i, n), Got: fmt.Sprintf("%d", len(a.data))}
		}
	}
	s, err := k.outShape(shapes)
	if err != nil {
		return err
	}
	if s.TotalSize() != outLen {
		return &ShapeError{Op: k.name(), Want: fmt.Sprintf("output of shape %v", s), Got: fmt.Sprintf("%d values", outLen)}
	}
	return nil
}

// Numerical constants of the covariance ops.
const (
	// covR2Floor is the floor on r² before a square root (Matérn kernels), as GPflow's 1e-36: √r² has an
	// infinite derivative at 0, the floored value keeps every gradient finite.
	covR2Floor = 1e-36
	// covNearRel: a pair is "near" when its Gemm-expanded squared distance ‖a‖² + ‖b‖² − 2a·b is below
	// covNearRel·(‖a‖² + ‖b‖²). Its relative rounding error is then no longer ≤ ~D·ε/covNearRel, so near pairs are
	// recomputed directly (forward) and their gradient contributions are added directly (backward).
	covNearRel = 1.0 / 64
	// covTinyVariance: for |σ²| below it, ∂K/∂σ² is recomputed instead of taken as K/σ².
	covTinyVariance = 1e-100
)

// covPools recycles scratch slices by capacity class (a power of two), so steady-state steps do not allocate.
var covPools [64]sync.Pool

// covScratch returns a slice of length n with undefined contents; give it back with covRelease.
func covScratch(n int) []float64 {
	if n <= 0 {
		return nil
	}
	c := bits.Len(uint(n - 1))
	if p, ok := covPools[c].Get().(*[]float64); ok {
		return (*p)[:n]
	}
	return make([]float64, n, 1<<c)
}

// covZeros is covScratch with the contents zeroed.
func covZeros(n int) []float64 {
	s := covScratch(n)
	clear(s)
	return s
}

func covRelease(ss ...[]float64) {
	for _, s := range ss {
		if c := cap(s); c > 0 && c&(c-1) == 0 {
			s = s[:c]
			covPools[bits.Len(uint(c-1))].Put(&s)
		}
	}
}

// covGeneral views a row-major r×c slice as a BLAS matrix.
func covGeneral(data []float64, r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: data[:r*c]}
}

// covGemm computes c = alpha·op(a)·op(b) (c overwritten); a is ar×ac, b is br×bc as stored.
func covGemm(ta, tb bool, alpha float64, a []float64, ar, ac int, b []float64, br, bc int, c []float64) {
	n, m := ar, bc
	if ta {
		n = ac
	}
	if tb {
		m = br
	}
	blas64.Gemm(trans(ta), trans(tb), alpha, covGeneral(a, ar, ac), covGeneral(b, br, bc), 0, covGeneral(c, n, m))
}

// covTranspose writes the transpose of the row-major r×c matrix x, times scale[k] per column k when scale is
// non-nil, into dst (c×r).
func covTranspose(x []float64, r, c int, scale, dst []float64) {
	for i := 0; i < r; i++ {
		for k, v := range x[i*c : (i+1)*c] {
			if scale != nil {
				v *= scale[k]
			}
			dst[k*r+i] = v
		}
	}
}

// covPair holds the centred inputs of a stationary or periodic kernel, c being the column mean of x1 (differences
// are unchanged, and the Gemm expansion of ‖a − b‖² cancels far less than on raw inputs). The centre is x1's
// alone, not x1's and x2's together: K_ij is then a function of x1, θ and x2's row j only, so that a column of
// K(Z, X) (or of K(X_train, X*)) does not depend on the other rows of X — every cross-covariance gpzoo's
// prediction builds has the test rows as x2, and a row's prediction must not depend on the batch it is in:
//
//	a  = (x1 − c)/ℓ  row-major [n,d],   at = aᵀ [d,n],   bt = ((x2 − c)/ℓ)ᵀ [d,m]
//
// (without scaling, ℓ = 1), and the squared row norms na, nb once norms has run. The transposed layouts put the
// long dimension innermost, so that every Gemm of the op runs on long vectors (gonum's Gemm is slow when the
// inner loop has length D).
type covPair struct {
	n, m, d   int
	a, at, bt []float64
	na, nb    []float64
	inv       []float64 // 1/ℓ_k (1 without scaling)
	haveNorms bool
}

// covNewPair prepares the centred inputs, scaled by 1/ell unless ell is nil. The row-major a is only filled when
// rowMajor is set.
func covNewPair(x1, x2 CovInput, ell []float64, rowMajor bool) *covPair {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	p := &covPair{n: n, m: m, d: d, at: covScratch(n * d), bt: covScratch(m * d), na: covScratch(n), nb: covScratch(m),
		inv: covScratch(d)}
	centre := covZeros(d)
	defer covRelease(centre)
	for i := 0; i < n*d; i += d { // x1's rows only (see covPair)
		for k, v := range x1.Data[i : i+d] {
			centre[k] += v
		}
	}
	for k := range centre {
		centre[k] /= float64(n)
		p.inv[k] = 1
		if ell != nil {
			p.inv[k] = 1 / ell[k]
		}
	}
	if rowMajor {
		p.a = covScratch(n * d)
	}
	for i := 0; i < n; i++ {
		for k, v := range x1.Data[i*d : (i+1)*d] {
			v = (v - centre[k]) * p.inv[k]
			p.at[k*n+i] = v
			if rowMajor {
				p.a[i*d+k] = v
			}
		}
	}
	for j := 0; j < m; j++ {
		for k, v := range x2.Data[j*d : (j+1)*d] {
			p.bt[k*m+j] = (v - centre[k]) * p.inv[k]
		}
	}
	return p
}

func (p *covPair) release() { covRelease(p.a, p.at, p.bt, p.na, p.nb, p.inv) }

// norms computes the squared row norms of a and b.
func (p *covPair) norms() {
	if p.haveNorms {
		return
	}
	covColNorms(p.at, p.d, p.n, p.na)
	covColNorms(p.bt, p.d, p.m, p.nb)
	p.haveNorms = true
}

// covColNorms writes the squared column norms of the row-major d×n matrix xt into dst (n).
func covColNorms(xt []float64, d, n int, dst []float64) {
	clear(dst)
	for k := 0; k < d; k++ {
		for i, v := range xt[k*n : (k+1)*n] {
			dst[i] += v * v
		}
	}
}

// sqdist writes r²_ij = ‖a_i − b_j‖² [n,m] into r2: one Gemm, then the expansion ‖a‖² + ‖b‖² − 2a·b, with near
// pairs (see covNearRel) recomputed directly. Every entry is ≥ 0 (clamped) and exactly 0 for coincident rows.
// The elementwise part runs in parallel over row blocks; then, if then is non-nil, then(chunk, lo, hi) is called on
// each finished block of rows (same goroutine), so an elementwise map can follow while the rows are in cache.
func (p *covPair) sqdist(r2 []float64, then func(chunk, lo, hi int)) {
	p.norms()
	n, m, d := p.n, p.m, p.d
	covGemm(false, false, -2, p.a, n, d, p.bt, d, m, r2)
	covForRows(covChunks(n, m), n, func(c, lo, hi int) {
		for i := lo; i < hi; i++ {
			row, nai := r2[i*m:(i+1)*m], p.na[i]
			for j, v := range row {
				s := nai + p.nb[j]
				v += s
				if v < covNearRel*s {
					v = p.exactSq(i, j)
				}
				if v < 0 { // clamp (NaN propagates)
					v = 0
				}
				row[j] = v
			}
		}
		if then != nil {
			then(c, lo, hi)
		}
	})
}

// exactSq returns Σ_k (a_ik − b_jk)² directly.
func (p *covPair) exactSq(i, j int) float64 {
	s := 0.0
	for k := 0; k < p.d; k++ {
		t := p.at[k*p.n+i] - p.bt[k*p.m+j]
		s += t * t
	}
	return s
}

// near reports whether pair (i, j) with squared distance r2 is near in the sense of covNearRel.
func (p *covPair) near(i, j int, r2 float64) bool { return r2 < covNearRel*(p.na[i]+p.nb[j]) }

// covRowColSums writes the row sums of the row-major n×m matrix w into rs (n) and its column sums into cs (m).
func covRowColSums(w []float64, n, m int, rs, cs []float64) {
	clear(cs)
	for i := 0; i < n; i++ {
		s := 0.0
		for j, v := range w[i*m : (i+1)*m] {
			s += v
			cs[j] += v
		}
		rs[i] = s
	}
}

// weighted computes, for a weight matrix w [n,m] over the pairs (a_i, b_j), the sums (when the destination is
// non-nil)
//
//	dA_i = Σ_j w_ij (a_i − b_j) = rs_i a_i − (w b)_i        [n,d] row-major
//	dB_j = Σ_i w_ij (b_j − a_i) = cs_j b_j − (wᵀ a)_j       [m,d] row-major
//	sq_k = Σ_ij w_ij (a_ik − b_jk)² = Σ_i rs_i a_ik² + Σ_j cs_j b_jk² − 2 Σ_i a_ik (w b)_ik     [d]
//
// with rs = w1, cs = wᵀ1: one Gemm per destination family, O(n·m·d).
func (p *covPair) weighted(w, dA, dB, sq []float64) {
	n, m, d := p.n, p.m, p.d
	rs, cs := covScratch(n), covScratch(m)
	defer covRelease(rs, cs)
	covRowColSums(w, n, m, rs, cs)
	if dA != nil || sq != nil {
		wbt := covScratch(d * n) // (w b)ᵀ = bᵀ wᵀ  [d,n]
		defer covRelease(wbt)
		covGemm(false, true, 1, p.bt, d, m, w, n, m, wbt)
		for k := 0; k < d; k++ {
			ak, wk := p.at[k*n:(k+1)*n], wbt[k*n:(k+1)*n]
			if dA != nil {
				for i, av := range ak {
					dA[i*d+k] = rs[i]*av - wk[i]
				}
			}
			if sq != nil {
				s := 0.0
				for i, av := range ak {
					s += av * (rs[i]*av - 2*wk[i])
				}
				for j, bv := range p.bt[k*m : (k+1)*m] {
					s += cs[j] * bv * bv
				}
				sq[k] = s
			}
		}
	}
	if dB != nil {
		wat := covScratch(d * m) // (wᵀ a)ᵀ = aᵀ w  [d,m]
		defer covRelease(wat)
		covGemm(false, false, 1, p.at, d, n, w, n, m, wat)
		for k := 0; k < d; k++ {
			for j, bv := range p.bt[k*m : (k+1)*m] {
				dB[j*d+k] = cs[j]*bv - wat[k*m+j]
			}
		}
	}
}

// covParallelMin is the elementwise work (entries) below which a loop stays on one goroutine.
const covParallelMin = 1 << 15

// covChunks returns how many row blocks an elementwise pass over rows×cols entries is split into.
func covChunks(rows, cols int) int {
	c := runtime.GOMAXPROCS(0)
	if c < 2 || rows*cols < covParallelMin {
		return 1
	}
	return min(c, rows)
}

// covForRows calls fn(chunk, lo, hi) on chunks contiguous blocks of [0, rows), concurrently when chunks > 1,
// and waits for all of them. Row blocks write disjoint rows; anything accumulated across rows is kept per chunk
// and summed in chunk order afterwards (so results are deterministic for a given GOMAXPROCS).
func covForRows(chunks, rows int, fn func(chunk, lo, hi int)) {
	if chunks <= 1 {
		fn(0, 0, rows)
		return
	}
	var wg sync.WaitGroup
	for c := 0; c < chunks; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(c, c*rows/chunks, (c+1)*rows/chunks)
		}()
	}
	wg.Wait()
}

// covVarianceGrad returns Σ g ⊙ ∂K/∂σ² for K = σ²·U: Σ g⊙K / σ², or Σ g⊙U with U recomputed by unit when σ² is
// too small to divide by.
func covVarianceGrad(g, k []float64, s2 float64, unit func(u []float64)) float64 {
	if math.Abs(s2) >= covTinyVariance {
		s := 0.0
		for i, v := range g {
			s += v * k[i]
		}
		return s / s2
	}
	u := covScratch(len(k))
	defer covRelease(u)
	unit(u)
	s := 0.0
	for i, v := range g {
		s += v * u[i]
	}
	return s
}
