// Package gp holds gpzoo's core Gaussian-process vocabulary: covariance functions (kernels), mean functions,
// the Model interface the training loop fits, and exact GP regression, the reference every approximation is
// tested against.
//
// # Conventions
//
//   - Inputs are X [N,D] (rows are points); targets Y [N,P]. K(X1, X2) is [N,M]; KDiag(X) is [N].
//   - Hyperparameters are graph.Params: variances and length-scales are Positive (softplus with a floor).
//   - Kernels are differentiable with respect to their hyperparameters and their inputs (inducing inputs and
//     deep-GP layers need input gradients).
//   - Lower Cholesky factors everywhere (A = L·Lᵀ); no explicit inverse is ever formed.
//   - Literature names are kept: Kuu, Kuf, Kff, QMu, QSqrt.
//
// # Errors
//
// Constructors validate their configuration and return errors. Graph-building methods record errors in the
// graph (see package graph); Compile reports them.
package gp
