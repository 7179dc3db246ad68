package gp

import "github.com/gpzoo/gpzoo/graph"

// Model is anything the training loop can fit: it adds its loss for a batch to a graph.
type Model interface {
	// Loss returns the scalar training loss for the batch x [B,D], y [B,P], already scaled to the whole data
	// set (for variational models: −ELBO with the likelihood term scaled by NumData/B; for the exact GP:
	// −log p(y), with B = N). Errors are recorded in x's Graph.
	Loss(x, y *graph.Node) *graph.Node
	// Params returns every Param the loss reads (trainable or frozen), without duplicates.
	Params() []*graph.Param
}
