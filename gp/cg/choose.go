package cg

import "fmt"

// DefaultMemory is the default memory budget of an exact GP, 4 GiB: the Cholesky solver is chosen while its fit
// takes at most that much (CholeskyBytes: up to 6,192 rows), and the CG solver keeps the kernel matrix whole while
// it fits (n²·8 bytes: up to 23,170 rows), recomputing it by blocks at every product beyond.
const DefaultMemory int64 = 4 << 30

// CholeskyMatrices is the peak memory of a Cholesky exact-GP fit (gp.GPR by L-BFGS, as gpzoo train runs it) in
// n×n float64 matrices: measured as the peak resident set of `gpzoo train --model gpr` on 3,000 training rows of
// 8 inputs, 970 MB = 13.5·8n² bytes (K, its factor, the backward pass's matrices, the graph's buffers and the
// garbage collector's headroom), rounded up.
const CholeskyMatrices = 14

// CholeskyBytes returns the estimated peak memory in bytes of a Cholesky exact-GP fit on n rows.
func CholeskyBytes(n int) int64 { return CholeskyMatrices * 8 * int64(n) * int64(n) }

// Solver names of an exact GP.
const (
	SolverAuto     = "auto"
	SolverCholesky = "cholesky"
	SolverCG       = "cg"
)

// ChooseSolver returns the solver of an exact GP on n training rows, given the solver asked for (SolverAuto,
// SolverCholesky or SolverCG; "" means auto) and the memory budget in bytes (0: DefaultMemory), and says why:
// auto takes Cholesky while CholeskyBytes(n) fits the budget, conjugate gradients beyond.
func ChooseSolver(asked string, n int, memory int64) (solver, reason string, err error) {
	if memory == 0 {
		memory = DefaultMemory
	}
	gib := func(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }
	need := CholeskyBytes(n)
	switch asked {
	case SolverCholesky:
		return SolverCholesky, fmt.Sprintf("asked for (about %s on %d rows)", gib(need), n), nil
	case SolverCG:
		return SolverCG, "asked for", nil
	case "", SolverAuto:
		if memory > 0 && need <= memory {
			return SolverCholesky, fmt.Sprintf("%d rows: a Cholesky fit takes about %s, within the memory budget of %s", n, gib(need), gib(memory)), nil
		}
		return SolverCG, fmt.Sprintf("%d rows: a Cholesky fit would take about %s, beyond the memory budget of %s", n, gib(need), gib(memory)), nil
	}
	return "", "", fmt.Errorf("unknown exact-GP solver %q (want %s, %s or %s)", asked, SolverAuto, SolverCholesky, SolverCG)
}
