package gp

import (
	"github.com/gpzoo/gpzoo/ops"
)

// KindSquaredExp is the Spec kind of the squared-exponential kernel.
const KindSquaredExp = "kernel/se"

// SquaredExpCov is the covariance function of the squared-exponential kernel: k = σ² exp(−r²/2); ∂K/∂r² = −K/2
// needs no r².
var SquaredExpCov = &ops.Stationary{
	Label: "SquaredExp",
	Profile: func(s2 float64, _ []float64, v []float64) {
		ops.VecScale(v, -0.5, v) // exact
		ops.VecExp(v, v)
		ops.VecScale(v, s2, v)
	},
	Slope: func(_ []float64, _, k, g, w []float64) {
		ops.VecMulScale(w, -0.5, g, k)
	},
}

// NewSquaredExp returns the squared-exponential (RBF) kernel σ² exp(−r²/2), r² = Σ_d (x_d − x'_d)²/ℓ_d².
func NewSquaredExp(c KernelConfig) (*Stationary, error) {
	return NewStationaryKernel(KindSquaredExp, SquaredExpCov, c, 0)
}

func init() {
	RegisterStationaryKind(KindSquaredExp, NewSquaredExp, KernelFamily{Name: "se", Doc: "squared exponential (RBF) σ² exp(−r²/2), r² = Σ_d (x_d − x′_d)²/ℓ_d²"})
}
