// Package likelihoods holds observation models p(y | f) for variational GP models: each implements
// gp.Likelihood, i.e. the variational expectations E_q[log p(y | f)] inside a graph and the predictive
// distribution of y in plain Go.
//
//   - Gaussian: closed-form expectations and predictive (MATH.md §4); the model SGPR and GPR share.
//   - Bernoulli: probit link, labels y ∈ {0, 1}; expectations by Gauss–Hermite quadrature, predictive in closed
//     form.
//   - StudentT: heavy-tailed regression with a scale σ and degrees of freedom ν (ν frozen by default);
//     expectations and predictive log density by quadrature.
//   - Poisson: counts with the exponential link (optionally times a bin size); closed-form expectations and
//     predictive moments, predictive log density by quadrature.
//   - RobustMax and Softmax: multiclass classification with K latent functions and one label column (see their
//     own documentation).
//   - Heteroscedastic: Gaussian noise whose log variance is a second latent function per column (2P latent
//     columns for P targets); closed-form expectations, predictive log density by quadrature over the log noise.
//
// Every quadrature goes through one fused op, ops.QuadratureVE (graph.Graph.QuadratureVE), which takes a plain-Go
// scalar log-likelihood (ops.ScalarLogLik) and computes the expectation and its gradients with respect to the
// latent means, variances and the likelihood's parameters. The scalar models are exported (GaussianLogLik,
// BernoulliLogLik, StudentTLogLik, PoissonLogLik) so tests and new likelihoods can reuse them.
//
// # Conventions
//
//   - Latent marginals q(f) = Π N(fMean[n,l], fVar[n,l]). For the scalar likelihoods (Gaussian, Bernoulli,
//     StudentT, Poisson) fMean, fVar and y are [N,L] with L = P, one latent function per observed column;
//     multiclass likelihoods take L = K latent columns and one label column. Variational expectations are
//     summed over a row's columns: a vector [N].
//   - Variances, not standard deviations, everywhere (fVar, the Gaussian σ², predictive variances). Negative
//     latent variances (round-off in Knn − AᵀA) are treated as 0.
//   - Bernoulli labels are 0 and 1 (not ±1). Poisson observations are counts 0, 1, 2, ….
//   - Parameters are graph.Params with the Positive transform and an explicit floor; constructors take a
//     Config whose zero fields mean the documented defaults (exported constants).
//   - Quadrature uses QuadPoints Gauss–Hermite nodes (default ops.DefaultQuadPoints).
//
// # Errors
//
// Constructors return errors wrapping gp.ErrConfig for invalid configurations. VariationalExpectations records
// shape errors (*ops.ShapeError) in the graph (see graph.Graph.Err); Compile reports them. Labels inside a graph
// are data bound at run time and are not validated there: pass valid labels. The plain-Go PredictMeanVar and
// PredictLogDensity validate their arguments (sizes, finiteness, label values) and return errors, never panic.
package likelihoods
