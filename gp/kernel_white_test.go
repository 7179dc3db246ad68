package gp_test

import "github.com/gpzoo/gpzoo/gp"

func init() {
	addKernelTest(kernelTest{
		family: "white",
		conform: func(d int, _ []float64) []namedKernel {
			return []namedKernel{{"White", func() (gp.Kernel, error) { return gp.NewWhite(gp.KernelConfig{InputDim: d, Variance: 0.3}) }}}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewWhite(gp.KernelConfig{InputDim: -1}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{{"White", gp.KindWhite, func() (any, error) {
				return gp.NewWhite(gp.KernelConfig{Name: "w", InputDim: 3, Variance: 0.05})
			}}}
		},
		part: func(_ kernelConfigFunc, name string) (gp.Kernel, error) {
			return gp.NewWhite(gp.KernelConfig{Name: name, InputDim: 3, Variance: 0.05})
		},
	})
}
