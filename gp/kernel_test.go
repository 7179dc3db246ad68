package gp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"gonum.org/v1/gonum/mat"
)

// kernelTest is what a kernel's test file (gp/kernel_X_test.go) contributes, from init through addKernelTest,
// to the generic kernel tests of this package, so that a kernel's two files can be deleted or re-added alone.
type kernelTest struct {
	// family is the registered family name (gp.LookupKernel).
	family string
	// conform returns kernels with non-default hyperparameters at input dimension d (ard: d length-scales), by
	// case name, for TestKernelConformance; the first name is the family's main case.
	conform func(d int, ard []float64) []namedKernel
	// bad are invalid configurations the family's constructor must reject (TestKernelConfigErrors).
	bad []func() (gp.Kernel, error)
	// spec returns the family's Spec round-trip cases (TestSpecRoundTrip); kc gives a KernelConfig with
	// non-default variance and length-scales (mod may change it).
	spec func(kc kernelConfigFunc) []specBuild
	// part returns a kernel of the family at D = 3 with Params prefixed name (the family's default for ""), for
	// the composite Spec cases.
	part func(kc kernelConfigFunc, name string) (gp.Kernel, error)
}

// namedKernel is a conformance case.
type namedKernel struct {
	name string
	k    func() (gp.Kernel, error)
}

// specBuild is a Spec round-trip case whose component is built lazily.
type specBuild struct {
	name, kind string
	build      func() (any, error)
}

// kernelConfigFunc builds the KernelConfig of a Spec case: name, D and a modification.
type kernelConfigFunc func(name string, d int, mod func(*gp.KernelConfig)) gp.KernelConfig

// isoLengthscale makes a Spec case's KernelConfig isotropic.
func isoLengthscale(c *gp.KernelConfig) { c.Lengthscales = []float64{0.6} }

// kernelTests are the contributions of the kernel test files, by family name.
var kernelTests = map[string]kernelTest{}

func addKernelTest(k kernelTest) {
	if _, dup := kernelTests[k.family]; dup {
		panic("kernel test " + k.family + " added twice")
	}
	kernelTests[k.family] = k
}

// kernelTestFamilies returns the families with contributed tests, sorted.
func kernelTestFamilies() []string {
	names := make([]string, 0, len(kernelTests))
	for n := range kernelTests {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// pickFamilies returns one contributed family for each wanted name: the name itself when its tests are present,
// else a present family other than "se" not otherwise picked (the kernels a composite case needs are whichever
// are registered).
func pickFamilies(t *testing.T, want ...string) []string {
	t.Helper()
	used := map[string]bool{}
	out := make([]string, len(want))
	for i, w := range want {
		if _, ok := kernelTests[w]; ok && !used[w] {
			out[i] = w
			used[w] = true
		}
	}
	for i := range want {
		if out[i] != "" {
			continue
		}
		for _, n := range kernelTestFamilies() {
			if n != "se" && !used[n] && !slices.Contains(want, n) {
				out[i] = n
				used[n] = true
				break
			}
		}
		if out[i] == "" {
			t.Fatalf("no kernel family left to stand in for %s", want[i])
		}
	}
	return out
}

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
	ks := map[string]gp.Kernel{}
	main := func(family string) gp.Kernel {
		return must(kernelTests[family].conform(d, ard)[0].k())
	}
	for _, n := range kernelTestFamilies() {
		for _, c := range kernelTests[n].conform(d, ard) {
			if _, dup := ks[c.name]; dup {
				t.Fatalf("conformance case %s twice", c.name)
			}
			ks[c.name] = must(c.k())
		}
	}
	// Composites of fresh kernels: SE + Linear + White and Periodic × Linear (or registered stand-ins).
	sum := pickFamilies(t, "linear", "white")
	ks["Sum"] = must(gp.NewSum(main("se"), main(sum[0]), main(sum[1])))
	prod := pickFamilies(t, "periodic", "linear")
	ks["Product"] = must(gp.NewProduct(main(prod[0]), main(prod[1])))
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
	var bad []func() (gp.Kernel, error)
	for _, n := range kernelTestFamilies() {
		bad = append(bad, kernelTests[n].bad...)
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
