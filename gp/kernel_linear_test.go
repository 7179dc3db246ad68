package gp_test

import (
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestLinearCov(t *testing.T) {
	t.Parallel()
	if gp.LinearCov.Name() != "Linear" {
		t.Errorf("Name() = %q", gp.LinearCov.Name())
	}
	checkCov(t, gp.LinearCov, func(a, b []float64, h [][]float64) float64 {
		v := 0.0
		for q := range a {
			s2 := h[0][0]
			if len(h[0]) > 1 {
				s2 = h[0][q]
			}
			v += s2 * a[q] * b[q]
		}
		return v
	})
}

func init() {
	lin := func(_ kernelConfigFunc, name string) (gp.Kernel, error) {
		return gp.NewLinear(gp.KernelConfig{Name: name, InputDim: 3, Variances: []float64{0.3, 0.5, 0.8}})
	}
	addKernelTest(kernelTest{
		family: "linear",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{
				{"Linear", func() (gp.Kernel, error) { return gp.NewLinear(gp.KernelConfig{InputDim: d, Variance: 0.6}) }},
				{"Linear-ARD", func() (gp.Kernel, error) { return gp.NewLinear(gp.KernelConfig{InputDim: d, Variances: ard}) }},
			}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewLinear(gp.KernelConfig{InputDim: 2, Variances: []float64{1}}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{
				{"Linear-ARD", gp.KindLinear, func() (any, error) { return lin(kc, "lin") }},
				{"Linear-shared", gp.KindLinear, func() (any, error) { return gp.NewLinear(gp.KernelConfig{InputDim: 3, Variance: 0.4}) }},
				{"Linear-1D", gp.KindLinear, func() (any, error) {
					return gp.NewLinear(gp.KernelConfig{Name: "l1", InputDim: 1, Variance: 0.4})
				}},
			}
		},
		part: lin,
	})
}
