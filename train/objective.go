package train

import (
	"errors"
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Objective returns m's training objective Loss on the whole data set (x, y) at its current parameters: one forward pass of the
// graph Train differentiates, so it is the final objective of a full-batch fit (a minibatch loss is instead an
// estimate from its batch). A stochastic model (a deep GP's sampled layers, a Monte-Carlo likelihood) draws from
// its own generators, as a training step does; row-keyed noise (gp.RowsInput) sees rows 0..N−1 at step 0.
func Objective(m gp.Model, x, y *mat.Dense) (float64, error) {
	if m == nil || x == nil || y == nil {
		return 0, errors.New("train: Objective: nil model or data")
	}
	n, d := x.Dims()
	ny, p := y.Dims()
	if n != ny {
		return 0, &ops.ShapeError{Op: "train.Objective", Want: "x and y with the same number of rows", Got: fmt.Sprintf("%d and %d", n, ny)}
	}
	g := graph.New(graph.Options{})
	prog, err := g.CompileForward(map[string]*graph.Node{"loss": Loss(m, g.Input("x", n, d), g.Input("y", n, p))})
	if err != nil {
		return 0, fmt.Errorf("train: Objective: building the loss: %w", err)
	}
	defer prog.Close()
	mat.NewDense(n, d, prog.InputData("x")).Copy(x)
	mat.NewDense(n, p, prog.InputData("y")).Copy(y)
	if err := setWholeBatch(prog, n); err != nil {
		return 0, err
	}
	if err := prog.Run(); err != nil {
		return 0, fmt.Errorf("train: Objective: %w", err)
	}
	return prog.Output("loss")[0], nil
}

// Loss returns the objective Train and TrainLBFGS minimise for the batch (x, y): m.Loss(x, y) − Σ log p(c) over
// the priors of m's Params (gp.WithLogPrior: a maximum a posteriori fit), m.Loss itself when no Param has a prior.
func Loss(m gp.Model, x, y *graph.Node) *graph.Node { return gp.WithLogPrior(m.Loss(x, y), m.Params()) }
