// Package layers holds gpzoo's GP layer families, each implementing gp.Layer:
//
//   - SVGP: the coupled sparse variational GP (Hensman et al. 2013, 2015), whitened or not;
//   - Decoupled: DECOUPLED bases, mean bases α with weights a and covariance bases β with B = L_B L_Bᵀ
//     (Cheng & Boots 2017, eqs. 7–9), with an unbiased minibatch estimate of the mean-basis KL term;
//   - Hybrid: a coupled SVGP on β plus extra mean bases γ (Cheng & Boots App. A.3);
//   - Orth: orthogonally decoupled bases (Salimbeni et al. 2018, eq. 12); ORTHNAT is train.NatGrad on
//     Orth.BetaQ() with Adam on the rest.
//
// Given inputs [N,Din] a layer
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
