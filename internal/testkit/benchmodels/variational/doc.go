// Package variational builds the variational models whose training step gpzoo's benchmarks time, compiled as
// benchmodels.Steps: the SVGP (BenchmarkSVGPStep, BenchmarkDecoupledScaling in gp/models) and the 2-layer
// deep GPs (BenchmarkDGPStep in gp/dgp); `gpzoo bench` times the same steps. All are trained by Adam with
// learning rate 10⁻³ on ToyRegression minibatches with a Gaussian likelihood of noise variance 0.1.
package variational
