package gp

import (
	"math"

	"github.com/gpzoo/gpzoo/ops"
)

// KindMatern32 is the Spec kind of the Matérn-3/2 kernel.
const KindMatern32 = "kernel/matern32"

// Matern32Cov is the covariance function of the Matérn-3/2 kernel: k = σ²(1 + √3 r) exp(−√3 r);
// ∂K/∂r² = −(3/2) K/(1 + √3 r).
var Matern32Cov = &ops.Stationary{
	Label:  "Matern32",
	NeedR2: true,
	Profile: func(s2 float64, _ []float64, v []float64) {
		expBlocks(v, func(c, e []float64) {
			for i, r2 := range c {
				r := math.Sqrt(3 * floorR2(r2))
				c[i], e[i] = r, -r
			}
		}, func(c, e []float64) {
			for i, r := range c {
				c[i] = s2 * (1 + r) * e[i]
			}
		})
	},
	Slope: func(_ []float64, r2, k, g, w []float64) {
		for i := range w {
			r := math.Sqrt(3 * floorR2(r2[i]))
			w[i] = -1.5 * g[i] * k[i] / (1 + r)
		}
	},
}

// NewMatern32 returns the Matérn-3/2 kernel σ²(1 + √3 r) exp(−√3 r).
func NewMatern32(c KernelConfig) (*Stationary, error) {
	return NewStationaryKernel(KindMatern32, Matern32Cov, c, 0)
}

func init() {
	RegisterStationaryKind(KindMatern32, NewMatern32, KernelFamily{Name: "matern32", Doc: "Matérn-3/2 σ²(1 + √3 r) exp(−√3 r)"})
}
