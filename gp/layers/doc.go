// Package layers holds gpzoo's GP layer families, each implementing gp.Layer:
//
//   - SVGP: the coupled sparse variational GP (Hensman et al. 2013, 2015), whitened or not;
//   - Decoupled: DECOUPLED bases, mean bases α with weights a and covariance bases β with B = L_B L_Bᵀ
//     (Cheng & Boots 2017, eqs. 7–9), with an unbiased minibatch estimate of the mean-basis KL term;
//   - Hybrid: a coupled SVGP on β plus extra mean bases γ (Cheng & Boots App. A.3);
//   - Orth: orthogonally decoupled bases (Salimbeni et al. 2018, eq. 12); ORTHNAT is train.NatGrad on
//     Orth.BetaQ() with Adam on the rest;
//   - LMC: correlated outputs, a linear model of coregionalisation f = W g + μ over latent layers g (typically
//     SVGPs, each with its own kernel and Z or sharing them), or separate-independent outputs (W = I).
//
// Given inputs [N,Din] a layer
// returns marginal means and variances [N,Dout] (full covariances through PredictFull), its KL divergence and
// its Params. Dout independent GPs share one kernel and one set of inducing inputs; q(u) is the shared
// gp.GaussianQ. Layers compose into single-layer models (package models) and deep GPs (package dgp).
//
// # Conventions
//
//   - Inducing inputs Z [M,Din] are a trainable Param unless frozen.
//   - The SVGP layer's Kuu = K(Z,Z) is factorised as is by default (gp.JitterOnFailure): the graph's Cholesky
//     adds jitter only when that factorisation fails, escalating, and counts the retries (graph.Program's
//     CholeskyStats). A fixed SVGPConfig.Jitter > 0 (gp.JitterFixed; DefaultJitter = 1e-6 was the default before
//     issue 31, and model files that store it keep it) adds jitter·I to Kuu in exactly one place (SVGP.Lu). The
//     Decoupled layer keeps a fixed jitter (default DefaultJitter) on K_α and K_β wherever they enter.
//   - Whitened is the default (u = L_u v, q(v) = N(m, S), p(v) = N(0, I)); unwhitened is an option.
//
// # Errors
//
// Constructors validate their configuration and return errors; graph-building methods record errors in the graph.
package layers
