package gp

import (
	"math"

	"github.com/gpzoo/gpzoo/ops"
)

// KindMatern12 is the Spec kind of the Matérn-1/2 kernel.
const KindMatern12 = "kernel/matern12"

// Matern12Cov is the covariance function of the Matérn-1/2 kernel: k = σ² exp(−r), r = √max(r², ops.CovR2Floor);
// ∂K/∂r² = −K/(2r), taken as the subgradient 0 for r² < ops.CovR2Floor (|x − x'| has a kink at 0).
var Matern12Cov = &ops.Stationary{
	Label:  "Matern12",
	NeedR2: true,
	Profile: func(s2 float64, _ []float64, v []float64) {
		expBlocks(v, func(c, e []float64) {
			for i, r2 := range c {
				e[i] = -math.Sqrt(floorR2(r2))
			}
		}, func(c, e []float64) {
			for i := range c {
				c[i] = s2 * e[i]
			}
		})
	},
	Slope: func(_ []float64, r2, k, g, w []float64) {
		for i := range w {
			if r2[i] < ops.CovR2Floor {
				w[i] = 0
			} else {
				w[i] = -0.5 * g[i] * k[i] / math.Sqrt(r2[i])
			}
		}
	},
}

// NewMatern12 returns the Matérn-1/2 (exponential) kernel σ² exp(−r).
func NewMatern12(c KernelConfig) (*Stationary, error) {
	return NewStationaryKernel(KindMatern12, Matern12Cov, c, 0)
}

func init() {
	RegisterStationaryKind(KindMatern12, NewMatern12, KernelFamily{Name: "matern12", Doc: "Matérn-1/2 (exponential) σ² exp(−r)"})
}
