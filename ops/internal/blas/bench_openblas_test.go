//go:build openblas

package blas

import "gonum.org/v1/netlib/blas/netlib"

// With the openblas build tag the benchmarks also time OpenBLAS's routines (through gonum.org/v1/netlib); its
// Dpotrf is timed by gpzoo bench, whose openblas build calls LAPACKE.
func init() { impls["openblas"] = netlib.Implementation{} }
