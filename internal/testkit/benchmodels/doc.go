// Package benchmodels builds the models whose training step gpzoo's benchmarks time, compiled and ready to step
// (Step), from seeded synthetic data: the exact GP here (GPR), the SVGP and the 2-layer deep GPs in
// benchmodels/variational. The benchmarks of packages gp (BenchmarkGPRStep), gp/models (BenchmarkSVGPStep,
// BenchmarkDecoupledScaling) and gp/dgp (BenchmarkDGPStep) and `gpzoo bench` all build their models here, so
// they time the same work; each Step carries its flop count (Flops, from the formulas of flops.go and
// variational/flops.go), so that they report the same GFLOP/s. The variational models live apart because their
// packages register model, layer and likelihood kinds in init, which package gp's tests (importing this
// package) must not see.
package benchmodels
