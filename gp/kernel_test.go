package gp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"gonum.org/v1/gonum/mat"
)

func kernels(t *testing.T, d int) map[string]gp.Kernel {
	t.Helper()
	must := func(k gp.Kernel, err error) gp.Kernel {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	ard := make([]float64, d)
	for i := range ard {
		ard[i] = 0.7 + 0.3*float64(i)
	}
	se := must(gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 1.3, Lengthscales: ard}))
	per := must(gp.NewPeriodic(gp.KernelConfig{InputDim: d, Variance: 0.8, Lengthscales: ard, Period: 1.7}))
	lin := must(gp.NewLinear(gp.KernelConfig{InputDim: d, Variance: 0.6}))
	ks := map[string]gp.Kernel{
		"SE-ARD":     se,
		"SE-iso":     must(gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Lengthscales: []float64{0.9}})),
		"Matern12":   must(gp.NewMatern12(gp.KernelConfig{InputDim: d, Variance: 0.7, Lengthscales: ard})),
		"Matern32":   must(gp.NewMatern32(gp.KernelConfig{InputDim: d, Variance: 1.1, Lengthscales: ard})),
		"Matern52":   must(gp.NewMatern52(gp.KernelConfig{InputDim: d, Variance: 0.9, Lengthscales: ard})),
		"RQ":         must(gp.NewRationalQuadratic(gp.KernelConfig{InputDim: d, Variance: 1.2, Lengthscales: ard, Alpha: 0.8})),
		"Periodic":   per,
		"Linear":     lin,
		"Linear-ARD": must(gp.NewLinear(gp.KernelConfig{InputDim: d, Variances: ard})),
		"White":      must(gp.NewWhite(gp.KernelConfig{InputDim: d, Variance: 0.3})),
		"Constant":   must(gp.NewConstant(gp.KernelConfig{InputDim: d, Variance: 0.4})),
	}
	ks["Sum"] = must(gp.NewSum(se, lin, ks["White"]))
	ks["Product"] = must(gp.NewProduct(per, lin))
	return ks
}

func TestKernelConformance(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 3} {
		for name, k := range kernels(t, d) {
			t.Run(name, func(t *testing.T) {
				gptest.CheckKernel(t, k, rand.New(rand.NewPCG(uint64(d), 5)))
			})
		}
	}
}

func TestMeanConformance(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	cm, err := gp.NewConstantMean("c", []float64{0.5, -1})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := gp.NewLinearMean("l", 3, 2, gptest.RandomMatrix(rng, 3, 2, -1, 1), []float64{0.1, 0.2})
	if err != nil {
		t.Fatal(err)
	}
	zm, err := gp.NewZeroMean(2)
	if err != nil {
		t.Fatal(err)
	}
	for name, mf := range map[string]gp.MeanFunction{"constant": cm, "linear": lm, "identity": gp.IdentityMean{D: 3}} {
		t.Run(name, func(t *testing.T) { gptest.CheckMean(t, mf, 3, rng) })
	}
	if zm.OutputDim() != 2 || zm.Params() != nil {
		t.Error("ZeroMean: wrong output dim or params")
	}
}

func TestKernelConfigErrors(t *testing.T) {
	t.Parallel()
	bad := []func() (gp.Kernel, error){
		func() (gp.Kernel, error) { return gp.NewSquaredExp(gp.KernelConfig{}) },
		func() (gp.Kernel, error) {
			return gp.NewMatern32(gp.KernelConfig{InputDim: 3, Lengthscales: []float64{1, 2}})
		},
		func() (gp.Kernel, error) { return gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: -1}) },
		func() (gp.Kernel, error) { return gp.NewLinear(gp.KernelConfig{InputDim: 2, Variances: []float64{1}}) },
		func() (gp.Kernel, error) { return gp.NewWhite(gp.KernelConfig{InputDim: -1}) },
		func() (gp.Kernel, error) { return gp.NewConstant(gp.KernelConfig{}) },
		func() (gp.Kernel, error) { return gp.NewPeriodic(gp.KernelConfig{InputDim: 1, Period: -2}) },
		func() (gp.Kernel, error) { return gp.NewRationalQuadratic(gp.KernelConfig{InputDim: 1, Alpha: -2}) },
	}
	for i, f := range bad {
		if _, err := f(); err == nil {
			t.Errorf("case %d: invalid config accepted", i)
		}
	}
	se, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	se3, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 3})
	if _, err := gp.NewSum(se); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("Sum of one kernel: %v", err)
	}
	if _, err := gp.NewProduct(se, se3); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("Product with mismatched dims: %v", err)
	}
	if _, err := gp.NewSum(se, nil); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("Sum with nil: %v", err)
	}
	if _, err := gp.NewZeroMean(0); err == nil {
		t.Error("ZeroMean(0) accepted")
	}
	if _, err := gp.NewLinearMean("", 0, 1, nil, nil); err == nil {
		t.Error("LinearMean with D=0 accepted")
	}
	if _, err := gp.NewConstantMean("", nil); err == nil {
		t.Error("ConstantMean without values accepted")
	}
}

// KernelMatrix evaluates the kernel eagerly: symmetric with the variance on the diagonal for K(X,X) (the same
// input matrix twice), and equal to the transposed cross-matrix for swapped arguments.
func TestKernelMatrix(t *testing.T) {
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: 1.7, Lengthscales: []float64{0.5, 2}})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	z := mat.NewDense(2, 2, []float64{0.5, 0.5, -1, 2})
	kxx, err := gp.KernelMatrix(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	if kxx.At(1, 1) != 1.7 || kxx.At(0, 1) != kxx.At(1, 0) || math.Abs(kxx.At(0, 1)-1.7*math.Exp(-0.5*4)) > 1e-14 {
		t.Errorf("K(X,X) = %v", mat.Formatted(kxx))
	}
	kxz, err := gp.KernelMatrix(k, x, z)
	if err != nil {
		t.Fatal(err)
	}
	kzx, err := gp.KernelMatrix(k, z, x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(kxz, kzx.T(), 1e-15) {
		t.Error("K(X,Z) ≠ K(Z,X)ᵀ")
	}
	if _, err := gp.KernelMatrix(k, mat.NewDense(2, 3, nil), z); err == nil {
		t.Error("wrong width: no error")
	}
}
