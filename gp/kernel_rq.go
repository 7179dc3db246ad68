package gp

import (
	"math"

	"github.com/gpzoo/gpzoo/ops"
)

// KindRationalQuadratic is the Spec kind of the rational-quadratic kernel.
const KindRationalQuadratic = "kernel/rq"

// RationalQuadraticCov is the covariance function of the rational-quadratic kernel, with one extra
// hyperparameter α: k = σ²(1 + r²/(2α))^(−α); ∂K/∂r² = −K/(2(1 + r²/(2α))), ∂K/∂α = K (u/(1+u) − log1p(u)),
// u = r²/(2α).
var RationalQuadraticCov = &ops.Stationary{
	Label:  "RationalQuadratic",
	Extra:  []ops.CovHyper{{Name: "alpha"}},
	NeedR2: true,
	Profile: func(s2 float64, x []float64, v []float64) {
		alpha := x[0]
		expBlocks(v, func(c, e []float64) {
			for i, r2 := range c {
				e[i] = -alpha * math.Log1p(r2/(2*alpha))
			}
		}, func(c, e []float64) {
			for i := range c {
				c[i] = s2 * e[i]
			}
		})
	},
	Slope: func(x []float64, r2, k, g, w []float64) {
		alpha := x[0]
		for i := range w {
			w[i] = -0.5 * g[i] * k[i] / (1 + r2[i]/(2*alpha))
		}
	},
	ExtraGrad: func(_ int, x []float64, r2, k, g []float64) float64 {
		alpha, sum := x[0], 0.0
		for i, v := range r2 {
			u := v / (2 * alpha)
			sum += g[i] * k[i] * (u/(1+u) - math.Log1p(u))
		}
		return sum
	},
}

// NewRationalQuadratic returns σ²(1 + r²/(2α))^(−α) (initial α: KernelConfig.Alpha, default DefaultAlpha).
func NewRationalQuadratic(c KernelConfig) (*Stationary, error) {
	return NewStationaryKernel(KindRationalQuadratic, RationalQuadraticCov, c, orDefault(c.Alpha, DefaultAlpha))
}

func init() {
	RegisterStationaryKind(KindRationalQuadratic, NewRationalQuadratic, KernelFamily{Name: "rq", Doc: "rational quadratic σ²(1 + r²/(2α))^(−α), trainable shape α"})
}
