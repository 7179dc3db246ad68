package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestMatern52Cov(t *testing.T) {
	t.Parallel()
	if gp.Matern52Cov.Name() != "Matern52" {
		t.Errorf("Name() = %q", gp.Matern52Cov.Name())
	}
	checkCov(t, gp.Matern52Cov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * (1 + math.Sqrt(5)*r + 5*r2/3) * math.Exp(-math.Sqrt(5)*r)
	})
}

func init() {
	addKernelTest(kernelTest{
		family: "matern52",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{{"Matern52", func() (gp.Kernel, error) {
				return gp.NewMatern52(gp.KernelConfig{InputDim: d, Variance: 0.9, Lengthscales: ard})
			}}}
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{{"Matern52", gp.KindMatern52, func() (any, error) { return gp.NewMatern52(kc("", 2, nil)) }}}
		},
		part: func(kc kernelConfigFunc, name string) (gp.Kernel, error) { return gp.NewMatern52(kc(name, 3, nil)) },
	})
}
