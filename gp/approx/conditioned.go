package approx

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// conditioned is what an approximated model holds of its training data: the rows (one target column) and the
// latest approximation Q computed from them, kept with the Params' raw values it belongs to. Safe for concurrent
// use.
type conditioned[Q any] struct {
	data gp.TrainingSet

	mu  sync.Mutex // guards q and key
	q   *Q
	key [][]float64 // the Params' raw values q belongs to
}

// set copies x [N,D] and y [N,1] (both nil unset them) for op's model of input dimension d, and drops the kept
// approximation. Errors: as gp.CheckTrainingData, a *ops.ShapeError for more than one target column.
func (c *conditioned[Q]) set(op string, x, y *mat.Dense, d int) error {
	if y != nil {
		if _, p := y.Dims(); p != 1 {
			return &ops.ShapeError{Op: op + ".SetTrainingData", Want: "y [N,1] (one target column)", Got: fmt.Sprintf("%d columns", p)}
		}
	}
	c.mu.Lock()
	c.q, c.key = nil, nil
	c.mu.Unlock()
	return c.data.Set(op, x, y, d)
}

// approximation returns the kept approximation when the raw values of ps are those it belongs to, and otherwise
// compute's on the training data, which it keeps. Errors: gp.ErrNoTrainingData without data, compute's.
func (c *conditioned[Q]) approximation(ps []*graph.Param, compute func(x, y *mat.Dense) (*Q, error)) (*Q, error) {
	x, y := c.data.Data()
	if x == nil {
		return nil, gp.ErrNoTrainingData
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := graph.SnapshotRaw(ps)
	if c.q != nil && slices.EqualFunc(key, c.key, slices.Equal[[]float64]) {
		return c.q, nil
	}
	q, err := compute(x, y)
	if err != nil {
		return nil, err
	}
	c.q, c.key = q, key
	return q, nil
}
