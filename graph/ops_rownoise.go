package graph

import (
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// RowNormal returns [copies·B, width] N(0, 1) draws for the B data rows whose global indices rows [B] holds
// (float64 integers ≥ 0) at the training step step (a scalar integer ≥ 0): output row c·B + b holds copy c of
// row rows[b]'s numbers, a deterministic function of (key, step, rows[b]) only, whatever the other rows or the
// process computing them (ops.RowNormal: ChaCha8 keyed per row). Not differentiable; a bad index fails the run
// with a *ops.ShapeError.
func (g *Graph) RowNormal(rows, step *Node, key ops.RowKey, width, copies int) *Node {
	return g.bin("RowNormal", func(r, s *G.Node) (*G.Node, error) { return ops.RowNormal(r, s, key, width, copies) }, rows, step)
}
