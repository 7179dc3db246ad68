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

// CovFamily names a covariance-function family of CovMatrix and CovDiag. The set is closed.
//
// Hyperparameters are passed ALREADY CONSTRAINED (the caller applies Softplus or similar), in this order
// (a "scalar" may also be a one-element vector [1]; D is the number of input columns):
//
//	SquaredExp         variance σ² (scalar), lengthscales ℓ [D]                 k = σ² exp(−r²/2)
//	Matern12           variance σ² (scalar), lengthscales ℓ [D]                 k = σ² exp(−r)
//	Matern32           variance σ² (scalar), lengthscales ℓ [D]                 k = σ² (1 + √3 r) exp(−√3 r)
//	Matern52           variance σ² (scalar), lengthscales ℓ [D]                 k = σ² (1 + √5 r + 5r²/3) exp(−√5 r)
//	RationalQuadratic  variance σ² (scalar), lengthscales ℓ [D], alpha α (scalar) k = σ² (1 + r²/(2α))^(−α)
//	Periodic           variance σ² (scalar), lengthscales ℓ [D], period p (scalar)
//	                   k = σ² exp(−2 Σ_d sin²(π (x_d − x'_d)/p) / ℓ_d²)
//	Linear             variance σ² (scalar, or [D] for ARD)                      k = Σ_d σ²_d x_d x'_d
//
// where r² = Σ_d (x_d − x'_d)²/ℓ_d² (ARD; an isotropic kernel passes a [D] vector of equal entries).
//
// Periodic is the standard (MacKay / Duvenaud) form, one shared period and a lengthscale per dimension; it equals
// GPflow's Periodic(SquaredExponential) with GPflow lengthscales ℓ/2 and the same period.
//
// Numerics. Stationary families compute r² by one Gemm on centred, ℓ-scaled inputs (‖a‖² + ‖b‖² − 2abᵀ); pairs
// where that expansion cancels badly (r² < ‖a‖²+‖b‖² / 64, which includes coincident rows) are recomputed
// directly as Σ_d (a_d − b_d)², so r² is never negative and coincident rows give exactly r² = 0. The Matérn
// kernels take √max(r², 1e-36), so every gradient stays finite at r = 0. For Matern12 the derivative with respect
// to the inputs and the lengthscales does not exist at r = 0 (|x − x'| has a kink): pairs with r² < 1e-36
// contribute the subgradient 0. For the other families the gradient at r = 0 is the true (zero) one.
type CovFamily int

// The covariance families.
const (
	SquaredExp CovFamily = iota
	Matern12
	Matern32
	Matern52
	RationalQuadratic
	Periodic
	Linear
)

var covFamilyNames = [...]string{"SquaredExp", "Matern12", "Matern32", "Matern52", "RationalQuadratic", "Periodic", "Linear"}

// String returns the family's name (it enters the op's hash).
func (f CovFamily) String() string {
	if f >= 0 && int(f) < len(covFamilyNames) {
		return covFamilyNames[f]
	}
	return fmt.Sprintf("CovFamily(%d)", int(f))
}

// HyperNames returns the names of the family's hyperparameters in the order CovMatrix and CovDiag take them
// (nil for an unknown family).
func (f CovFamily) HyperNames() []string {
	cf, ok := covFuncOf(f)
	if !ok {
		return nil
	}
	hs := cf.hyper()
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.name
	}
	return names
}

// CovMatrix returns K [N,M] with K_ij = k(x1_i, x2_j; θ) for x1 [N,D], x2 [M,D]; hyper are the (already
// constrained) hyperparameter nodes in the order documented at CovFamily. The op is differentiable with respect
// to x1, x2 and every hyperparameter; passing the same node as x1 and x2 (K(X, X)) is supported, the two
// gradients add up. Cost O(N·M·D) (Gemm-based), no N×M×D temporaries.
func CovMatrix(f CovFamily, x1, x2 *G.Node, hyper ...*G.Node) (*G.Node, error) {
	cf, err := covLookup("CovMatrix", f, len(hyper))
	if err != nil {
		return nil, err
	}
	return apply(covMatrixK{f: cf}, append([]*G.Node{x1, x2}, hyper...)...)
}

// CovDiag returns diag K(X, X) [N] for x [N,D], with the hyperparameters of CovMatrix. Cost O(N·D).
func CovDiag(f CovFamily, x *G.Node, hyper ...*G.Node) (*G.Node, error) {
	cf, err := covLookup("CovDiag", f, len(hyper))
	if err != nil {
		return nil, err
	}
	return apply(covDiagK{f: cf}, append([]*G.Node{x}, hyper...)...)
}

func covLookup(op string, f CovFamily, nhyper int) (covFunc, error) {
	cf, ok := covFuncOf(f)
	if !ok {
		return nil, fmt.Errorf("ops: %s: unknown covariance family %v", op, f)
	}
	if hs := cf.hyper(); nhyper != len(hs) {
		return nil, &ShapeError{Op: op + "(" + f.String() + ")",
			Want: fmt.Sprintf("%d hyperparameters (%s)", len(hs), strings.Join(f.HyperNames(), ", ")),
			Got:  fmt.Sprintf("%d", nhyper)}
	}
	return cf, nil
}

// covHyper describes one hyperparameter of a family.
type covHyper struct {
	name     string
	vec      bool // a [D] vector (else a scalar: shape () or [1])
	scalarOK bool // a vector hyperparameter that may also be given as a scalar (shared by all dimensions)
}

// want describes the shapes h accepts with input dimension d. It is formatted only for an error: covCheckHyper
// runs on every execution.
func (h covHyper) want(d int) string {
	switch {
	case h.vec && h.scalarOK:
		return fmt.Sprintf("a scalar or a vector [%d]", d)
	case h.vec:
		return fmt.Sprintf("a vector [%d]", d)
	}
	return "a scalar"
}

// covFunc is one covariance family: the numerics of CovMatrix and CovDiag on row-major []float64.
// h holds the hyperparameter operands in the order of hyper(); shapes are validated before any call.
type covFunc interface {
	family() CovFamily
	hyper() []covHyper
	// matrix writes K(x1, x2) [N,M] into out.
	matrix(x1, x2 arg, h []arg, out []float64)
	// matrixGrad writes into dst the gradient of the loss with respect to CovMatrix operand wrt (0: x1, 1: x2,
	// 2+j: hyperparameter j), given the forward output k and the output gradient g.
	matrixGrad(wrt int, x1, x2 arg, h []arg, k, g arg, dst []float64)
	// diag writes diag K(x, x) [N] into out.
	diag(x arg, h []arg, out []float64)
	// diagGrad is matrixGrad for CovDiag; wrt is the CovDiag operand (0: x, 1+j: hyperparameter j).
	diagGrad(wrt int, x arg, h []arg, k, g arg, dst []float64)
}

// covMatrixK is the kernel of CovMatrix: operands (x1, x2, hyper...).
type covMatrixK struct{ f covFunc }

func (k covMatrixK) name() string       { return "CovMatrix" }
func (k covMatrixK) params(w io.Writer) { fmt.Fprintf(w, "family=%s", k.f.family()) }
func (k covMatrixK) arity() int         { return 2 + len(k.f.hyper()) }
func (k covMatrixK) diff() []bool       { return covAllTrue(k.arity()) }
func (k covMatrixK) label() string      { return "CovMatrix(" + k.f.family().String() + ")" }

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
	k.f.matrix(in[0], in[1], in[2:], out)
	return nil
}

func (k covMatrixK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	if err := covRecheck(k, in, len(out.data)); err != nil {
		return err
	}
	if len(g.data) != len(out.data) {
		return &ShapeError{Op: k.label(), Want: fmt.Sprintf("an output gradient of shape %v", out.shape), Got: fmt.Sprintf("%v", g.shape)}
	}
	k.f.matrixGrad(wrt, in[0], in[1], in[2:], out, g, dst)
	return nil
}

// covDiagK is the kernel of CovDiag: operands (x, hyper...).
type covDiagK struct{ f covFunc }

func (k covDiagK) name() string       { return "CovDiag" }
func (k covDiagK) params(w io.Writer) { fmt.Fprintf(w, "family=%s", k.f.family()) }
func (k covDiagK) arity() int         { return 1 + len(k.f.hyper()) }
func (k covDiagK) diff() []bool       { return covAllTrue(k.arity()) }
func (k covDiagK) label() string      { return "CovDiag(" + k.f.family().String() + ")" }

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
	k.f.diag(in[0], in[1:], out)
	return nil
}

func (k covDiagK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	if err := covRecheck(k, in, len(out.data)); err != nil {
		return err
	}
	if len(g.data) != len(out.data) {
		return &ShapeError{Op: k.label(), Want: fmt.Sprintf("an output gradient of shape %v", out.shape), Got: fmt.Sprintf("%v", g.shape)}
	}
	k.f.diagGrad(wrt, in[0], in[1:], out, g, dst)
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
func covCheckHyper(op string, f covFunc, in []tensor.Shape, d int) error {
	hs := f.hyper()
	if len(in) != len(hs) {
		return &ShapeError{Op: op, Want: fmt.Sprintf("%d hyperparameters", len(hs)), Got: fmt.Sprintf("%d", len(in))}
	}
	for j, h := range hs {
		s := in[j]
		scalar := len(s) == 0 || len(s) == 1 && s[0] == 1
		ok := scalar
		if h.vec {
			ok = len(s) == 1 && s[0] == d || h.scalarOK && scalar
		}
		if !ok {
			return &ShapeError{Op: op, Want: fmt.Sprintf("hyperparameter %d (%s) %s", j, h.name, h.want(d)), Got: fmt.Sprintf("%v", s)}
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

// covPair holds the centred inputs of a stationary or periodic kernel, c being the column mean of x1 and x2
// together (differences are unchanged, and the Gemm expansion of ‖a − b‖² cancels far less than on raw inputs):
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
func covNewPair(x1, x2 arg, ell []float64, rowMajor bool) *covPair {
	n, m, d := x1.rows(), x2.rows(), x1.cols()
	p := &covPair{n: n, m: m, d: d, at: covScratch(n * d), bt: covScratch(m * d), na: covScratch(n), nb: covScratch(m),
		inv: covScratch(d)}
	centre := covZeros(d)
	defer covRelease(centre)
	for _, x := range [][]float64{x1.data[:n*d], x2.data[:m*d]} {
		for i := 0; i < len(x); i += d {
			for k, v := range x[i : i+d] {
				centre[k] += v
			}
		}
	}
	for k := range centre {
		centre[k] /= float64(n + m)
		p.inv[k] = 1
		if ell != nil {
			p.inv[k] = 1 / ell[k]
		}
	}
	if rowMajor {
		p.a = covScratch(n * d)
	}
	for i := 0; i < n; i++ {
		for k, v := range x1.data[i*d : (i+1)*d] {
			v = (v - centre[k]) * p.inv[k]
			p.at[k*n+i] = v
			if rowMajor {
				p.a[i*d+k] = v
			}
		}
	}
	for j := 0; j < m; j++ {
		for k, v := range x2.data[j*d : (j+1)*d] {
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
