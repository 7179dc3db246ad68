package graph

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// Random row subsets redrawn at every Run (see ops/op_rowsample.go): one draw of indices (SampleIndices) can feed
// any number of gathers (TakeRows), so several tensors are subsampled consistently.

// SampleIndices returns a node [b] of b distinct indices in [0, m) (as float64), redrawn uniformly without
// replacement from rng at every Run; not differentiable. like only anchors the node in the graph (its value is
// ignored); every call gives a new, independent node. Requires rng ≠ nil and 1 ≤ b ≤ m.
func (g *Graph) SampleIndices(like *Node, rng *rand.Rand, m, b int) *Node {
	return g.un("SampleIndices", func(n *G.Node) (*G.Node, error) { return ops.SampleIndices(n, rng, m, b) }, like)
}

// TakeRows returns the rows idx [b] of x [m,d] → [b,d] (or the entries of x [m] → [b]); differentiable with
// respect to x (the gradient is scattered into the chosen rows), not idx. A Run fails if an index is not an
// integer in [0, m).
func (g *Graph) TakeRows(x, idx *Node) *Node { return g.bin("TakeRows", ops.TakeRows, x, idx) }

// SampleRows returns b rows of x [m,d] (or entries of x [m]) drawn uniformly without replacement from rng at
// every Run; the gradient flows into the drawn rows.
func (g *Graph) SampleRows(x *Node, rng *rand.Rand, b int) *Node {
	return g.un("SampleRows", func(n *G.Node) (*G.Node, error) { return ops.SampleRows(n, rng, b) }, x)
}

// SampleRowsPair returns the same b random rows of x [m,·] and y [m,·] (one draw per Run shared by both), e.g.
// a subset of basis points and their weights.
func (g *Graph) SampleRowsPair(x, y *Node, rng *rand.Rand, b int) (xs, ys *Node) {
	if g.check("SampleRowsPair", x, y) != nil {
		return &Node{g: g}, &Node{g: g}
	}
	sx, sy := x.Shape(), y.Shape()
	if len(sx) == 0 || len(sy) == 0 || sx[0] != sy[0] {
		err := &ops.ShapeError{Op: "SampleRowsPair", Want: "x and y with the same number of rows", Got: fmt.Sprintf("%v and %v", sx, sy)}
		return g.fail(err), g.fail(err)
	}
	idx := g.SampleIndices(x, rng, sx[0], b)
	return g.TakeRows(x, idx), g.TakeRows(y, idx)
}
