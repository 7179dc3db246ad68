package gp_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
)

// smRef is one component in Wilson & Adams' (2013) eq. 12 form, with the spectral variances v = 1/(4π²ℓ²).
func smRef(a, b []float64, h [][]float64) float64 {
	k := h[0][0]
	for d := range a {
		tau := a[d] - b[d]
		v := 1 / (4 * math.Pi * math.Pi * h[2][d] * h[2][d])
		k *= math.Exp(-2*math.Pi*math.Pi*tau*tau*v) * math.Cos(2*math.Pi*tau*h[1][d])
	}
	return k
}

func TestSpectralMixtureCov(t *testing.T) {
	t.Parallel()
	if gp.SpectralMixtureCov.Name() != "SpectralMixture" {
		t.Errorf("Name() = %q", gp.SpectralMixtureCov.Name())
	}
	checkCov(t, gp.SpectralMixtureCov, smRef)
}

// TestSpectralMixtureCovGrad checks ∂K/∂x1, ∂K/∂x2 and every hyperparameter of one component against central
// differences (relative 1e-6): D = 1 and 3, distinct inputs and K(X, X), frequencies of both signs and one at 0.
func TestSpectralMixtureCovGrad(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 3} {
		for _, shared := range []bool{false, true} {
			t.Run(fmt.Sprintf("D=%d/shared=%v", d, shared), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, uint64(d)))
				mu := gradcheck.Random("frequencies", rng, -1.2, 1.2, d)
				mu.Value[0] = 0
				h := []gradcheck.Input{gradcheck.Random("weight", rng, 0.5, 1.5), mu, gradcheck.Random("lengthscales", rng, 0.4, 1.5, d)}
				x1 := gradcheck.Random("x1", rng, -1, 1, 5, d)
				if shared {
					gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
						return ops.CovMatrix(gp.SpectralMixtureCov, n[0], n[0], n[1:]...)
					}, append([]gradcheck.Input{x1}, h...))
					return
				}
				x2 := gradcheck.Random("x2", rng, -1, 1, 4, d)
				copy(x2.Value[:d], x1.Value[2*d:3*d]) // a coincident pair
				gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
					return ops.CovMatrix(gp.SpectralMixtureCov, n[0], n[1], n[2:]...)
				}, append([]gradcheck.Input{x1, x2}, h...))
			})
		}
	}
}

// One component at frequency 0 is the SE kernel with the same length-scales and variance w (ℓ = 1/(2π√v)).
func TestSpectralMixtureAtZeroIsSE(t *testing.T) {
	t.Parallel()
	const d = 3
	ell := []float64{0.3, 1.1, 2.5}
	sm, err := gp.NewSpectralMixture(gp.KernelConfig{InputDim: d, Components: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Set from Wilson & Adams' spectral variances v_d, mapped to length-scales.
	v := make([]float64, d)
	ls := make([]float64, d)
	for k := range v {
		v[k] = 1 / (4 * math.Pi * math.Pi * ell[k] * ell[k])
		ls[k] = 1 / (2 * math.Pi * math.Sqrt(v[k]))
	}
	if err := sm.SetInit(gp.SpectralMixtureInit{Weights: []float64{1.7}, Frequencies: make([]float64, d), Lengthscales: ls}); err != nil {
		t.Fatal(err)
	}
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 1.7, Lengthscales: ell})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(40, d, gradcheck.Random("x", rng, -3, 3, 40, d).Value)
	z := mat.NewDense(13, d, gradcheck.Random("z", rng, -3, 3, 13, d).Value)
	for _, pair := range [][2]*mat.Dense{{x, x}, {x, z}} {
		a, err := gp.KernelMatrix(sm, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		b, err := gp.KernelMatrix(se, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		r, c := a.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if av, bv := a.At(i, j), b.At(i, j); math.Abs(av-bv) > 1e-12*math.Abs(bv) {
					t.Fatalf("K[%d,%d]: SM %.17g, SE %.17g", i, j, av, bv)
				}
			}
		}
	}
}

// The sum over components: K of a Q = 3 kernel equals the reference summed over its components.
func TestSpectralMixtureSum(t *testing.T) {
	t.Parallel()
	const d, q = 2, 3
	k, err := gp.NewSpectralMixture(gp.KernelConfig{InputDim: d, Components: q})
	if err != nil {
		t.Fatal(err)
	}
	in := gp.SpectralMixtureInit{Weights: []float64{0.5, 1.2, 0.3}, Frequencies: []float64{0, 0.4, 1.1, -0.7, 2.2, 0.05},
		Lengthscales: []float64{1, 2, 0.5, 0.8, 3, 0.7}}
	if err := k.SetInit(in); err != nil {
		t.Fatal(err)
	}
	if k.Components() != q || len(k.Params()) != 3 {
		t.Fatalf("Components %d, %d Params", k.Components(), len(k.Params()))
	}
	rng := rand.New(rand.NewPCG(4, 4))
	x := mat.NewDense(6, d, gradcheck.Random("x", rng, -2, 2, 6, d).Value)
	z := mat.NewDense(5, d, gradcheck.Random("z", rng, -2, 2, 5, d).Value)
	got, err := gp.KernelMatrix(k, x, z)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		for j := 0; j < 5; j++ {
			want := 0.0
			for c := 0; c < q; c++ {
				want += smRef(x.RawRowView(i), z.RawRowView(j), [][]float64{{in.Weights[c]}, in.Frequencies[c*d : (c+1)*d], in.Lengthscales[c*d : (c+1)*d]})
			}
			if math.Abs(got.At(i, j)-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("K[%d,%d] = %.17g, want %.17g", i, j, got.At(i, j), want)
			}
		}
	}
	if err := k.SetInit(gp.SpectralMixtureInit{Weights: []float64{1}}); err == nil {
		t.Error("SetInit with wrong sizes accepted")
	}
}

// The periodogram initialisation finds the frequencies of a sum of two sinusoids on unevenly spaced inputs,
// the stronger one first, with a larger weight; it is deterministic below periodogramMaxRows rows.
func TestInitSpectralMixture(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 1))
	const n = 400
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		xi := 10 * rng.Float64()
		x.Set(i, 0, xi)
		y.Set(i, 0, 3+2*math.Sin(2*math.Pi*0.7*xi)+0.8*math.Cos(2*math.Pi*2.3*xi+1)+0.1*rng.NormFloat64())
	}
	in, err := gp.InitSpectralMixture(x, y, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(in.Frequencies[0]-0.7) > 0.03 || math.Abs(in.Frequencies[1]-2.3) > 0.03 {
		t.Errorf("frequencies %v, want 0.7 and 2.3 first", in.Frequencies)
	}
	if !(in.Weights[0] > in.Weights[1]) {
		t.Errorf("weights %v: the stronger sinusoid should weigh more", in.Weights)
	}
	total := 0.0
	for c, w := range in.Weights {
		total += w
		if !(w > 0) || !(in.Lengthscales[c] > 0) || math.IsInf(in.Lengthscales[c], 0) {
			t.Errorf("component %d: weight %v, length-scale %v", c, w, in.Lengthscales[c])
		}
	}
	// The weights share the targets' variance (2²/2 + 0.8²/2 + noise ≈ 2.33).
	if total < 1.8 || total > 2.8 {
		t.Errorf("Σ weights = %v, want ≈ var(y) ≈ 2.33", total)
	}
	// A peak's width sets its length-scale: a record of 10 units gives length-scales of the order of the record.
	if in.Lengthscales[0] < 1 || in.Lengthscales[0] > 100 {
		t.Errorf("length-scale %v for a 10-unit record", in.Lengthscales[0])
	}
	again, err := gp.InitSpectralMixture(x, y, 3, nil)
	if err != nil || fmt.Sprint(again) != fmt.Sprint(in) {
		t.Errorf("not deterministic: %v then %v (%v)", in, again, err)
	}
	k, err := gp.NewSpectralMixture(gp.KernelConfig{InputDim: 1, Components: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.InitFromData(x, y, nil); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(k.Frequencies.Value()) != fmt.Sprint(in.Frequencies) {
		t.Errorf("InitFromData frequencies %v, want %v", k.Frequencies.Value(), in.Frequencies)
	}
	// A trend (Mauna Loa's shape: a rise, a yearly cycle): component 0 is the trend (frequency 0, the record's
	// length, most of the variance), the cycle's frequency comes next.
	xt, yt := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		xi := 20 * rng.Float64()
		lo, hi = math.Min(lo, xi), math.Max(hi, xi)
		xt.Set(i, 0, xi)
		yt.Set(i, 0, 2*xi+0.05*xi*xi+1.5*math.Sin(2*math.Pi*xi)+0.1*rng.NormFloat64())
	}
	tr, err := gp.InitSpectralMixture(xt, yt, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Frequencies[0] != 0 || tr.Lengthscales[0] != hi-lo || !(tr.Weights[0] > 0.9*(tr.Weights[0]+tr.Weights[1]+tr.Weights[2])) {
		t.Errorf("trend component %v %v %v, want frequency 0, length-scale %v and most of the weight", tr.Frequencies[0], tr.Lengthscales[0], tr.Weights, hi-lo)
	}
	if math.Abs(tr.Frequencies[1]-1) > 0.03 && math.Abs(tr.Frequencies[2]-1) > 0.03 {
		t.Errorf("frequencies %v: the yearly cycle (1) is missing", tr.Frequencies)
	}
	// Errors.
	if _, err := gp.InitSpectralMixture(x, y, 0, nil); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("q = 0: %v", err)
	}
	if _, err := gp.InitSpectralMixture(x, mat.NewDense(3, 1, nil), 2, nil); err == nil {
		t.Error("mismatched rows accepted")
	}
	bad := mat.DenseCopyOf(y)
	bad.Set(5, 0, math.NaN())
	if _, err := gp.InitSpectralMixture(x, bad, 2, nil); err == nil {
		t.Error("NaN target accepted")
	}
	if err := k.InitFromData(mat.NewDense(n, 2, nil), y, nil); err == nil {
		t.Error("InitFromData with 2 columns for D = 1 accepted")
	}
	// Constant targets and one distinct input give finite, positive values.
	flat, err := gp.InitSpectralMixture(mat.NewDense(5, 2, nil), mat.NewDense(5, 1, nil), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(append(flat.Weights, flat.Lengthscales...), flat.Frequencies...) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("degenerate data: %+v", flat)
			break
		}
	}
}

// InitKernelFromData initialises a spectral mixture inside a sum with InitSpectralMixture's values.
func TestSpectralMixtureInitInSum(t *testing.T) {
	t.Parallel()
	sm, err := gp.NewSpectralMixture(gp.KernelConfig{InputDim: 1, Components: 2})
	if err != nil {
		t.Fatal(err)
	}
	se1, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	k, err := gp.NewSum(se1, sm)
	if err != nil {
		t.Fatal(err)
	}
	x1, y1 := mat.NewDense(50, 1, nil), mat.NewDense(50, 1, nil)
	for i := 0; i < 50; i++ {
		x1.Set(i, 0, float64(i)/5)
		y1.Set(i, 0, math.Sin(2*math.Pi*0.5*float64(i)/5))
	}
	if err := gp.InitKernelFromData(k, x1, y1, nil); err != nil {
		t.Fatal(err)
	}
	want, err := gp.InitSpectralMixture(x1, y1, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := append(sm.Frequencies.Value(), sm.Weights.Value()...)
	for i, v := range append(want.Frequencies, want.Weights...) {
		if math.Abs(got[i]-v) > 1e-14*math.Abs(v) {
			t.Fatalf("SM in a sum: frequencies %v weights %v, want %v %v", sm.Frequencies.Value(), sm.Weights.Value(), want.Frequencies, want.Weights)
		}
	}
	if math.Abs(want.Frequencies[0]-0.5) > 0.02 {
		t.Errorf("frequency %v, want 0.5", want.Frequencies[0])
	}
}

func init() {
	smInit := gp.SpectralMixtureInit{Weights: []float64{0.6, 0.9}}
	smKernel := func(name string, d int) (gp.Kernel, error) {
		k, err := gp.NewSpectralMixture(gp.KernelConfig{Name: name, InputDim: d, Components: 2})
		if err != nil {
			return nil, err
		}
		in := gp.SpectralMixtureInit{Weights: smInit.Weights, Frequencies: make([]float64, 2*d), Lengthscales: make([]float64, 2*d)}
		for i := range in.Frequencies {
			in.Frequencies[i] = 0.3*float64(i) - 0.4
			in.Lengthscales[i] = 0.5 + 0.25*float64(i)
		}
		return k, k.SetInit(in)
	}
	addKernelTest(kernelTest{
		family: "sm",
		conform: func(d int, _ []float64) []namedKernel {
			return []namedKernel{
				{"SpectralMixture", func() (gp.Kernel, error) { return smKernel("", d) }},
				{"SpectralMixture-Q1", func() (gp.Kernel, error) {
					return gp.NewSpectralMixture(gp.KernelConfig{InputDim: d, Components: 1, Lengthscales: []float64{0.7}})
				}},
			}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewSpectralMixture(gp.KernelConfig{}) },
			func() (gp.Kernel, error) { return gp.NewSpectralMixture(gp.KernelConfig{InputDim: 2, Components: -1}) },
			func() (gp.Kernel, error) {
				return gp.NewSpectralMixture(gp.KernelConfig{InputDim: 2, Components: 100000})
			},
			func() (gp.Kernel, error) {
				return gp.NewSpectralMixture(gp.KernelConfig{InputDim: 3, Lengthscales: []float64{1, 2}})
			},
			func() (gp.Kernel, error) { return gp.NewSpectralMixture(gp.KernelConfig{InputDim: 2, Variance: -1}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{
				{"SpectralMixture", gp.KindSpectralMixture, func() (any, error) { return smKernel("sm2", 3) }},
				{"SpectralMixture-1D", gp.KindSpectralMixture, func() (any, error) {
					return gp.NewSpectralMixture(gp.KernelConfig{InputDim: 1, Components: 5, Variance: 2})
				}},
			}
		},
		part: func(_ kernelConfigFunc, name string) (gp.Kernel, error) { return smKernel(name, 3) },
	})
}

// TestSpectralMixtureSizes: the family takes its number of components in its name (smQ, KernelFamily.Sized):
// sm10 and sm7 have 10 and 7 components, sm the default; a size the kernel refuses is a configuration error,
// and a malformed size or a family without sizes is not a kernel name.
func TestSpectralMixtureSizes(t *testing.T) {
	for name, q := range map[string]int{"sm": gp.DefaultComponents, "sm10": 10, "SM7": 7, "sm1": 1} {
		f, ok := gp.LookupKernel(name)
		if !ok {
			t.Fatalf("%s: not a kernel name", name)
		}
		k, err := f.New(gp.KernelOptions{InputDim: 2, ARD: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := k.(*gp.SpectralMixture).Components(); got != q {
			t.Errorf("%s: %d components, want %d", name, got, q)
		}
	}
	f, ok := gp.LookupKernel("sm300")
	if !ok {
		t.Fatal("sm300: not a kernel name")
	}
	if _, err := f.New(gp.KernelOptions{InputDim: 2}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("sm300 (above the components' bound): error %v, want gp.ErrConfig", err)
	}
	for _, name := range []string{"sm0", "sm07", "sm-3", "sm1234567", "se7", "matern5", "sm1x"} {
		if _, ok := gp.LookupKernel(name); ok {
			t.Errorf("%s: a kernel name, want none", name)
		}
	}
}
