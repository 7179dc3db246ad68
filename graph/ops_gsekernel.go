package graph

import (
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// Generalized SE-ARD basis covariances of Cheng & Boots (2017, App. C.1, eq. 19); see ops.GSECross and
// ops.GSEBasis for the formulas, the parametrisation l_{m,d} = s_d·c_{m,d} and the variance convention.

// GSECross returns the cross covariance [N,M] between data x [N,D] and bases z [M,D] with per-basis length-scale
// factors zls [M,D] (> 0), prior length-scales ls [D] (> 0) and a scalar variance.
func (g *Graph) GSECross(x, z, zls, ls, variance *Node) *Node {
	return g.apply("GSECross", func(xs ...*G.Node) (*G.Node, error) {
		return ops.GSECross(xs[0], xs[1], xs[2], xs[3], xs[4])
	}, x, z, zls, ls, variance)
}

// GSEBasis returns the covariance [M,M] among bases z [M,D] with per-basis length-scale factors zls [M,D] (> 0),
// prior length-scales ls [D] (> 0) and a scalar variance (its diagonal is the variance).
func (g *Graph) GSEBasis(z, zls, ls, variance *Node) *Node {
	return g.apply("GSEBasis", func(xs ...*G.Node) (*G.Node, error) {
		return ops.GSEBasis(xs[0], xs[1], xs[2], xs[3])
	}, z, zls, ls, variance)
}

// GSEPair returns the covariance [M1,M2] between bases z1 [M1,D] (factors zls1 [M1,D]) and z2 [M2,D] (factors
// zls2 [M2,D]) with prior length-scales ls [D] and a scalar variance.
func (g *Graph) GSEPair(z1, zls1, z2, zls2, ls, variance *Node) *Node {
	return g.apply("GSEPair", func(xs ...*G.Node) (*G.Node, error) {
		return ops.GSEPair(xs[0], xs[1], xs[2], xs[3], xs[4], xs[5])
	}, z1, zls1, z2, zls2, ls, variance)
}
