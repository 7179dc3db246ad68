package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestPeriodicCov(t *testing.T) {
	t.Parallel()
	if gp.PeriodicCov.Name() != "Periodic" {
		t.Errorf("Name() = %q", gp.PeriodicCov.Name())
	}
	checkCov(t, gp.PeriodicCov, func(a, b []float64, h [][]float64) float64 {
		sigma2, ell, p := h[0][0], h[1], h[2][0]
		s := 0.0
		for q := range a {
			sn := math.Sin(math.Pi*math.Abs(a[q]-b[q])/p) / ell[q]
			s += sn * sn
		}
		return sigma2 * math.Exp(-2*s)
	})
}

func init() {
	per := func(kc kernelConfigFunc, name string) (gp.Kernel, error) {
		return gp.NewPeriodic(kc(name, 3, func(c *gp.KernelConfig) { c.Period = 2.9 }))
	}
	addKernelTest(kernelTest{
		family: "periodic",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{{"Periodic", func() (gp.Kernel, error) {
				return gp.NewPeriodic(gp.KernelConfig{InputDim: d, Variance: 0.8, Lengthscales: ard, Period: 1.7})
			}}}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewPeriodic(gp.KernelConfig{InputDim: 1, Period: -2}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{
				{"Periodic", gp.KindPeriodic, func() (any, error) { return per(kc, "per") }},
				{"Periodic-iso", gp.KindPeriodic, func() (any, error) {
					return gp.NewPeriodic(kc("", 3, func(c *gp.KernelConfig) { isoLengthscale(c); c.Period = 0.7 }))
				}},
			}
		},
		part: per,
	})
}
