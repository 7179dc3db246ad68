package gp_test

import "github.com/gpzoo/gpzoo/gp"

func init() {
	addKernelTest(kernelTest{
		family: "constant",
		conform: func(d int, _ []float64) []namedKernel {
			return []namedKernel{{"Constant", func() (gp.Kernel, error) {
				return gp.NewConstant(gp.KernelConfig{InputDim: d, Variance: 0.4})
			}}}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewConstant(gp.KernelConfig{}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{{"Constant", gp.KindConstant, func() (any, error) {
				return gp.NewConstant(gp.KernelConfig{InputDim: 3, Variance: 2.5})
			}}}
		},
		part: func(_ kernelConfigFunc, name string) (gp.Kernel, error) {
			return gp.NewConstant(gp.KernelConfig{Name: name, InputDim: 3, Variance: 0.7})
		},
	})
}
