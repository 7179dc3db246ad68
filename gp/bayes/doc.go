// Package bayes is fully Bayesian inference over a gpzoo model's Params: the No-U-Turn Sampler (package mcmc)
// over their unconstrained values, and the posterior predictive as a mixture over the draws.
//
// The target of a model m with training data (x, y) is its log posterior density over the raw (unconstrained)
// values r of the sampled Params (the trainable ones), whose constrained values are c = t(r):
//
//	log π(r) = −m.Loss(x, y) + Σ log p(c) + Σ log t′(r)
//
// The loss is −log p(y | θ) for an exact GP (GPR) and −(Titsias' collapsed bound) for SGPR; for GPMC it is the
// joint −log p(y, v | θ) of the hyperparameters and the whitened latent values v, sampled together. Every sampled
// Param needs a prior (gp.Prior, on the constrained value), but for the latent Params whose prior is in the
// model's loss (gp.LatentHolder); the change of variables Σ log t′(r) (graph.Graph.LogJacobian: log σ(r) for the
// softplus of positive Params) makes the draws of c follow the posterior the prior defines (Stan Reference
// Manual, "Variable transforms"). Any gp.Model that describes itself can be sampled this way: a Laplace or EP
// approximation of log p(y | θ) as the loss of a model whose Predict is its predictive given θ is sampled by
// Sample without change (see Model).
//
// Each chain samples its own copy of the model (rebuilt from its Spec), from the model's values perturbed
// uniformly by ±InitJitter in the raw space (chains that start apart are what R̂ compares), with its own seeded
// generator; the chains run in parallel and give the same draws whatever GOMAXPROCS.
//
// A Posterior is the fitted result: the model and K draws of its sampled Params, a gp.Predictor whose prediction
// is the equal-weight mixture of the model's predictions at the draws (gp.Prediction.Components), and a model of
// its own (kind model/posterior) that model files save and load, so `gpzoo predict` and `gpzoo serve` serve it
// like any other.
package bayes
