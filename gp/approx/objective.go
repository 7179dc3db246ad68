package approx

import (
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Objective is a model's approximate log marginal likelihood on its training data as a plain function of the raw
// (unconstrained) values of its trainable Params, flattened in Params order: what a sampler of the
// hyperparameters (NUTS over the Laplace or EP marginal) or an optimiser outside the graph calls. It runs the
// graph train.TrainLBFGS runs (the op's warm starts included). Not safe for concurrent use: run one Objective
// per goroutine, each over its own model (Clone).
type Objective struct {
	prog   *graph.Program
	params []*graph.Param
	dim    int
}

// Objective compiles m's objective on its training data. Errors: gp.ErrNoTrainingData, the graph's.
func (m *GP) Objective(o graph.Options) (*Objective, error) {
	x, y := m.cond.data.Data()
	if x == nil {
		return nil, gp.ErrNoTrainingData
	}
	n, d := x.Dims()
	g := graph.New(o)
	prog, err := g.Compile(m.Loss(g.Input("x", n, d), g.Input("y", n, 1)), nil)
	if err != nil {
		return nil, fmt.Errorf("approx: Objective: %w", err)
	}
	copyRows(prog.InputData("x"), x)
	copyRows(prog.InputData("y"), y)
	ob := &Objective{prog: prog, params: prog.Params()}
	for _, p := range ob.params {
		ob.dim += p.Size()
	}
	return ob, nil
}

// Dim returns the number of raw values (the trainable Params' sizes summed).
func (ob *Objective) Dim() int { return ob.dim }

// Params returns the trainable Params in the order of the vector.
func (ob *Objective) Params() []*graph.Param { return append([]*graph.Param(nil), ob.params...) }

// Point returns the Params' current raw values as a vector.
func (ob *Objective) Point() []float64 {
	v := make([]float64, 0, ob.dim)
	for _, p := range ob.params {
		v = append(v, p.Raw()...)
	}
	return v
}

// Eval writes theta (len Dim) into the Params' raw values and returns log q(y | X, θ), with its gradient in theta
// written into grad when grad is not nil (len Dim). The Params keep theta. Errors: a *ops.ShapeError for wrong
// lengths, the approximation's (an *ops.ConvergenceError, say), a *ops.NonFiniteError for a non-finite value.
func (ob *Objective) Eval(theta, grad []float64) (float64, error) {
	if len(theta) != ob.dim || (grad != nil && len(grad) != ob.dim) {
		return 0, &ops.ShapeError{Op: "approx.Objective.Eval", Want: fmt.Sprintf("theta and grad of %d values", ob.dim), Got: fmt.Sprint(len(theta), " and ", len(grad))}
	}
	if err := ops.CheckFinite("approx.Objective.Eval theta", theta, 1); err != nil {
		return 0, err
	}
	k := 0
	for _, p := range ob.params {
		k += copy(p.Raw(), theta[k:])
	}
	if err := ob.prog.Run(); err != nil {
		return 0, err
	}
	if grad != nil {
		k = 0
		for _, p := range ob.params {
			for _, g := range ob.prog.Grad(p) {
				grad[k] = -g
				k++
			}
		}
	}
	return -ob.prog.Loss(), nil
}

// Close releases the compiled program.
func (ob *Objective) Close() { ob.prog.Close() }

// Clone returns an independent copy of m: the same structure (rebuilt from its Spec), Params of the same raw
// values and trainability, and the same training data. Chains of a sampler run one clone each.
func (m *GP) Clone() (*GP, error) {
	s, err := m.Spec()
	if err != nil {
		return nil, err
	}
	v, err := gp.BuildSpec(s, gp.BuildOptions{})
	if err != nil {
		return nil, err
	}
	c, ok := v.(*GP)
	if !ok {
		return nil, fmt.Errorf("approx: Clone: rebuilt a %T", v)
	}
	src, dst := m.Params(), c.Params()
	if len(src) != len(dst) {
		return nil, fmt.Errorf("approx: Clone: %d Params rebuilt for %d", len(dst), len(src))
	}
	for i, p := range src {
		if err := dst[i].SetRaw(append([]float64(nil), p.Raw()...)); err != nil {
			return nil, fmt.Errorf("approx: Clone: %w", err)
		}
		dst[i].SetTrainable(p.Trainable())
	}
	x, y := m.cond.data.Data()
	if x != nil {
		if err := c.SetTrainingData(mat.DenseCopyOf(x), mat.DenseCopyOf(y)); err != nil {
			return nil, err
		}
	}
	return c, nil
}
