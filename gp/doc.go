// Package gp holds gpzoo's core Gaussian-process vocabulary: covariance functions (kernels), mean functions,
// the Model interface the training loop fits, and exact GP regression, the reference every approximation is
// tested against.
//
// Predictor is the one prediction contract: every model family (GPR, SGPR, SVGP, deep GPs, ADVGP, the VBKS
// average) implements Predict(x, PredictOptions) (*Prediction, error) with the latent and observed marginals,
// class probabilities, and on request full covariances and joint draws; model files, the zoo and the CLI
// predict through it only.
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
//
// # Adding a likelihood
//
// A likelihood takes one file (the built-ins: gp/likelihoods/poisson.go and its neighbours): the type
// implementing Likelihood and Describer, its Spec kind constant, its Spec config struct and the Builder that
// rebuilds it, and one init that calls RegisterKind and then RegisterLikelihood with its LikelihoodFamily (the
// name users type, a one-line Doc, whether its targets are class labels or kept in their own units, an optional
// CheckTarget, and New). Model files, `gpzoo train --likelihood` (its help and validation) and zoo.TrainCustom
// then offer it; the CLI's test trains and predicts with every registered family. A package outside the module
// registers the same way, and every program that imports it offers its likelihood: examples/customlikelihood
// does it for a Laplace likelihood, which passes gptest.CheckLikelihood like every built-in.
//
// # Adding a kernel
//
// A kernel takes one file (the built-ins: gp/kernel_matern32.go and its neighbours): its covariance function
// (an ops.Stationary value — the profile σ²φ(r²) and the slope ∂K/∂r² on slices — or any ops.CovFunc for a
// non-stationary one), its Spec kind constant, its constructor, and one init that registers the kind and the
// KernelFamily users name (RegisterStationaryKind does both for a stationary kernel; otherwise RegisterKind,
// then RegisterKernel). It then gets the fused CovMatrix/CovDiag op, model files rebuild it, gp/grammar parses
// its name as a leaf, `gpzoo train --kernel` offers it (the CLI's test trains and predicts with every registered
// family), and TestKernelFamiliesConform runs gptest.CheckKernel and the Spec round trip on it. A package outside
// the module registers the same way: examples/customkernel does it for a polynomial kernel σ²(xᵀx'/ℓ² + c)^d,
// an ops.CovFunc with analytic gradients whose Name carries the degree d.
package gp
