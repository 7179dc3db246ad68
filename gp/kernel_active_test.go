package gp_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

func init() {
	combinatorSpecs = append(combinatorSpecs, specBuild{"Active(SE)", gp.KindActive, func() (any, error) {
		se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "ase", InputDim: 2, Variance: 0.7, Lengthscales: []float64{0.3, 1.1}})
		if err != nil {
			return nil, err
		}
		return gp.NewActive(se, 3, []int{2, 0})
	}})
}

// TestActiveSelects: SE on columns [2, 0] of a 3-column input equals SE on the matrix of those columns, bit for
// bit, and the wrapper passes the conformance suite.
func TestActiveSelects(t *testing.T) {
	t.Parallel()
	se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "s", InputDim: 2, Variance: 1.4, Lengthscales: []float64{0.7, 1.9}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := gp.NewActive(se, 3, []int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if a.InputDim() != 3 || !slices.Equal(a.Dims(), []int{2, 0}) || a.Kernel() != gp.Kernel(se) || a.String() == "" {
		t.Errorf("InputDim %d, Dims %v, %v", a.InputDim(), a.Dims(), a)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x1, x2 := gptest.RandomMatrix(rng, 5, 3, -2, 2), gptest.RandomMatrix(rng, 4, 3, -2, 2)
	pick := func(x []float64, r int) *mat.Dense {
		out := mat.NewDense(r, 2, nil)
		for i := range r {
			out.Set(i, 0, x[i*3+2])
			out.Set(i, 1, x[i*3])
		}
		return out
	}
	got, err := gp.KernelMatrix(a, mat.NewDense(5, 3, x1), mat.NewDense(4, 3, x2))
	if err != nil {
		t.Fatal(err)
	}
	want, err := gp.KernelMatrix(se, pick(x1, 5), pick(x2, 4))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, want) {
		t.Errorf("active K\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(want))
	}
	gptest.CheckKernel(t, a, rand.New(rand.NewPCG(3, 4)))
	gptest.CheckSpecRoundTrip(t, a, gp.BuildOptions{})
}

// TestActiveGradients: the inputs' gradient is zero, exactly, in the inactive column and non-zero in the active
// ones.
func TestActiveGradients(t *testing.T) {
	t.Parallel()
	se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "s", InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, err := gp.NewActive(se, 3, []int{0, 2})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	px, err := graph.NewParam("X", gptest.RandomMatrix(rng, 4, 3, -1, 1), nil, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range a.Params() {
		p.SetTrainable(false)
	}
	g := graph.New(graph.Options{})
	x := g.Param(px)
	w := g.Const("w", gptest.RandomMatrix(rng, 4, 4, -1, 1), 4, 4)
	prog, err := g.Compile(g.Add(g.Dot(w, a.K(x, x)), g.Sum(a.KDiag(x))), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	grad := prog.Grad(px)
	for i := range 4 {
		if grad[i*3+1] != 0 || grad[i*3] == 0 || grad[i*3+2] == 0 {
			t.Errorf("row %d: gradient %v, want zero in column 1 only", i, grad[i*3:i*3+3])
		}
	}
}

// TestActiveWhite: a white kernel behind Active still sees K(X, X) as one input (noise on the diagonal) and
// K(X1, X2) as two (zeros).
func TestActiveWhite(t *testing.T) {
	t.Parallel()
	f, ok := gp.LookupKernel("white")
	if !ok {
		t.Skip("kernel white is not registered")
	}
	w, err := f.New(gp.KernelOptions{InputDim: 1, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := gp.NewActive(w, 2, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	kxx, err := gp.KernelMatrix(a, x, x)
	if err != nil {
		t.Fatal(err)
	}
	kxy, err := gp.KernelMatrix(a, x, mat.DenseCopyOf(x))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if kxx.At(i, i) != 1 || kxy.At(i, i) != 0 {
			t.Errorf("K(X,X)[%d,%d] = %v, K(X,X')[%d,%d] = %v", i, i, kxx.At(i, i), i, i, kxy.At(i, i))
		}
	}
}

func TestActiveErrors(t *testing.T) {
	t.Parallel()
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k    gp.Kernel
		d    int
		dims []int
	}{{nil, 3, []int{0, 1}}, {se, 0, []int{0, 1}}, {se, 3, []int{0}}, {se, 3, []int{0, 3}}, {se, 3, []int{-1, 0}}, {se, 3, []int{1, 1}}} {
		if _, err := gp.NewActive(c.k, c.d, c.dims); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("NewActive(%v, %d, %v): %v", c.k, c.d, c.dims, err)
		}
	}
	s, err := se.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []gp.Spec{
		{Kind: gp.KindActive, Config: []byte(`{"input_dim":3,"dims":[0,1]}`)},
		{Kind: gp.KindActive, Children: []gp.Spec{s}},
		{Kind: gp.KindActive, Config: []byte(`{"input_dim":3,"dims":[0,5]}`), Children: []gp.Spec{s}},
		{Kind: gp.KindActive, Config: []byte(`{"input_dim":0,"dims":[0,1]}`), Children: []gp.Spec{s}},
	} {
		if _, err := gp.BuildSpec(bad, gp.BuildOptions{}); err == nil {
			t.Errorf("BuildSpec(%s, %d children) accepted", bad.Config, len(bad.Children))
		}
	}
}
