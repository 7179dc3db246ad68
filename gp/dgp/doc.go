// Package dgp composes gp.Layers into deep Gaussian processes: the doubly-stochastic variational inference of
// Salimbeni & Deisenroth (2017, seed 003's baseline; MATH.md §9), with any layer family of gp/layers at any depth
// (coupled SVGP, DECOUPLED with the Cheng & Boots or Havasi et al. parameterisations, HYBRID, ORTH), which gives
// the decoupled deep GP of Havasi, Hernández-Lobato & Murillo-Fuentes (2018; MATH.md §10) when the layers are
// decoupled.
//
// # Model
//
// A DGP is a list of layers and a likelihood. Training propagates S reparameterised samples of every minibatch
// row through the hidden layers, using only each layer's marginals, and evaluates the last layer's expectation
// in closed form (or by quadrature, as the likelihood does); see DGP.ELBO. Training noise is keyed per data row:
// ε of a row at a step comes from a counter-based generator keyed by (seed, layer, step, row) (ops.RowNormal;
// the graph inputs gp.RowsInput and gp.StepInput, which train.Train fills), so runs are reproducible and a
// batch's ELBO is exactly the sum of its parts', whoever computes them; FixedNoise and ZeroNoise make the
// objective deterministic for tests.
//
// # Construction
//
// Build creates the layers from a LayerFactory and does what Salimbeni & Deisenroth's initialisation does:
// fixed inner mean functions (identity, PCA projection when the width shrinks, zero padding when it grows; zero
// on the last layer), inducing inputs from k-means on the data pushed through those mean functions, and (in the
// factory, with InnerQScale and InnerKernel) nearly deterministic inner layers with a small white-noise kernel.
//
// # Prediction
//
// DGP is a gp.Predictor: Predict propagates S test samples and returns their mixture (the last layer's marginals
// and the likelihood's predictive for each sample as the Prediction's Components; FMean, FVar, YMean and YVar
// the mixture's moments, i.e. the moment-matched Gaussian's). LogDensity (or Score on a Prediction) reports
// both the mixture test log-likelihood (the DGP's predictive density, the papers' metric) and the
// moment-matched Gaussian's, labelled.
package dgp
