package gp

import "github.com/gpzoo/gpzoo/graph"

// Model is anything the training loop can fit: it adds its loss for a batch to a graph.
type Model interface {
	// Loss returns the scalar training loss for the batch x [B,D], y [B,P], already scaled to the whole data
	// set (for variational models: −ELBO with the likelihood term scaled by NumData/B; for the exact GP:
	// −log p(y), with B = N). Errors are recorded in x's Graph.
	//
	// A model whose loss draws Monte-Carlo noise per data row (a deep GP) may declare the graph inputs RowsInput
	// and StepInput and key its draws by them; the training loop fills them when the compiled program has them.
	Loss(x, y *graph.Node) *graph.Node
	// Params returns every Param the loss reads (trainable or frozen), without duplicates.
	Params() []*graph.Param
}

// The optional graph inputs of a Model's loss that name what a batch is, so that per-row noise is keyed by the
// row and the step rather than by who computes them (train.Train fills them; other callers of Loss should too,
// else every row reads as row 0 at step 0):
const (
	// RowsInput [B]: the global indices of the batch's rows in the training set (float64 integers ≥ 0).
	RowsInput = "rows"
	// StepInput (a scalar): the 0-based training step (an integer ≥ 0).
	StepInput = "step"
)

// RowSum is a Model whose loss is a sum over the data rows plus terms that read no data (the −ELBO of the
// variational families: the expected log-likelihood of each row, and the KL divergences), so that shards of the
// rows can be summed on several machines (package cluster):
//
//	Loss(x, y) = (NumData/B)·DataLoss(x, y) + GlobalLoss(g)   (up to rounding)
//
// for a batch x [B,D], y [B,P]. A parameter server adds the workers' DataLoss gradients over their shards,
// scales the sum to the data set and adds GlobalLoss's.
type RowSum interface {
	Model
	// DataLoss returns Σ_b ℓ_b over the batch's rows, unscaled: ℓ_b = −E_q[log p(y_b | f_b)] (a deep GP's
	// averaged over its S samples). A Monte-Carlo data term keys its noise as Loss does (RowsInput, StepInput).
	DataLoss(x, y *graph.Node) *graph.Node
	// GlobalLoss returns the terms that read no data, added to g (the KL divergences of q(u); a model whose
	// global term is applied otherwise, as ADVGP's proximal step, returns a zero scalar).
	GlobalLoss(g *graph.Graph) *graph.Node
	// DataSize is NumData, the number of training rows the loss is scaled to.
	DataSize() int
}

// LatentHolder is implemented by models whose Params include latent values with their prior inside the model's
// own Loss (GPMC's whitened values v ~ N(0, I), package gp/models): a sampler of the Params (package gp/bayes)
// needs no Param prior for them, where every other sampled Param needs one.
type LatentHolder interface {
	// LatentParams returns those Params.
	LatentParams() []*graph.Param
}
