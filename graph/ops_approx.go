package graph

import (
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// LaplaceLML returns the Laplace approximation's log marginal likelihood (a scalar) of an exact GP with prior
// N(m, K) and the scalar likelihood lik: k [N,N], m and y [N,1], theta lik's constrained parameters. Gradients flow
// to k, m and theta (R&W Algorithm 5.1). See ops.LaplaceLML.
func (g *Graph) LaplaceLML(lik ops.LaplaceLogLik, o ops.LaplaceOptions, k, m, y *Node, theta ...*Node) *Node {
	name := "LaplaceLML"
	if lik != nil {
		name += "(" + lik.Name() + ")"
	}
	return g.apply(name, func(xs ...*G.Node) (*G.Node, error) {
		return ops.LaplaceLML(lik, o, xs[0], xs[1], xs[2], xs[3:]...)
	}, append([]*Node{k, m, y}, theta...)...)
}

// EPLML returns EP's approximate log marginal likelihood (a scalar) of an exact GP with prior N(m, K) and the
// scalar likelihood lik: k [N,N], m and y [N,1], theta lik's constrained parameters. Gradients flow to k, m and
// theta (R&W §5.5.2). See ops.EPLML.
func (g *Graph) EPLML(lik ops.ScalarLogLik, o ops.EPOptions, k, m, y *Node, theta ...*Node) *Node {
	name := "EPLML"
	if lik != nil {
		name += "(" + lik.Name() + ")"
	}
	return g.apply(name, func(xs ...*G.Node) (*G.Node, error) {
		return ops.EPLML(lik, o, xs[0], xs[1], xs[2], xs[3:]...)
	}, append([]*Node{k, m, y}, theta...)...)
}

// SoftmaxLaplaceLML returns the Laplace approximation's log marginal likelihood (a scalar) of a GP classifier with
// classes latent functions sharing the prior covariance k [N,N] and the softmax likelihood, y [N,1] the labels
// 0..classes−1. Gradients flow to k (R&W §3.5 and §5.5.1). See ops.SoftmaxLaplaceLML.
func (g *Graph) SoftmaxLaplaceLML(classes int, o ops.LaplaceOptions, k, y *Node) *Node {
	return g.apply("SoftmaxLaplaceLML", func(xs ...*G.Node) (*G.Node, error) {
		return ops.SoftmaxLaplaceLML(classes, o, xs[0], xs[1])
	}, k, y)
}
