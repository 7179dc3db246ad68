package benchmodels

import (
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Update is an optimiser's step on params from their gradients at step i (train.Adam's Step has this shape).
type Update func(i int, params []*graph.Param, grads [][]float64) error

// Step is a benchmark model compiled for timing: each Run is one training step.
type Step struct {
	prog   *graph.Program
	params []*graph.Param
	grads  [][]float64
	update Update // nil: Run computes the loss and the gradients only
	runs   int
	// Flops is the step's floating-point operation count (leading terms; 0 when not counted), for GFLOP/s.
	Flops float64
}

// NewStep compiles model's loss on the batch x, y; each Run then computes the loss and its gradients and, when
// update is not nil, applies update to the trainable Params: with an optimiser, the work per step of
// train.Train minus the batch gather.
func NewStep(model gp.Model, x, y *mat.Dense, update Update) (*Step, error) {
	n, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(model.Loss(g.Input("x", n, d), g.Input("y", n, p)), nil)
	if err != nil {
		return nil, err
	}
	copy(prog.InputData("x"), mat.DenseCopyOf(x).RawMatrix().Data)
	copy(prog.InputData("y"), mat.DenseCopyOf(y).RawMatrix().Data)
	s := &Step{prog: prog, update: update}
	if update != nil {
		s.params = prog.Params()
		s.grads = make([][]float64, len(s.params))
	}
	return s, nil
}

// Run does one training step: the forward and backward pass and, with an optimiser, its update.
func (s *Step) Run() error {
	if err := s.prog.Run(); err != nil {
		return err
	}
	if s.update != nil {
		for k, p := range s.params {
			s.grads[k] = s.prog.Grad(p)
		}
		if err := s.update(s.runs, s.params, s.grads); err != nil {
			return err
		}
	}
	s.runs++
	return nil
}

// Close releases the compiled program.
func (s *Step) Close() error { return s.prog.Close() }
