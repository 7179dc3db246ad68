package gp_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
)

func TestRationalQuadraticCov(t *testing.T) {
	t.Parallel()
	if gp.RationalQuadraticCov.Name() != "RationalQuadratic" {
		t.Errorf("Name() = %q", gp.RationalQuadraticCov.Name())
	}
	if got := fmt.Sprint(ops.CovHyperNames(gp.RationalQuadraticCov)); got != "[variance lengthscales alpha]" {
		t.Errorf("hyperparameter names = %s", got)
	}
	checkCov(t, gp.RationalQuadraticCov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * math.Pow(1+r2/(2*h[2][0]), -h[2][0])
	})
}

func init() {
	addKernelTest(kernelTest{
		family: "rq",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{{"RQ", func() (gp.Kernel, error) {
				return gp.NewRationalQuadratic(gp.KernelConfig{InputDim: d, Variance: 1.2, Lengthscales: ard, Alpha: 0.8})
			}}}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewRationalQuadratic(gp.KernelConfig{InputDim: 1, Alpha: -2}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{{"RQ", gp.KindRationalQuadratic, func() (any, error) {
				return gp.NewRationalQuadratic(kc("rq", 3, func(c *gp.KernelConfig) { c.Alpha = 0.35 }))
			}}}
		},
		part: func(kc kernelConfigFunc, name string) (gp.Kernel, error) {
			return gp.NewRationalQuadratic(kc(name, 3, func(c *gp.KernelConfig) { c.Alpha = 0.35 }))
		},
	})
}
