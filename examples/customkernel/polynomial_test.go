package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/graph"
)

// TestPolynomialConformance: the polynomial kernel passes gpzoo's kernel conformance suite (shapes, symmetry,
// PSD, diagonal, central finite-difference gradients with respect to σ², ℓ, c and both inputs within the house
// tolerance 1e-6) and the Spec round trip, which must then compute the same bits, for several degrees, input
// sizes and hyperparameters.
func TestPolynomialConformance(t *testing.T) {
	for _, c := range []PolynomialConfig{
		{InputDim: 1, Degree: 1},
		{InputDim: 1, Degree: 2},
		{InputDim: 3, Degree: 2, Variance: 0.7, Lengthscale: 1.3, Offset: 0.4},
		{InputDim: 2, Degree: 3, Lengthscale: 0.8, Offset: 2},
		{InputDim: 4, Degree: 5, Variance: 0.2, Lengthscale: 2, Offset: 0.05},
	} {
		k, err := NewPolynomial(c)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(c.Degree), uint64(c.InputDim)))
		gptest.CheckKernel(t, k, rng)
		back := gptest.CheckSpecRoundTrip(t, k, gp.BuildOptions{}).(*Polynomial)
		if back.Degree() != k.Degree() {
			t.Errorf("round trip: degree %d, want %d", back.Degree(), k.Degree())
		}
		x := gptest.RandomMatrix(rng, 5, c.InputDim, -1, 1)
		if a, b := evalK(t, k, x, 5, c.InputDim), evalK(t, back, x, 5, c.InputDim); !slices.Equal(a, b) {
			t.Errorf("degree %d: the rebuilt kernel computes %v, the original %v", c.Degree, b, a)
		}
	}
	for _, bad := range []PolynomialConfig{{InputDim: 0, Degree: 2}, {InputDim: 1, Degree: 0}, {InputDim: 1, Degree: MaxDegree + 1}, {InputDim: 1, Degree: 2, Offset: -1}} {
		if _, err := NewPolynomial(bad); err == nil {
			t.Errorf("NewPolynomial(%+v) accepted", bad)
		}
	}
}

// evalK returns K(x, x) and KDiag(x), concatenated, for x [n,d].
func evalK(t *testing.T, k gp.Kernel, x []float64, n, d int) []float64 {
	t.Helper()
	g := graph.New(graph.Options{})
	in := g.Input("x", n, d)
	prog, err := g.CompileForward(map[string]*graph.Node{"k": k.K(in, in), "kd": k.KDiag(in)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", x); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(prog.Output("k")), prog.Output("kd")...)
}

// TestPolynomialDegreesAreDifferentOps: the degree enters the covariance function's Name, hence the fused op's
// hash: two kernels of different degrees on the same input and the same hyperparameter nodes, in one graph,
// are two ops computing (x·x' + 1)^2 and (x·x' + 1)^3 (an op hash ignoring the degree would merge them).
func TestPolynomialDegreesAreDifferentOps(t *testing.T) {
	if a, b := (PolynomialCov{Degree: 2}).Name(), (PolynomialCov{Degree: 3}).Name(); a == b {
		t.Fatalf("degrees 2 and 3 share the name %q", a)
	}
	k2, err := NewPolynomial(PolynomialConfig{InputDim: 2, Degree: 2})
	if err != nil {
		t.Fatal(err)
	}
	k3 := &Polynomial{name: k2.name, dim: 2, degree: 3, Variance: k2.Variance, Lengthscale: k2.Lengthscale, Offset: k2.Offset}
	x := []float64{0.5, -1, 1.5, 0.25, -0.75, 2}
	g := graph.New(graph.Options{})
	in := g.Input("x", 3, 2)
	prog, err := g.CompileForward(map[string]*graph.Node{"k2": k2.K(in, in), "k3": k3.K(in, in), "d2": k2.KDiag(in), "d3": k3.KDiag(in)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", x); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	for _, deg := range []int{2, 3} {
		k, kd := prog.Output("k"+string(rune('0'+deg))), prog.Output("d"+string(rune('0'+deg)))
		for i := range 3 {
			for j := range 3 {
				want := math.Pow(x[2*i]*x[2*j]+x[2*i+1]*x[2*j+1]+1, float64(deg))
				if math.Abs(k[i*3+j]-want) > 1e-12*math.Max(1, want) {
					t.Errorf("degree %d: K[%d,%d] = %v, want %v", deg, i, j, k[i*3+j], want)
				}
				if i == j && math.Abs(kd[i]-want) > 1e-12*math.Max(1, want) {
					t.Errorf("degree %d: KDiag[%d] = %v, want %v", deg, i, kd[i], want)
				}
			}
		}
	}
}

// TestPolynomialFamilies: poly2 and poly3 are registered with the kind, are offered as leaves of kernel
// expressions, and build kernels of their degree that pass the conformance suite.
func TestPolynomialFamilies(t *testing.T) {
	for _, d := range []int{2, 3} {
		name := "poly" + string(rune('0'+d))
		f, ok := gp.LookupKernel(name)
		if !ok || f.Kind != KindPolynomial || !strings.Contains(f.Doc, "polynomial") {
			t.Fatalf("%s: %+v, %v", name, f, ok)
		}
		k, err := f.New(gp.KernelOptions{InputDim: 2, ARD: true, Name: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := k.(*Polynomial); !ok || p.Degree() != d {
			t.Fatalf("%s built %v", name, k)
		}
		gptest.CheckKernel(t, k, rand.New(rand.NewPCG(5, uint64(d))))
	}
	e, err := grammar.Parse("se + Poly2 + poly3")
	if err != nil {
		t.Fatal(err)
	}
	if e.String() != "SE+POLY2+POLY3" {
		t.Errorf("canonical form %q", e)
	}
	k, err := e.Kernel(grammar.BuildConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	gptest.CheckKernel(t, k, rand.New(rand.NewPCG(8, 9)))
}

// TestRun runs the example briefly (CI: go run ./examples/customkernel -iters 5).
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 5, t.TempDir()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"poly2", "SE+POLY2", "bit for bit identical: true"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
