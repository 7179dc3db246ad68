package gp

import "github.com/gpzoo/gpzoo/graph"

// Layer is a (sparse) GP layer: D_out independent GPs sharing one kernel and one set of inducing inputs, with a
// variational posterior q and an optional mean function. Coupled SVGP, decoupled and orthogonally decoupled
// layers implement it; single-layer models and deep GPs compose it.
type Layer interface {
	// Predict returns the marginal means and variances [N,Dout] of q(f(x)) at x [N,Din] (mean function
	// included). Errors are recorded in x's graph.
	Predict(x *graph.Node) (mean, variance *graph.Node)
	// PredictFull returns the means [N,Dout] and one full covariance [N,N] per output.
	PredictFull(x *graph.Node) (mean *graph.Node, cov []*graph.Node)
	// KL returns KL[q(u) ‖ p(u)] summed over outputs, a scalar computed from the parameters alone (no cache).
	KL(g *graph.Graph) *graph.Node
	// InputDim and OutputDim return Din and Dout.
	InputDim() int
	OutputDim() int
	// Params returns every Param the layer reads (kernel, inducing inputs, q, mean function), without duplicates.
	Params() []*graph.Param
}

// UniqueParams returns ps without duplicates, in first-seen order.
func UniqueParams(ps ...[]*graph.Param) []*graph.Param {
	var out []*graph.Param
	seen := map[*graph.Param]bool{}
	for _, list := range ps {
		for _, p := range list {
			if p != nil && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
