package graph

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// Graph methods for reparameterisation noise and the multiclass likelihood ops; semantics, shapes and gradients
// are those of the ops functions of the same names.

// StandardNormal returns a node of the given shape redrawn from N(0, 1) with rng at every Run (not
// differentiable). like only anchors the node in the graph (its value is ignored); every call gives a new node.
// rng must not be nil.
func (g *Graph) StandardNormal(like *Node, rng *rand.Rand, shape ...int) *Node {
	return g.un("StandardNormal", func(n *G.Node) (*G.Node, error) { return ops.StandardNormal(n, rng, shape...) }, like)
}

// RobustMaxVE returns E_q[log p(y_n|f_n)] [N] of the robust-max likelihood with the given ε, for means mu
// [N,K], variances v [N,K] and labels y [N,1] (0..K−1 as float64), by Gauss–Hermite quadrature with points nodes.
func (g *Graph) RobustMaxVE(mu, v, y *Node, eps float64, points int) *Node {
	return g.apply("RobustMaxVE", func(xs ...*G.Node) (*G.Node, error) {
		return ops.RobustMaxVE(xs[0], xs[1], xs[2], eps, points)
	}, mu, v, y)
}

// SoftmaxMCVE returns the Monte-Carlo E_q[log softmax(f_n)_{y_n}] [N] for means mu [N,K], variances v [N,K],
// labels y [N,1] and standard-normal noise eps [S·N,K] (row s·N + n is sample s of row n).
func (g *Graph) SoftmaxMCVE(mu, v, y, eps *Node) *Node {
	return g.apply("SoftmaxMCVE", func(xs ...*G.Node) (*G.Node, error) {
		return ops.SoftmaxMCVE(xs[0], xs[1], xs[2], xs[3])
	}, mu, v, y, eps)
}
