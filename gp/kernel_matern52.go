package gp

import (
	"math"

	"github.com/gpzoo/gpzoo/ops"
)

// KindMatern52 is the Spec kind of the Matérn-5/2 kernel.
const KindMatern52 = "kernel/matern52"

// Matern52Cov is the covariance function of the Matérn-5/2 kernel: k = σ²(1 + √5 r + 5r²/3) exp(−√5 r);
// ∂K/∂r² = −(5/6) K (1 + √5 r)/(1 + √5 r + 5r²/3).
var Matern52Cov = &ops.Stationary{
	Label:  "Matern52",
	NeedR2: true,
	Profile: func(s2 float64, _ []float64, v []float64) {
		expBlocks(v, func(c, e []float64) {
			for i, r2 := range c {
				r := math.Sqrt(5 * floorR2(r2))
				c[i], e[i] = r, -r
			}
		}, func(c, e []float64) {
			for i, r := range c {
				c[i] = s2 * (1 + r + r*r/3) * e[i]
			}
		})
	},
	Slope: func(_ []float64, r2, k, g, w []float64) {
		for i := range w {
			r := math.Sqrt(5 * floorR2(r2[i]))
			w[i] = -(5.0 / 6) * g[i] * k[i] * (1 + r) / (1 + r + r*r/3)
		}
	},
}

// NewMatern52 returns the Matérn-5/2 kernel σ²(1 + √5 r + 5r²/3) exp(−√5 r).
func NewMatern52(c KernelConfig) (*Stationary, error) {
	return NewStationaryKernel(KindMatern52, Matern52Cov, c, 0)
}

func init() {
	RegisterStationaryKind(KindMatern52, NewMatern52, KernelFamily{Name: "matern52", Doc: "Matérn-5/2 σ²(1 + √5 r + 5r²/3) exp(−√5 r)"})
}
