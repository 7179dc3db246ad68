package ops_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// noiseGraph builds a graph with one anchor leaf and one StandardNormal node per shape, all drawing from rng, and
// returns a function that runs the tape once and returns copies of the nodes' values.
func noiseGraph(t *testing.T, rng *rand.Rand, shapes ...[]int) func() [][]float64 {
	t.Helper()
	g := G.NewGraph()
	like := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("like"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4}))))
	vals := make([]G.Value, len(shapes))
	for i, s := range shapes {
		n, err := ops.StandardNormal(like, rng, s...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal([]int(n.Shape()), s) && !(len(s) == 0 && n.Shape().IsScalar()) {
			t.Fatalf("shape %v, want %v", n.Shape(), s)
		}
		G.Read(n, &vals[i])
	}
	vm := G.NewTapeMachine(g)
	t.Cleanup(func() { vm.Close() })
	return func() [][]float64 {
		t.Helper()
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		out := make([][]float64, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case *G.F64:
				out[i] = []float64{float64(*x)}
			case *tensor.Dense:
				out[i] = slices.Clone(x.Float64s())
			default:
				t.Fatalf("value %T", v)
			}
		}
		return out
	}
}

func TestStandardNormalReproducible(t *testing.T) {
	t.Parallel()
	run1 := noiseGraph(t, rand.New(rand.NewPCG(3, 4)), []int{5, 3}, []int{7})
	run2 := noiseGraph(t, rand.New(rand.NewPCG(3, 4)), []int{5, 3}, []int{7})
	for step := 0; step < 3; step++ {
		a, b := run1(), run2()
		for i := range a {
			if !slices.Equal(a[i], b[i]) {
				t.Fatalf("run %d, node %d: same seed, different draws:\n%v\n%v", step, i, a[i], b[i])
			}
		}
	}
	// A fresh sample at every run.
	first, second := run1(), run1()
	if slices.Equal(first[0], second[0]) {
		t.Error("two runs drew the same noise")
	}
}

func TestStandardNormalDistinctNodes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	// Same rng, same shape, same anchor: still two nodes with different samples.
	got := noiseGraph(t, rng, []int{4, 3}, []int{4, 3}, []int{})()
	if slices.Equal(got[0], got[1]) {
		t.Fatalf("two noise nodes gave the same sample %v", got[0])
	}
	if len(got[2]) != 1 {
		t.Fatalf("scalar noise has %d values", len(got[2]))
	}
	g := G.NewGraph()
	like := G.NewScalar(g, tensor.Float64, G.WithName("like"))
	a, err := ops.StandardNormal(like, rng, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ops.StandardNormal(like, rng, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.Hashcode() == b.Hashcode() {
		t.Errorf("noise nodes merged: %p %p hash %x %x", a, b, a.Hashcode(), b.Hashcode())
	}
}

// TestStandardNormalMoments: 1e5 draws have mean within 4 standard errors (1/√n) of 0 and variance within 4
// standard errors (√(2/n), the standard deviation of a normal sample variance) of 1.
func TestStandardNormalMoments(t *testing.T) {
	t.Parallel()
	const n = 100000
	x := noiseGraph(t, rand.New(rand.NewPCG(9, 10)), []int{n / 100, 100})()[0]
	mean, sq := 0.0, 0.0
	for _, v := range x {
		mean += v
	}
	mean /= n
	for _, v := range x {
		sq += (v - mean) * (v - mean)
	}
	variance := sq / (n - 1)
	if se := 1 / math.Sqrt(n); math.Abs(mean) > 4*se {
		t.Errorf("mean %g, more than 4 standard errors (%g) from 0", mean, se)
	}
	if se := math.Sqrt(2.0 / n); math.Abs(variance-1) > 4*se {
		t.Errorf("variance %g, more than 4 standard errors (%g) from 1", variance, se)
	}
}

func TestStandardNormalErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	like := G.NewScalar(g, tensor.Float64, G.WithName("like"))
	rng := rand.New(rand.NewPCG(1, 2))
	if _, err := ops.StandardNormal(like, nil, 2); err == nil {
		t.Error("nil rng accepted")
	}
	if _, err := ops.StandardNormal(like, rng, 2, 0); err == nil {
		t.Error("zero dimension accepted")
	}
	if _, err := ops.StandardNormal(nil, rng, 2); err == nil {
		t.Error("nil anchor accepted")
	}
}

// TestStandardNormalNotDifferentiated: noise that multiplies a parameter (as a deep-GP layer does) does not
// break the symbolic gradient, and the gradient is the noise itself.
func TestStandardNormalNotDifferentiated(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	w := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	eps, err := ops.StandardNormal(w, rand.New(rand.NewPCG(1, 1)), 3)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := ops.Dot(w, eps)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(loss, w)
	if err != nil {
		t.Fatal(err)
	}
	var ev G.Value
	G.Read(eps, &ev)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := grads[0].Value().(*tensor.Dense).Float64s()
	if want := ev.(*tensor.Dense).Float64s(); !slices.Equal(got, want) {
		t.Errorf("∂(w·ε)/∂w = %v, want ε = %v", got, want)
	}
}
