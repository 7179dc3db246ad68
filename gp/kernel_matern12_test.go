package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestMatern12Cov(t *testing.T) {
	t.Parallel()
	if gp.Matern12Cov.Name() != "Matern12" {
		t.Errorf("Name() = %q", gp.Matern12Cov.Name())
	}
	checkCov(t, gp.Matern12Cov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * math.Exp(-r)
	})
}

func init() {
	addKernelTest(kernelTest{
		family: "matern12",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{{"Matern12", func() (gp.Kernel, error) {
				return gp.NewMatern12(gp.KernelConfig{InputDim: d, Variance: 0.7, Lengthscales: ard})
			}}}
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{{"Matern12", gp.KindMatern12, func() (any, error) { return gp.NewMatern12(kc("m12", 3, nil)) }}}
		},
		part: func(kc kernelConfigFunc, name string) (gp.Kernel, error) { return gp.NewMatern12(kc(name, 3, nil)) },
	})
}
