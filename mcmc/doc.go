// Package mcmc samples a log density over ℝᵈ with the No-U-Turn Sampler and diagnoses the chains.
//
// The sampler is NUTS as Stan implements it (Hoffman & Gelman 2014, JMLR 15, Algorithm 6, with the multinomial
// sampling of trajectory states and the biased progressive sampling between subtrees of Betancourt 2017,
// "A Conceptual Introduction to Hamiltonian Monte Carlo", arXiv:1701.02434, §A.3.2, and Stan's additional
// no-U-turn checks across the merged subtrees, Stan 2.23+): a leapfrog integrator with a diagonal metric,
// trajectories doubled in a random direction until the generalised no-U-turn criterion fails, a divergence when
// the energy error exceeds 1000, and a maximum tree depth. Warmup adapts the step size by dual averaging
// (Hoffman & Gelman 2014, §3.2; Nesterov 2009) towards a target acceptance statistic, and the diagonal of the
// inverse metric to the draws' variances in Stan's windows (an initial fast buffer of 75 iterations, slow windows
// of 25, 50, 100, … iterations, a terminal fast buffer of 50; the variance shrunk towards 10⁻³ as
// (n/(n+5))·var + 10⁻³·5/(n+5); Stan Reference Manual, "HMC algorithm parameters").
//
// The target is any Density: log π(x) up to a constant and its gradient, over an unconstrained vector. Each chain
// has its own Density (Densities need not be safe for concurrent use) and its own seeded generator
// (math/rand/v2's PCG, stream = the chain's index), and chains run in parallel: the draws depend on the seed
// alone, not on GOMAXPROCS or the scheduling.
//
// The diagnostics are those of Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021 ("Rank-normalization,
// folding, and localization: an improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2)): split
// R̂ of the rank-normalised draws and of the folded ones (the larger), bulk and tail effective sample sizes, and
// Monte-Carlo standard errors of the mean and of the standard deviation.
package mcmc
