package gp

import "github.com/gpzoo/gpzoo/graph"

// Layer is a (sparse) GP layer: D_out GPs (independent, sharing one kernel and one set of inducing inputs, unless
// the layer is a CorrelatedLayer) with a variational posterior q and an optional mean function. Coupled SVGP,
// decoupled and orthogonally decoupled layers and the LMC implement it; single-layer models and deep GPs compose
// it.
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

// CorrelatedLayer is implemented by layers whose outputs are correlated a posteriori at each input, such as the
// linear model of coregionalisation f(x) = W g(x) + μ(x) over independent latent processes g (layers.LMC). Its
// Predict and PredictFull still give each output's marginals; the methods below give what the marginals miss.
// Consumers check for it with a type assertion and treat other layers as having independent outputs.
type CorrelatedLayer interface {
	Layer
	// PredictOutputCov returns the marginal means [N,Dout] and, at each row of x [N,Din], the Dout×Dout
	// covariance between the outputs, row-major as [N, Dout·Dout] (row n holds Σ_n's entries (p, p') at
	// p·Dout + p'; its diagonal is Predict's variances).
	PredictOutputCov(x *graph.Node) (mean, cov *graph.Node)
	// NoiseDim returns the number of standard normal numbers per row that Sample and SampleJoint read.
	NoiseDim() int
	// Sample returns f(x) [N,Dout] drawn at each row from q's joint distribution over the outputs at that row
	// (independently across rows, as a deep GP propagates samples) by reparameterisation, given eps [N,NoiseDim]
	// of independent standard normal numbers: differentiable in the parameters and in x.
	Sample(x, eps *graph.Node) *graph.Node
	// SampleJoint returns one draw of f(x) [N,Dout] from q's joint distribution across the rows and the outputs,
	// given eps [N,NoiseDim] of independent standard normal numbers (O(N²) memory, as PredictFull).
	SampleJoint(x, eps *graph.Node) *graph.Node
}
