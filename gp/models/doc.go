// Package models holds gpzoo's single-layer variational models: SVGP (any gp.Layer with any gp.Likelihood,
// minibatch ELBO) and SGPR (Titsias' collapsed bound, Gaussian likelihood), with chunked prediction of bounded
// memory and predictive samples.
//
// # Conventions
//
//   - Loss is −ELBO for the whole data set: the likelihood term of a batch of B rows is scaled by NumData/B
//     (NumData is required and validated; never inferred).
//   - Prediction runs in chunks of PredictOptions.Chunk test rows; the last chunk is zero-padded (static shapes).
//
// # Errors
//
// Constructors validate their configuration; graph-building methods record errors in the graph; prediction
// functions validate data (finite, shapes) and return errors.
package models
