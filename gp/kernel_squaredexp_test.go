package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestSquaredExpCov(t *testing.T) {
	t.Parallel()
	if gp.SquaredExpCov.Name() != "SquaredExp" {
		t.Errorf("Name() = %q", gp.SquaredExpCov.Name())
	}
	checkCov(t, gp.SquaredExpCov, func(a, b []float64, h [][]float64) float64 {
		return h[0][0] * math.Exp(-covR2(a, b, h[1])/2)
	})
}

func init() {
	addKernelTest(kernelTest{
		family: "se",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{
				{"SE-ARD", func() (gp.Kernel, error) {
					return gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 1.3, Lengthscales: ard})
				}},
				{"SE-iso", func() (gp.Kernel, error) {
					return gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Lengthscales: []float64{0.9}})
				}},
			}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewSquaredExp(gp.KernelConfig{}) },
			func() (gp.Kernel, error) { return gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: -1}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{
				{"SE-ARD", gp.KindSquaredExp, func() (any, error) { return gp.NewSquaredExp(kc("se", 3, nil)) }},
				{"SE-iso", gp.KindSquaredExp, func() (any, error) { return gp.NewSquaredExp(kc("", 3, isoLengthscale)) }},
				{"SE-1D", gp.KindSquaredExp, func() (any, error) { return gp.NewSquaredExp(kc("one", 1, nil)) }},
			}
		},
		part: func(kc kernelConfigFunc, name string) (gp.Kernel, error) { return gp.NewSquaredExp(kc(name, 3, nil)) },
	})
}
