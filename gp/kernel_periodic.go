package gp

import (
	"github.com/gpzoo/gpzoo/ops"
)

// KindPeriodic is the Spec kind of the periodic kernel.
const KindPeriodic = "kernel/periodic"

// PeriodicCov is the covariance function of the periodic kernel (ops.PeriodicCov: its features need ops' centred
// input pairs).
var PeriodicCov ops.CovFunc = ops.PeriodicCov{}

// NewPeriodic returns the periodic kernel (MacKay 1998) with period p (initial p: KernelConfig.Period,
// default DefaultPeriod); see ops.PeriodicCov for its exact form.
func NewPeriodic(c KernelConfig) (*Stationary, error) {
	return NewStationaryKernel(KindPeriodic, PeriodicCov, c, orDefault(c.Period, DefaultPeriod))
}

func init() {
	RegisterStationaryKind(KindPeriodic, NewPeriodic, KernelFamily{Name: "periodic", Doc: "periodic σ² exp(−2 Σ_d sin²(π(x_d − x′_d)/p)/ℓ_d²), trainable period p"})
}
