package gp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// coregionCase returns a coregion kernel with non-default W and κ: P = 3, R = 2, at D = d reading column col.
func coregionCase(name string, d, col int) (*gp.Coregion, error) {
	return gp.NewCoregion(gp.CoregionConfig{Name: name, InputDim: d, Column: col, Tasks: 3, Rank: 2,
		W: []float64{0.9, -0.3, 0.2, 0.7, -0.5, 0.4}, Kappa: []float64{0.3, 0.05, 1.2}})
}

// seTimesCoregion returns se[cols other than task] × coregion[task] at D = d (d ≥ 2), through Active.
func seTimesCoregion(d, task int) (gp.Kernel, error) {
	var xs []int
	for j := range d {
		if j != task {
			xs = append(xs, j)
		}
	}
	ls := make([]float64, len(xs))
	for i := range ls {
		ls[i] = 0.6 + 0.4*float64(i)
	}
	se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "se", InputDim: len(xs), Variance: 1.3, Lengthscales: ls})
	if err != nil {
		return nil, err
	}
	co, err := coregionCase("co", 1, 0)
	if err != nil {
		return nil, err
	}
	a, err := gp.NewActive(se, d, xs)
	if err != nil {
		return nil, err
	}
	b, err := gp.NewActive(co, d, []int{task})
	if err != nil {
		return nil, err
	}
	return gp.NewProduct(a, b)
}

func init() {
	addKernelTest(kernelTest{
		family: "coregion",
		conform: func(d int, _ []float64) []namedKernel {
			cs := []namedKernel{{"Coregion", func() (gp.Kernel, error) { return coregionCase("", d, d/2) }}}
			if d > 1 {
				cs = append(cs, namedKernel{"SE×Coregion", func() (gp.Kernel, error) { return seTimesCoregion(d, 1) }})
			}
			return cs
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewCoregion(gp.CoregionConfig{Tasks: 2, Rank: 3}) },
			func() (gp.Kernel, error) { return gp.NewCoregion(gp.CoregionConfig{InputDim: 2, Column: 2}) },
			func() (gp.Kernel, error) { return gp.NewCoregion(gp.CoregionConfig{Column: -1}) },
			func() (gp.Kernel, error) { return gp.NewCoregion(gp.CoregionConfig{Tasks: -2}) },
			func() (gp.Kernel, error) { return gp.NewCoregion(gp.CoregionConfig{Tasks: 2, W: []float64{1}}) },
			func() (gp.Kernel, error) { return gp.NewCoregion(gp.CoregionConfig{Tasks: 2, Kappa: []float64{1, -1}}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{
				{"Coregion", gp.KindCoregion, func() (any, error) { return coregionCase("co", 3, 1) }},
				{"Active(SE×Coregion)", gp.KindProduct, func() (any, error) { return seTimesCoregion(3, 2) }},
				{"Active", gp.KindActive, func() (any, error) {
					co, err := coregionCase("co", 1, 0)
					if err != nil {
						return nil, err
					}
					return gp.NewActive(co, 3, []int{2})
				}},
			}
		},
		part: func(_ kernelConfigFunc, name string) (gp.Kernel, error) { return coregionCase(name, 3, 2) },
	})
}

// coregionB returns W Wᵀ + diag κ of k's current values, in plain Go.
func coregionB(k *gp.Coregion) [][]float64 {
	w, kappa := k.W.Value(), k.Kappa.Value()
	p, r := k.Tasks(), k.Rank()
	b := make([][]float64, p)
	for i := range p {
		b[i] = make([]float64, p)
		for j := range p {
			for q := range r {
				b[i][j] += w[i*r+q] * w[j*r+q]
			}
		}
		b[i][i] += kappa[i]
	}
	return b
}

func TestCoregionMatrix(t *testing.T) {
	t.Parallel()
	k, err := coregionCase("co", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	x1 := mat.NewDense(4, 2, []float64{0.3, 0, -1, 2, 5, 1, 0.1, 2})
	x2 := mat.NewDense(3, 2, []float64{7, 2, 0, 0, -3, 1})
	got, err := gp.KernelMatrix(k, x1, x2)
	if err != nil {
		t.Fatal(err)
	}
	b := coregionB(k)
	for i := range 4 {
		for j := range 3 {
			if want := b[int(x1.At(i, 1))][int(x2.At(j, 1))]; got.At(i, j) != want {
				t.Errorf("K[%d,%d] = %v, want B = %v", i, j, got.At(i, j), want)
			}
		}
	}
	if b := k.B(); b[0*3+2] != coregionB(k)[0][2] || len(b) != 9 {
		t.Errorf("B() = %v", b)
	}
	if cs := gp.CategoricalInputs(k); !slices.Equal(cs, []gp.CategoricalInput{{Column: 1, Levels: 3}}) {
		t.Errorf("CategoricalInputs = %v", cs)
	}
}

// TestCoregionTaskErrors: a non-integer, negative, too large or NaN task value is a *CategoryError (from the
// forward pass of K and of KDiag), never a panic.
func TestCoregionTaskErrors(t *testing.T) {
	t.Parallel()
	k, err := coregionCase("co", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	good := mat.NewDense(2, 2, []float64{0, 0, 1, 2})
	for _, v := range []float64{0.5, -1, 3, math.NaN(), math.Inf(1), 1e300} {
		bad := mat.NewDense(2, 2, []float64{0.2, 1, 0.4, v})
		for name, f := range map[string]func() error{
			"K(bad, good)": func() error { return runErr(k, bad, good, false) },
			"K(good, bad)": func() error { return runErr(k, good, bad, false) },
			"KDiag":        func() error { return runErr(k, bad, nil, true) },
		} {
			var ce *gp.CategoryError
			err := f()
			if !errors.As(err, &ce) || !errors.Is(err, gp.ErrConfig) {
				t.Errorf("task %v, %s: %v (want a *gp.CategoryError)", v, name, err)
				continue
			}
			if ce.Row != 1 || ce.Column != 1 || ce.Levels != 3 || !(ce.Value == v || math.IsNaN(v)) {
				t.Errorf("task %v, %s: %+v", v, name, ce)
			}
		}
	}
	if err := gp.CheckCategorical("t", []float64{0, 2, 1, 2.5}, 2, gp.CategoricalInputs(k)); err == nil {
		t.Error("CheckCategorical accepted 2.5")
	}
	if err := gp.CheckCategorical("t", []float64{0, 2, 1, 0}, 2, gp.CategoricalInputs(k)); err != nil {
		t.Errorf("CheckCategorical: %v", err)
	}
}

// runErr returns the error of running k.K(x1, x2) (diag: k.KDiag(x1)) on constant inputs.
func runErr(k gp.Kernel, x1, x2 *mat.Dense, diag bool) error {
	g := graph.New(graph.Options{})
	node := func(name string, x *mat.Dense) *graph.Node {
		n, d := x.Dims()
		return g.Const(name, mat.DenseCopyOf(x).RawMatrix().Data, n, d)
	}
	var out *graph.Node
	if diag {
		out = k.KDiag(node("x1", x1))
	} else {
		out = k.K(node("x1", x1), node("x2", x2))
	}
	prog, err := g.CompileForward(map[string]*graph.Node{"k": out})
	if err != nil {
		return err
	}
	defer prog.Close()
	return prog.Run()
}

// TestCoregionShapes: a W of the wrong shape is refused by the op (ops.CovHyper.Shape) with a ShapeError.
func TestCoregionShapes(t *testing.T) {
	t.Parallel()
	k, err := coregionCase("co", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := graph.NewParam("wrongW", make([]float64, 6), nil, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	x := g.Const("x", []float64{0, 1}, 2, 1)
	// The kernel's own nodes are fine; swap W for one of shape [2,3] by building another kernel's op.
	_ = k.K(x, x)
	bad, err := gp.NewCoregion(gp.CoregionConfig{Name: "bad", Tasks: 3, Rank: 2})
	if err != nil {
		t.Fatal(err)
	}
	bad.W = wrong
	_ = bad.K(x, x)
	if err := g.Err(); !errors.Is(err, ops.ErrShape) {
		t.Errorf("W [2,3] for P = 3, R = 2: %v (want a shape error)", err)
	}
}

// TestCoregionInputGradientZero: the gradient of a loss through se[0] × coregion[1] with respect to the inputs is
// exactly zero in the task column and non-zero in the other.
func TestCoregionInputGradientZero(t *testing.T) {
	t.Parallel()
	k, err := seTimesCoregion(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.3, 0, -0.7, 2, 1.1, 1, 0.2, 2}
	px, err := graph.NewParam("X", x, nil, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range k.Params() {
		p.SetTrainable(false)
	}
	g := graph.New(graph.Options{})
	a := g.Param(px)
	w := g.Const("w", gptest.RandomMatrix(rand.New(rand.NewPCG(3, 4)), 4, 4, -1, 1), 4, 4)
	prog, err := g.Compile(g.Add(g.Dot(w, k.K(a, a)), g.Sum(k.KDiag(a))), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	grad := prog.Grad(px)
	for i := range 4 {
		if grad[i*2+1] != 0 {
			t.Errorf("d/dtask row %d = %v, want 0", i, grad[i*2+1])
		}
		if grad[i*2] == 0 {
			t.Errorf("d/dx row %d = 0", i)
		}
	}
}

// TestCoregionICMEquivalence (issue 32): the prior covariance over (input, task) pairs of se[x] × coregion[task]
// with B = W Wᵀ + diag κ equals that of the linear model of coregionalisation with mixing W (R latent GPs with the
// SE kernel) plus one independent latent per output with variance κ_p and the same SE kernel:
// Σ_r W_pr W_p'r k_se(x, x') + δ_pp' κ_p k_se(x, x') (Álvarez, Rosasco & Lawrence 2012, eqs. 4.4–4.5), computed
// here directly in plain Go, to relative 1e-12.
func TestCoregionICMEquivalence(t *testing.T) {
	t.Parallel()
	const d, n, m = 3, 9, 7 // columns 0, 2: x; column 1: task
	k, err := seTimesCoregion(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	x1, x2 := gptest.RandomMatrix(rng, n, d, -2, 2), gptest.RandomMatrix(rng, m, d, -2, 2)
	for i := range n {
		x1[i*d+1] = float64(rng.IntN(3))
	}
	for j := range m {
		x2[j*d+1] = float64(rng.IntN(3))
	}
	got, err := gp.KernelMatrix(k, mat.NewDense(n, d, x1), mat.NewDense(m, d, x2))
	if err != nil {
		t.Fatal(err)
	}
	// The parts' values: se (variance 1.3, lengthscales 0.6, 1.0), coregion's W [3,2] and κ [3].
	ps := k.Params()
	var sev, ell, w, kappa []float64
	for _, p := range ps {
		switch p.Name() {
		case "se.variance":
			sev = p.Value()
		case "se.lengthscales":
			ell = p.Value()
		case "co.W":
			w = p.Value()
		case "co.kappa":
			kappa = p.Value()
		}
	}
	if sev == nil || ell == nil || w == nil || kappa == nil {
		t.Fatalf("params %v", ps)
	}
	kse := func(a, b []float64) float64 {
		r2 := 0.0
		for q, c := range []int{0, 2} {
			z := (a[c] - b[c]) / ell[q]
			r2 += z * z
		}
		return sev[0] * math.Exp(-r2/2)
	}
	for i := range n {
		for j := range m {
			a, b := x1[i*d:(i+1)*d], x2[j*d:(j+1)*d]
			p, q := int(a[1]), int(b[1])
			lmc := 0.0
			for r := range 2 {
				lmc += w[p*2+r] * w[q*2+r] * kse(a, b) // latent r, mixed into outputs p and q
			}
			if p == q {
				lmc += kappa[p] * kse(a, b) // output p's own latent
			}
			if g := got.At(i, j); math.Abs(g-lmc) > 1e-12*math.Abs(lmc) {
				t.Errorf("(%d,%d) tasks (%d,%d): se×coregion %v, LMC %v (rel %.2g)", i, j, p, q, g, lmc, math.Abs(g-lmc)/math.Abs(lmc))
			}
		}
	}
}

// TestCoregionHash: two coregion kernels that differ only in their task column, over the same input and the
// same W and κ nodes in one graph, stay two nodes (the column is in the op's hash through the function's Name).
func TestCoregionHash(t *testing.T) {
	t.Parallel()
	a, err := coregionCase("co", 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := coregionCase("co2", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	b.W, b.Kappa = a.W, a.Kappa // the same hyperparameter nodes
	g := graph.New(graph.Options{})
	x := g.Const("x", []float64{0, 2, 1, 0, 2, 1}, 3, 2)
	prog, err := g.CompileForward(map[string]*graph.Node{"a": a.K(x, x), "b": b.K(x, x)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	bm := coregionB(a)
	xs := []float64{0, 2, 1, 0, 2, 1}
	for i := range 3 {
		for j := range 3 {
			if got, want := prog.Output("a")[i*3+j], bm[int(xs[2*i])][int(xs[2*j])]; got != want {
				t.Errorf("column 0: K[%d,%d] = %v, want %v", i, j, got, want)
			}
			if got, want := prog.Output("b")[i*3+j], bm[int(xs[2*i+1])][int(xs[2*j+1])]; got != want {
				t.Errorf("column 1: K[%d,%d] = %v, want %v", i, j, got, want)
			}
		}
	}
}

// TestCoregionFamily: the family reads the last column and counts the tasks in KernelOptions.Inputs.
func TestCoregionFamily(t *testing.T) {
	t.Parallel()
	f, ok := gp.LookupKernel("coregion")
	if !ok {
		t.Fatal("coregion not registered")
	}
	for _, c := range []struct {
		inputs []float64
		want   int
	}{
		{nil, gp.DefaultTasks},
		{[]float64{0.5, 0, 1.5, 4, -2, 1}, 5},
		{[]float64{0.5, 0.5, 1.5, 2.25}, gp.DefaultTasks}, // no index: the default (the run will refuse them)
		{[]float64{0.5, 3, 1.5, 7.5}, 4},                  // the indices only
	} {
		k, err := f.New(gp.KernelOptions{InputDim: 2, Name: "c", Inputs: c.inputs})
		if err != nil {
			t.Fatal(err)
		}
		co := k.(*gp.Coregion)
		if co.Tasks() != c.want || co.Column() != 1 || co.Rank() != 1 {
			t.Errorf("inputs %v: tasks %d column %d rank %d, want %d, 1, 1", c.inputs, co.Tasks(), co.Column(), co.Rank(), c.want)
		}
	}
}

// TestCategoricalInputs: categorical columns are found through Active, Sum and Product, mapped to the input's
// columns, merged and sorted.
func TestCategoricalInputs(t *testing.T) {
	t.Parallel()
	k, err := seTimesCoregion(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "s2", InputDim: 4})
	if err != nil {
		t.Fatal(err)
	}
	co, err := gp.NewCoregion(gp.CoregionConfig{Name: "c2", InputDim: 4, Column: 1, Tasks: 5})
	if err != nil {
		t.Fatal(err)
	}
	co3, err := gp.NewCoregion(gp.CoregionConfig{Name: "c3", InputDim: 4, Column: 3, Tasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := gp.NewSum(k, se, co, co3)
	if err != nil {
		t.Fatal(err)
	}
	want := []gp.CategoricalInput{{Column: 1, Levels: 5}, {Column: 3, Levels: 2}}
	if got := gp.CategoricalInputs(sum); !slices.Equal(got, want) {
		t.Errorf("CategoricalInputs = %v, want %v", got, want)
	}
	if got := gp.CategoricalInputs(se); got != nil {
		t.Errorf("SE: %v", got)
	}
	gptest.CheckKernel(t, sum, rand.New(rand.NewPCG(7, 7))) // in a sum, with the task columns drawn as indices
}
