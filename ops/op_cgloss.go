package ops

import (
	"fmt"
	"io"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CGLoss returns the node of an exact GP's negative log marginal likelihood estimated by s (CGSolver.Evaluate):
// operands x [N,D] (the training inputs), r [N,P] (the residual targets y − m(X)), noise (σ², a scalar), step (a
// scalar: the probes' key) and the kernel's raw hyperparameters hyper, one node per hyperparameter in the order of
// s.K.HyperSizes() (any shapes of those sizes). It is differentiable in r, noise and hyper: the gradients are
// computed with the loss, in the forward pass, and scaled by the upstream gradient.
func CGLoss(s *CGSolver, x, r, noise, step *G.Node, hyper ...*G.Node) (*G.Node, error) {
	if s == nil {
		return nil, fmt.Errorf("ops: CGLoss: nil solver")
	}
	return apply(&cgLossK{s: s, nh: len(hyper)}, append([]*G.Node{x, r, noise, step}, hyper...)...)
}

// cgLossK is the kernel of CGLoss: operands (x, r, noise, step, hyper...).
type cgLossK struct {
	s  *CGSolver
	nh int
	ev *CGEval // the latest forward run's evaluation (shared by the gradient ops through the joint cache)
}

func (k *cgLossK) name() string { return "CGLoss" }

// params writes the solver's identity (two solvers never merge: each keeps its own warm start and kernel) and
// every setting that changes the estimate.
func (k *cgLossK) params(w io.Writer) {
	c := k.s.cfg
	fmt.Fprintf(w, "solver=%d,tol=%v,iters=%d..%d,probes=%d,%s,lanczos=%d,rank=%d,from=%d,seed=%d,strict=%t",
		k.s.id, c.Tol, c.MinIters, c.MaxIters, c.Probes, c.Probe, c.Lanczos, c.PrecondRank, c.PrecondMinRows, c.Seed, c.Strict)
}
func (k *cgLossK) arity() int { return 4 + k.nh }
func (k *cgLossK) diff() []bool {
	d := make([]bool, k.arity())
	for i := range d {
		d[i] = i != 0 && i != 3
	}
	return d
}

func (k *cgLossK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 2 || len(in[1]) != 2 || in[0][0] != in[1][0] || in[0][0] <= 0 || in[0][1] <= 0 || in[1][1] <= 0 {
		return nil, &ShapeError{Op: "CGLoss", Want: "x [N,D] and r [N,P]", Got: fmt.Sprintf("%v and %v", in[0], in[1])}
	}
	if in[2].TotalSize() != 1 || in[3].TotalSize() != 1 {
		return nil, &ShapeError{Op: "CGLoss", Want: "scalar noise and step", Got: fmt.Sprintf("%v and %v", in[2], in[3])}
	}
	sizes := k.s.K.HyperSizes()
	if len(in)-4 != len(sizes) {
		return nil, &ShapeError{Op: "CGLoss", Want: fmt.Sprintf("%d hyperparameters", len(sizes)), Got: fmt.Sprint(len(in) - 4)}
	}
	for j, s := range in[4:] {
		if s.TotalSize() != sizes[j] {
			return nil, &ShapeError{Op: "CGLoss", Want: fmt.Sprintf("hyperparameter %d with %d values", j, sizes[j]), Got: fmt.Sprint(s)}
		}
	}
	return tensor.ScalarShape(), nil
}

func (k *cgLossK) forward(in []arg, out []float64) error {
	step := in[3].scalar()
	if !(step >= 0) || step != math.Trunc(step) || step > 1<<53 {
		return &ShapeError{Op: "CGLoss", Want: "a step that is an integer ≥ 0", Got: fmt.Sprint(step)}
	}
	hyper := make([][]float64, k.nh)
	for j := range hyper {
		hyper[j] = in[4+j].data
	}
	pr := CGProblem{X: in[0].data, N: in[0].rows(), D: in[0].cols(), Hyper: hyper, Noise: in[2].scalar()}
	ev, err := k.s.Evaluate(pr, in[1].data, in[1].cols(), uint64(step))
	if err != nil {
		return err
	}
	k.ev = ev
	out[0] = ev.Loss
	return nil
}

func (k *cgLossK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	dsts := make([][]float64, k.arity())
	dsts[wrt] = dst
	return k.backwardAll(in, out, g, dsts)
}

// backwardAll hands out the forward run's gradients times the upstream gradient.
func (k *cgLossK) backwardAll(in []arg, _ arg, g arg, dst [][]float64) error {
	if k.ev == nil {
		return fmt.Errorf("ops: CGLoss: gradient before a forward run")
	}
	gs := g.scalar()
	scaled := func(d, src []float64) {
		for i, v := range src {
			d[i] = gs * v
		}
	}
	if d := dst[1]; d != nil {
		scaled(d, k.ev.Alpha)
	}
	if d := dst[2]; d != nil {
		d[0] = gs * k.ev.GradNoise
	}
	for j := 0; j < k.nh; j++ {
		if d := dst[4+j]; d != nil {
			scaled(d, k.ev.GradHyper[j])
		}
	}
	return nil
}
