package ops

import (
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The graph ops of the exact-GP approximations: LaplaceLML and EPLML, the approximate log marginal likelihoods of
// approx_laplace.go and approx_ep.go, with their analytic gradients in K (which the covariance op turns into the
// kernel's hyperparameter gradients), in the prior mean m and in the likelihood's parameters θ.
//
// Each op keeps its latest approximation (the backward pass of the same run reads it) and, unless its options are
// Cold, starts the next run from it: an optimiser's nearby hyperparameters need fewer iterations.

// approxOperands checks the shapes of K [N,N], m [N,1] (or [N]), y (m's shape) and ntheta scalars.
func approxOperands(op string, in []tensor.Shape, ntheta int) error {
	k := in[0]
	if len(k) != 2 || k[0] != k[1] || k[0] < 1 {
		return &ShapeError{Op: op, Want: "K [N,N]", Got: fmt.Sprint(k)}
	}
	n := k[0]
	for i, name := range []string{"m", "y"} {
		s := in[1+i]
		if !(len(s) == 1 && s[0] == n) && !(len(s) == 2 && s[0] == n && s[1] == 1) {
			return &ShapeError{Op: op, Want: fmt.Sprintf("%s [%d,1] (one output)", name, n), Got: fmt.Sprint(s)}
		}
	}
	for j := 0; j < ntheta; j++ {
		if s := in[3+j]; len(s) != 0 {
			return &ShapeError{Op: op, Want: fmt.Sprintf("scalar likelihood parameter %d", j), Got: fmt.Sprint(s)}
		}
	}
	return nil
}

// symK returns (K + Kᵀ)/2 of the K operand in st's buffer, and records the operand.
func (st *approxState) symK(in arg) []float64 {
	n, k := in.rows(), in.data
	st.kin = &k[0]
	st.ksym = grow(st.ksym, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := 0.5 * (k[i*n+j] + k[j*n+i])
			st.ksym[i*n+j], st.ksym[j*n+i] = v, v
		}
	}
	return st.ksym
}

// current reports whether st holds the approximation of the K operand in.
func (st *approxState) current(in arg) bool { return st.q != nil && st.kin == &in.data[0] }

func approxTheta(in []arg, ntheta int) []float64 {
	th := make([]float64, ntheta)
	for j := range th {
		th[j] = in[3+j].scalar()
	}
	return th
}

func approxDiff(ntheta int) []bool {
	d := make([]bool, 3+ntheta)
	for i := range d {
		d[i] = i != 2 // y is data
	}
	return d
}

// backwardOne runs a kernel's backwardAll into scratch and copies input wrt's gradient into dst (the DoDiff path).
func backwardOne(k jointBackward, arity, wrt int, in []arg, out, g arg, dst []float64) error {
	all := make([][]float64, arity)
	for i := range all {
		if i != 2 {
			all[i] = make([]float64, len(in[i].data))
		}
	}
	if err := k.backwardAll(in, out, g, all); err != nil {
		return err
	}
	copy(dst, all[wrt])
	return nil
}

// approxState is what an approximation op keeps between its forward and backward passes and runs.
type approxState struct {
	q       *GaussApprox
	kin     *float64  // the K operand's data the approximation belongs to
	ksym    []float64 // (K + Kᵀ)/2: the ops are functions of K's symmetric part (so their K gradient is symmetric)
	warm    []float64 // Laplace: the last α
	tau, nu []float64 // EP: the last sites
}

// laplaceK is LaplaceLML's kernel.
type laplaceK struct {
	lik    LaplaceLogLik
	ntheta int
	o      LaplaceOptions
	st     *approxState
}

func (k laplaceK) name() string { return "LaplaceLML" }
func (k laplaceK) params(w io.Writer) {
	fmt.Fprintf(w, "lik=%s,ntheta=%d,tol=%g,maxiter=%d,cold=%t", k.lik.Name(), k.ntheta, k.o.tol(), k.o.maxIter(), k.o.Cold)
}
func (k laplaceK) arity() int   { return 3 + k.ntheta }
func (k laplaceK) diff() []bool { return approxDiff(k.ntheta) }
func (k laplaceK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	return tensor.ScalarShape(), approxOperands("LaplaceLML", in, k.ntheta)
}

func (k laplaceK) forward(in []arg, out []float64) error {
	var start []float64
	if !k.o.Cold {
		start = k.st.warm
	}
	q, err := LaplaceApprox(k.st.symK(in[0]), in[1].data, in[2].data, in[0].rows(), k.lik, approxTheta(in, k.ntheta), k.o, start)
	if err != nil {
		k.st.q = nil
		return err
	}
	k.st.q, k.st.warm = q, append(k.st.warm[:0], q.Alpha...)
	out[0] = q.LogZ
	return nil
}

func (k laplaceK) backwardAll(in []arg, out, g arg, dst [][]float64) error {
	if !k.st.current(in[0]) {
		if err := k.forward(in, make([]float64, 1)); err != nil {
			return err
		}
	}
	var gth []float64
	if k.ntheta > 0 {
		gth = make([]float64, k.ntheta)
	}
	if err := LaplaceGrad(k.st.q, in[2].data, k.lik, approxTheta(in, k.ntheta), g.scalar(), dst[0], dst[1], gth); err != nil {
		return err
	}
	for j, v := range gth {
		dst[3+j][0] = v
	}
	return nil
}

func (k laplaceK) backward(wrt int, in []arg, out, g arg, dst []float64) error {
	return backwardOne(k, k.arity(), wrt, in, out, g, dst)
}

// LaplaceLML returns the Laplace approximation's log marginal likelihood log q(y | X, θ) of an exact GP with prior
// N(m, K) and the likelihood lik (LaplaceApprox): k [N,N], m and y [N,1] (or [N]), theta the likelihood's
// constrained parameters (scalars, lik's order). Gradients (LaplaceGrad, R&W Algorithm 5.1) flow to k, m and
// theta; y is data. The op's hash holds lik.Name() and the options but their Stats.
func LaplaceLML(lik LaplaceLogLik, o LaplaceOptions, k, m, y *G.Node, theta ...*G.Node) (*G.Node, error) {
	if lik == nil {
		return nil, fmt.Errorf("ops: LaplaceLML: nil likelihood")
	}
	if nt := lik.NumTheta(); len(theta) != nt {
		return nil, &ShapeError{Op: "LaplaceLML(" + lik.Name() + ")", Want: fmt.Sprintf("%d theta operands", nt), Got: fmt.Sprint(len(theta))}
	}
	return apply(laplaceK{lik: lik, ntheta: lik.NumTheta(), o: o, st: &approxState{}}, append([]*G.Node{k, m, y}, theta...)...)
}

// epK is EPLML's kernel.
type epK struct {
	lik    ScalarLogLik
	ntheta int
	o      EPOptions
	st     *approxState
}

func (k epK) name() string { return "EPLML" }
func (k epK) params(w io.Writer) {
	fmt.Fprintf(w, "lik=%s,ntheta=%d,tol=%g,sweeps=%d,damping=%g,sequential=%t,points=%d,cold=%t", k.lik.Name(), k.ntheta,
		k.o.tol(), k.o.maxSweeps(), k.o.damping(), k.o.Sequential, EPQuadPoints(k.lik, k.o.QuadPoints), k.o.Cold)
}
func (k epK) arity() int   { return 3 + k.ntheta }
func (k epK) diff() []bool { return approxDiff(k.ntheta) }
func (k epK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	return tensor.ScalarShape(), approxOperands("EPLML", in, k.ntheta)
}

func (k epK) forward(in []arg, out []float64) error {
	var tau, nu []float64
	if !k.o.Cold {
		tau, nu = k.st.tau, k.st.nu
	}
	q, err := EPApprox(k.st.symK(in[0]), in[1].data, in[2].data, in[0].rows(), k.lik, approxTheta(in, k.ntheta), k.o, tau, nu)
	if err != nil {
		k.st.q = nil
		return err
	}
	k.st.q = q
	k.st.tau, k.st.nu = append(k.st.tau[:0], q.W...), append(k.st.nu[:0], q.Nu...)
	out[0] = q.LogZ
	return nil
}

func (k epK) backwardAll(in []arg, out, g arg, dst [][]float64) error {
	if !k.st.current(in[0]) {
		if err := k.forward(in, make([]float64, 1)); err != nil {
			return err
		}
	}
	var gth []float64
	if k.ntheta > 0 {
		gth = make([]float64, k.ntheta)
	}
	if err := EPGrad(k.st.q, in[1].data, in[2].data, k.lik, approxTheta(in, k.ntheta), k.o, g.scalar(), dst[0], dst[1], gth); err != nil {
		return err
	}
	for j, v := range gth {
		dst[3+j][0] = v
	}
	return nil
}

func (k epK) backward(wrt int, in []arg, out, g arg, dst []float64) error {
	return backwardOne(k, k.arity(), wrt, in, out, g, dst)
}

// EPLML returns EP's approximate log marginal likelihood log Z_EP of an exact GP with prior N(m, K) and the
// likelihood lik (EPApprox): k [N,N], m and y [N,1] (or [N]), theta the likelihood's constrained parameters.
// Gradients (EPGrad, R&W §5.5.2) flow to k, m and theta; y is data. The op's hash holds lik.Name() and the options
// but their Stats.
func EPLML(lik ScalarLogLik, o EPOptions, k, m, y *G.Node, theta ...*G.Node) (*G.Node, error) {
	if lik == nil {
		return nil, fmt.Errorf("ops: EPLML: nil likelihood")
	}
	if nt := lik.NumTheta(); len(theta) != nt {
		return nil, &ShapeError{Op: "EPLML(" + lik.Name() + ")", Want: fmt.Sprintf("%d theta operands", nt), Got: fmt.Sprint(len(theta))}
	}
	return apply(epK{lik: lik, ntheta: lik.NumTheta(), o: o, st: &approxState{}}, append([]*G.Node{k, m, y}, theta...)...)
}

// softmaxLaplaceK is SoftmaxLaplaceLML's kernel.
type softmaxLaplaceK struct {
	classes int
	o       LaplaceOptions
	st      *softmaxState
}

// softmaxState is what SoftmaxLaplaceLML keeps between its forward and backward passes and runs: approxState's K
// operand, its symmetric part and the last α, and the approximation.
type softmaxState struct {
	approxState
	sq *SoftmaxApprox
}

func (k softmaxLaplaceK) name() string { return "SoftmaxLaplaceLML" }
func (k softmaxLaplaceK) params(w io.Writer) {
	fmt.Fprintf(w, "classes=%d,tol=%g,maxiter=%d,cold=%t", k.classes, k.o.tol(), k.o.maxIter(), k.o.Cold)
}
func (k softmaxLaplaceK) arity() int   { return 2 }
func (k softmaxLaplaceK) diff() []bool { return []bool{true, false} }
func (k softmaxLaplaceK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	s := in[0]
	if len(s) != 2 || s[0] != s[1] || s[0] < 1 {
		return nil, &ShapeError{Op: "SoftmaxLaplaceLML", Want: "K [N,N]", Got: fmt.Sprint(s)}
	}
	if y := in[1]; !(len(y) == 1 && y[0] == s[0]) && !(len(y) == 2 && y[0] == s[0] && y[1] == 1) {
		return nil, &ShapeError{Op: "SoftmaxLaplaceLML", Want: fmt.Sprintf("y [%d,1] (labels)", s[0]), Got: fmt.Sprint(y)}
	}
	return tensor.ScalarShape(), nil
}

func (k softmaxLaplaceK) forward(in []arg, out []float64) error {
	var start []float64
	if !k.o.Cold {
		start = k.st.warm
	}
	q, err := SoftmaxLaplaceApprox(k.st.symK(in[0]), in[1].data, in[0].rows(), k.classes, k.o, start)
	if err != nil {
		k.st.sq = nil
		return err
	}
	k.st.sq, k.st.warm = q, append(k.st.warm[:0], q.Alpha...)
	out[0] = q.LogZ
	return nil
}

func (k softmaxLaplaceK) backwardAll(in []arg, out, g arg, dst [][]float64) error {
	if k.st.sq == nil || k.st.kin != &in[0].data[0] {
		if err := k.forward(in, make([]float64, 1)); err != nil {
			return err
		}
	}
	return SoftmaxLaplaceGrad(k.st.sq, g.scalar(), dst[0])
}

func (k softmaxLaplaceK) backward(wrt int, in []arg, out, g arg, dst []float64) error {
	return backwardOne(k, k.arity(), wrt, in, out, g, dst)
}

// SoftmaxLaplaceLML returns the Laplace approximation's log marginal likelihood log q(y | X) of a GP classifier
// with classes latent functions sharing the prior covariance k [N,N] and the softmax likelihood
// (SoftmaxLaplaceApprox): y [N,1] (or [N]) holds the labels 0..classes−1. Gradients (SoftmaxLaplaceGrad) flow to
// k; y is data. The op's hash holds the number of classes and the options but their Stats.
func SoftmaxLaplaceLML(classes int, o LaplaceOptions, k, y *G.Node) (*G.Node, error) {
	if classes < 2 {
		return nil, &ShapeError{Op: "SoftmaxLaplaceLML", Want: "at least 2 classes", Got: fmt.Sprint(classes)}
	}
	return apply(softmaxLaplaceK{classes: classes, o: o, st: &softmaxState{}}, k, y)
}
