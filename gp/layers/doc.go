// Package layers holds gpzoo's GP layer families, each implementing gp.Layer: given inputs [N,Din] a layer
// returns marginal means and variances [N,Dout] (full covariances through PredictFull), its KL divergence and
// its Params. Dout independent GPs share one kernel and one set of inducing inputs; q(u) is the shared
// gp.GaussianQ. Layers compose into single-layer models (package models) and deep GPs (package dgp).
//
// # Conventions
//
//   - Inducing inputs Z [M,Din] are a trainable Param unless frozen.
//   - Kuu = K(Z,Z) + jitter·I with the layer's Jitter (default DefaultJitter) added in exactly one place; the
//     Cholesky op retries with more jitter if needed and counts the retries.
//   - Whitened is the default (u = L_u v, q(v) = N(m, S), p(v) = N(0, I)); unwhitened is an option.
//
// # Errors
//
// Constructors validate their configuration and return errors; graph-building methods record errors in the graph.
package layers
