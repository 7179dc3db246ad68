package graph

import (
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// QuadratureVE returns the variational expectations [N] Σ_l E_{N(f; mu[n,l], v[n,l])}[log p(y[n,l] | f, θ)] of
// the scalar likelihood lik by Gauss–Hermite quadrature with points nodes: mu, v, y [N,L]; theta are scalar
// nodes, lik's constrained parameters in its order. Gradients flow to mu, v and theta, not y. See
// ops.QuadratureVE.
func (g *Graph) QuadratureVE(lik ops.ScalarLogLik, points int, mu, v, y *Node, theta ...*Node) *Node {
	name := "QuadratureVE"
	if lik != nil {
		name += "(" + lik.Name() + ")"
	}
	return g.apply(name, func(xs ...*G.Node) (*G.Node, error) {
		return ops.QuadratureVE(lik, points, xs[0], xs[1], xs[2], xs[3:]...)
	}, append([]*Node{mu, v, y}, theta...)...)
}

// LogGamma returns log|Γ(x)| elementwise (log y! = LogGamma(y + 1)), with the digamma derivative.
func (g *Graph) LogGamma(x *Node) *Node { return g.un("LogGamma", ops.LogGamma, x) }
