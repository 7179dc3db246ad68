package cg

import "github.com/gpzoo/gpzoo/ops"

// DirectCGMissed exposes to the package's external tests the reason a prediction cache is direct when α's CG
// solve missed its tolerance (GPR.CacheDirect).
const DirectCGMissed = directCGMissed

// NewScaled exposes the replicates' scaled operator SKS (S = diag(s)) to the package's external tests.
func NewScaled(base ops.KernelOperator, s []float64) ops.KernelOperator {
	return &scaled{base: base, s: s}
}
