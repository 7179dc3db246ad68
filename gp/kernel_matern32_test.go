package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestMatern32Cov(t *testing.T) {
	t.Parallel()
	if gp.Matern32Cov.Name() != "Matern32" {
		t.Errorf("Name() = %q", gp.Matern32Cov.Name())
	}
	checkCov(t, gp.Matern32Cov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
	})
}

func init() {
	addKernelTest(kernelTest{
		family: "matern32",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{{"Matern32", func() (gp.Kernel, error) {
				return gp.NewMatern32(gp.KernelConfig{InputDim: d, Variance: 1.1, Lengthscales: ard})
			}}}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) {
				return gp.NewMatern32(gp.KernelConfig{InputDim: 3, Lengthscales: []float64{1, 2}})
			},
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{{"Matern32-iso", gp.KindMatern32, func() (any, error) {
				return gp.NewMatern32(kc("m32", 3, isoLengthscale))
			}}}
		},
		part: func(kc kernelConfigFunc, name string) (gp.Kernel, error) {
			return gp.NewMatern32(kc(name, 3, isoLengthscale))
		},
	})
}
