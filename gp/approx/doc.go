// Package approx holds exact Gaussian processes with non-Gaussian likelihoods, fitted by the Laplace
// approximation or by expectation propagation (Rasmussen & Williams 2006, "R&W", chapters 3 and 5): the family
// users reach as `gpzoo train --model gpr --likelihood bernoulli --inference laplace|ep`.
//
// A GP holds a kernel, an optional mean function, a likelihood with a scalar model (Scalar: Bernoulli with the
// probit or logit link, Poisson, Student-t) and its training data. Its Loss is the negative approximate log
// marginal likelihood, one graph op (ops.LaplaceLML, R&W Algorithms 3.1 and 5.1; ops.EPLML, Algorithms 3.5–3.6
// and §5.5.2) whose analytic gradient reaches every hyperparameter through the covariance op, so train.TrainLBFGS
// fits it as it fits GPR. It predicts (gp.Predictor) by R&W's Algorithms 3.2 and 3.6, class probabilities and
// counts through the likelihood's own predictive, and is saved in model files like any family (Spec kind
// KindGP; its training data through gp.DataHolder).
//
// Multiclass is the exact GP classifier over C classes with the softmax likelihood (a SoftmaxLink), by the Laplace
// approximation of R&W §3.5 (Algorithms 3.3 and 3.4; ops.SoftmaxLaplaceLML): C latent functions sharing the kernel,
// one label column, predictions with each test row's C × C latent covariance (Spec kind KindMulticlass).
//
// # Sampling the hyperparameters
//
// Objective exposes the approximate log marginal likelihood and its gradient in the raw (unconstrained) values of
// the trainable Params as a plain function of a vector, for samplers (NUTS over the Laplace or EP marginal) and
// optimisers outside the graph. A Program is not safe for concurrent use: each chain takes its own Clone.
//
// # Conventions
//
// GP: one latent function and one target column (y [N,1]). The prior mean is m(X) (zero without a mean function).
// Negative site precisions (a Student-t likelihood's W, EP sites) are handled by the factorisation in
// ops.GaussApprox; convergence failures are *ops.ConvergenceError.
package approx
