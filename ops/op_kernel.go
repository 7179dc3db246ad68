package ops

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gpzoo/gpzoo/ops/internal/parallel"
	"github.com/gpzoo/gpzoo/ops/internal/vmath"
	"gonum.org/v1/gonum/blas"
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
	// Shape, when non-nil, is the hyperparameter's fixed shape, independent of D (a coregion kernel's [P,R]
	// mixing matrix); Vec and ScalarOK are then ignored.
	Shape []int
}

// CovChecker is implemented by covariance functions that accept only some input values (a coregion kernel's task
// column holds category indices): CovMatrix and CovDiag call CheckInputs on each input operand before every
// forward pass, and its error (typed by the function) ends the run before Matrix or Diag sees the values.
type CovChecker interface {
	CheckInputs(x CovInput, h []CovInput) error
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
	return apply(covMatrixK{f: f, ws: new(covWork)}, append([]*G.Node{x1, x2}, hyper...)...)
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
	case h.Shape != nil:
		return fmt.Sprintf("shape %v", h.Shape)
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

// covMatrixK is the kernel of CovMatrix: operands (x1, x2, hyper...). ws is the op's workspace, handed to
// covariance functions that take one (covFused: ops.Stationary), shared with the op's gradient ops.
type covMatrixK struct {
	f  CovFunc
	ws *covWork
}

func (k covMatrixK) name() string       { return "CovMatrix" }
func (k covMatrixK) params(w io.Writer) { fmt.Fprintf(w, "family=%s", k.f.Name()) }
func (k covMatrixK) arity() int         { return 2 + len(k.f.Hypers()) }
func (k covMatrixK) diff() []bool       { return covAllTrue(k.arity()) }
func (k covMatrixK) label() string      { return "CovMatrix(" + k.f.Name() + ")" }

// shapes returns the workspace's scratch for covRecheck (nil without a workspace).
func (k covMatrixK) shapes() []tensor.Shape {
	if k.ws == nil {
		return nil
	}
	if len(k.ws.shapes) < k.arity() {
		k.ws.shapes = make([]tensor.Shape, k.arity())
	}
	return k.ws.shapes
}

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
	if se := covCheckHyper(k.f, in[2:], in[0][1]); se != nil {
		se.Op = k.label()
		return nil, se
	}
	return tensor.Shape{in[0][0], in[1][0]}, nil
}

func (k covMatrixK) forward(in []arg, out []float64) error {
	if err := covRecheck(k, in, len(out), k.shapes()...); err != nil {
		return err
	}
	if err := covCheckInputs(k.f, in[2:], in[0], in[1]); err != nil {
		return err
	}
	if fu, ok := k.f.(covFused); ok && k.ws != nil {
		k.ws.runs++
		fu.matrixWS(k.ws, covIn(in[0]), covIn(in[1]), k.ws.hypers(in[2:]), out)
		return nil
	}
	k.f.Matrix(covIn(in[0]), covIn(in[1]), covIns(in[2:]), out)
	return nil
}

func (k covMatrixK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	if err := covRecheck(k, in, len(out.data), k.shapes()...); err != nil {
		return err
	}
	if len(g.data) != len(out.data) {
		return &ShapeError{Op: k.label(), Want: fmt.Sprintf("an output gradient of shape %v", out.shape), Got: fmt.Sprintf("%v", g.shape)}
	}
	if fu, ok := k.f.(covFused); ok && k.ws != nil {
		fu.matrixGradWS(k.ws, wrt, covIn(in[0]), covIn(in[1]), k.ws.hypers(in[2:]), out.data, g.data, dst)
		return nil
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
	if se := covCheckHyper(k.f, in[1:], in[0][1]); se != nil {
		se.Op = k.label()
		return nil, se
	}
	return tensor.Shape{in[0][0]}, nil
}

func (k covDiagK) forward(in []arg, out []float64) error {
	if err := covRecheck(k, in, len(out)); err != nil {
		return err
	}
	if err := covCheckInputs(k.f, in[1:], in[0]); err != nil {
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

// covCheckInputs runs f's input check (CovChecker) on each of xs, if f has one.
func covCheckInputs(f CovFunc, hyper []arg, xs ...arg) error {
	c, ok := f.(CovChecker)
	if !ok {
		return nil
	}
	h := covIns(hyper)
	for _, x := range xs {
		if err := c.CheckInputs(covIn(x), h); err != nil {
			return err
		}
	}
	return nil
}

func covAllTrue(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// covCheckHyper checks the hyperparameter shapes against the family's description for d input columns. Its error
// has no Op: the caller names itself (formatted only on this error path).
func covCheckHyper(f CovFunc, in []tensor.Shape, d int) *ShapeError {
	hs := f.Hypers()
	if len(in) != len(hs) {
		return &ShapeError{Want: fmt.Sprintf("%d hyperparameters", len(hs)), Got: fmt.Sprintf("%d", len(in))}
	}
	for j, h := range hs {
		s := in[j]
		scalar := len(s) == 0 || len(s) == 1 && s[0] == 1
		ok := scalar
		switch {
		case h.Shape != nil:
			ok = slices.Equal(s, h.Shape) || len(h.Shape) == 0 && scalar
		case h.Vec:
			ok = len(s) == 1 && s[0] == d || h.ScalarOK && scalar
		}
		if !ok {
			return &ShapeError{Want: fmt.Sprintf("hyperparameter %d (%s) %s", j, h.Name, h.want(d)), Got: fmt.Sprintf("%v", s)}
		}
	}
	return nil
}

// covRecheck re-validates operand values at run time (a Let may have changed a shape after construction).
// shapes is scratch for the operands' shapes (reallocated when short).
func covRecheck(k kernel, in []arg, outLen int, shapes ...tensor.Shape) error {
	if cap(shapes) < len(in) {
		shapes = make([]tensor.Shape, len(in))
	}
	shapes = shapes[:len(in)]
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

// covPair holds the centred inputs of a stationary kernel, c being the column mean of x1 (differences are
// unchanged, and the Gemm expansion of ‖a − b‖² cancels far less than on raw inputs). The centre is x1's alone,
// not x1's and x2's together: K_ij is then a function of x1, θ and x2's row j only, so that a column of K(Z, X)
// (or of K(X_train, X*)) does not depend on the other rows of X — every cross-covariance gpzoo's prediction
// builds has the test rows as x2, and a row's prediction must not depend on the batch it is in:
//
//	a  = (x1 − c)/ℓ  row-major [n,d],   at = aᵀ [d,n],   bt = ((x2 − c)/ℓ)ᵀ [d,m] followed by a row of ones
//
// (without scaling, ℓ = 1), and the squared row norms na, nb. The transposed layouts put the long dimension
// innermost, so that every product of the op runs on long vectors; bt's row of ones gives W's row sums with W·b.
// Its buffers are its own, reused by the next prepare.
type covPair struct {
	n, m, d     int
	a, at, bt   []float64
	na, nb, inv []float64
	centre      []float64
}

// prepare fills the pair for x1, x2, scaled by 1/ell unless ell is nil.
func (p *covPair) prepare(x1, x2 CovInput, ell []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	p.n, p.m, p.d = n, m, d
	p.a, p.at, p.bt = covGrow(p.a, n*d), covGrow(p.at, n*d), covGrow(p.bt, (d+1)*m)
	p.na, p.nb, p.inv, p.centre = covGrow(p.na, n), covGrow(p.nb, m), covGrow(p.inv, d), covGrow(p.centre, d)
	covCentre(x1, ell, p.centre, p.inv)
	for i := 0; i < n; i++ {
		for k, v := range x1.Data[i*d : (i+1)*d] {
			v = (v - p.centre[k]) * p.inv[k]
			p.at[k*n+i] = v
			p.a[i*d+k] = v
		}
	}
	for j := 0; j < m; j++ {
		for k, v := range x2.Data[j*d : (j+1)*d] {
			p.bt[k*m+j] = (v - p.centre[k]) * p.inv[k]
		}
	}
	covFill(p.bt[d*m:], 1)
	covColNorms(p.at, d, n, p.na)
	covColNorms(p.bt, d, m, p.nb)
}

// covCentre writes the column mean of x1 into centre and 1/ℓ (1 when ell is nil) into inv.
func covCentre(x1 CovInput, ell, centre, inv []float64) {
	n, d := x1.Rows(), x1.Cols()
	clear(centre)
	for i := 0; i < n*d; i += d { // x1's rows only (see covPair)
		for k, v := range x1.Data[i : i+d] {
			centre[k] += v
		}
	}
	for k := range centre {
		centre[k] /= float64(n)
		inv[k] = 1
		if ell != nil {
			inv[k] = 1 / ell[k]
		}
	}
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

// covDirectMaxD is the largest D whose squared distances are computed directly (vmath.SqDists: D subtractions
// and fused multiply-adds per entry, no cancellation); beyond it the Gemm expansion ‖a‖² + ‖b‖² − 2a·b is cheaper.
const covDirectMaxD = 32

// sqdist writes r²_ij = ‖a_i − b_j‖²/ℓ² [n,m] into r2, by a row-parallel pass. Every entry is ≥ 0 and exactly 0
// for coincident rows, and is computed alone: the bits do not depend on the split. If then is non-nil,
// then(lo, hi) is called on each finished group of rows (same goroutine), so that an elementwise map follows while
// the rows are in cache.
//
// For D ≤ covDirectMaxD each entry is Σ_k (a_ik − b_jk)² directly (vmath.SqDists, over tiles of bt's columns
// shared by a group of rows, in the L1 cache). Beyond, ‖a‖² + ‖b‖² is written first, then one Gemm adds −2a·b
// (so that the BLAS need not clear r2), and near pairs (see covNearRel) are recomputed directly, clamped at 0.
func (p *covPair) sqdist(r2 []float64, then func(lo, hi int)) {
	n, m, d := p.n, p.m, p.d
	par := covParallel(n * m)
	if d > covDirectMaxD {
		p.sqdistGemm(r2, then, par)
		return
	}
	group := max(1, 8192/m)             // rows: 64 KB of r2
	tile := max(8, min(m, 2048/d)) &^ 7 // columns: 16 KB of bt
	covRun(par, (n+group-1)/group, func(u0, u1 int) {
		for g0 := u0 * group; g0 < min(n, u1*group); g0 += group {
			g1 := min(n, g0+group)
			for t0 := 0; t0 < m; t0 += tile {
				t1 := min(m, t0+tile)
				for i := g0; i < g1; i++ {
					vmath.SqDists(r2[i*m+t0:i*m+t1], p.a[i*d:(i+1)*d], p.bt[t0:], m)
				}
			}
			if then != nil {
				then(g0, g1)
			}
		}
	})
}

// sqdistGemm is sqdist by the Gemm expansion (D > covDirectMaxD).
func (p *covPair) sqdistGemm(r2 []float64, then func(lo, hi int), par bool) {
	n, m, d := p.n, p.m, p.d
	gr := covGroupRows(m)
	groups := (n + gr - 1) / gr
	covRun(par, groups, func(u0, u1 int) {
		for i := u0 * gr; i < min(n, u1*gr); i++ {
			row, nai := r2[i*m:(i+1)*m], p.na[i]
			for j, v := range p.nb[:m] {
				row[j] = nai + v
			}
		}
	})
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -2, covGeneral(p.a, n, d), covGeneral(p.bt, d, m), 1, covGeneral(r2, n, m))
	covRun(par, groups, func(u0, u1 int) {
		for g0 := u0 * gr; g0 < min(n, u1*gr); g0 += gr {
			g1 := min(n, g0+gr)
			for i := g0; i < g1; i++ {
				row, nai := r2[i*m:(i+1)*m], p.na[i]
				for j, v := range row {
					s := nai + p.nb[j]
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
				then(g0, g1)
			}
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

// covForRows calls fn(chunk, lo, hi) on chunks contiguous blocks of [0, rows), concurrently when chunks > 1 (on the
// caller and the pooled workers of ops/internal/parallel), and waits for all of them. Row blocks write disjoint
// rows; anything accumulated across rows is kept per chunk and summed in chunk order afterwards (so results are
// deterministic for a given GOMAXPROCS).
func covForRows(chunks, rows int, fn func(chunk, lo, hi int)) {
	if chunks <= 1 {
		fn(0, 0, rows)
		return
	}
	parallel.Do(chunks, func(c int) { fn(c, c*rows/chunks, (c+1)*rows/chunks) })
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
