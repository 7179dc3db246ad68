// Package vbks is variational Bayesian kernel selection (Teng, Chen, Zhang & Low 2020, "Scalable Variational
// Bayesian Kernel Selection for Sparse Gaussian Process Regression"; MATH.md §12).
//
// A candidate set of kernels (gp/grammar expressions over SE, RQ, PER and LIN) gets one sparse GP each. The
// local ELBOs ℒ_i (eq. 9) are maximised independently, in parallel, by minibatch Adam on an SVGP with a Gaussian
// likelihood, all from the same inducing-input initialisation (Fit, local.go). The data arrive in growing
// fractions: after each fraction every candidate is warm-started from its previous fit, trained on the data seen
// so far, and its ℒ_i* is the whole-fraction ELBO. The kernel posterior q(g) = N(m_g, C_gC_gᵀ),
// p(k_i | g) = softmax(g)_i, maximises the global ELBO (eq. 8) by reparameterised stochastic gradients
// (FitPosterior, posterior.go), and q*(k_i) is its Monte Carlo average (eq. 13). After the last fraction the
// candidates are pruned to the top-ranked ones and q(g) is refitted over them; predictions average the pruned
// candidates' predictive distributions with weights q*(k_i) (Bayesian model averaging, eq. 15, bma.go).
//
// The synthetic data sets of the paper's Sec. 6.1 (App. E.1) come from Synthetic (synthetic.go).
package vbks
