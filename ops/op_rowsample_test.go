package ops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The backward of TakeRows with a fixed index operand: an ordinary deterministic op, checked by central finite
// differences (repeated indices included: their gradients accumulate).
func TestTakeRowsGradFixedIndices(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	take := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.TakeRows(in[0], in[1]) }
	for _, tc := range []struct {
		name  string
		shape []int
		idx   []float64
	}{
		{"matrix", []int{5, 3}, []float64{4, 0, 2}},
		{"matrix-repeat", []int{4, 2}, []float64{1, 1, 3, 1, 0}},
		{"vector", []int{6}, []float64{5, 2}},
		{"single", []int{3, 2}, []float64{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := gradcheck.Input{Name: "idx", Shape: []int{len(tc.idx)}, Value: tc.idx, NoGrad: true}
			gradcheck.Check(t, take, []gradcheck.Input{gradcheck.Random("x", rng, -2, 2, tc.shape...), idx})
		})
	}
}

func TestTakeRowsForward(t *testing.T) {
	t.Parallel()
	x := ewIn("x", []int{3, 2}, 1, 2, 3, 4, 5, 6)
	take := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.TakeRows(in[0], in[1]) }
	s, got := ewEval(t, take, x, ewIn("idx", []int{4}, 2, 0, 2, 1))
	if !slices.Equal([]int(s), []int{4, 2}) {
		t.Fatalf("shape %v, want [4 2]", s)
	}
	ewClose(t, "TakeRows", got, []float64{5, 6, 1, 2, 5, 6, 3, 4}, 0)
}

// Invalid indices fail the run with a *ShapeError (no panic); invalid construction fails at build time.
func TestTakeRowsErrors(t *testing.T) {
	t.Parallel()
	for _, bad := range []float64{3, -1, 0.5, math.NaN(), math.Inf(1)} {
		g := G.NewGraph()
		x := ewLeaf(g, ewIn("x", []int{3, 2}, 1, 2, 3, 4, 5, 6))
		idx := ewLeaf(g, ewIn("idx", []int{2}, 0, bad))
		n, err := ops.TakeRows(x, idx)
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		err = vm.RunAll()
		vm.Close()
		if !errors.Is(ops.UnwrapVM(err), ops.ErrShape) {
			t.Errorf("index %v: run error %v, want ErrShape (node %v)", bad, err, n)
		}
	}
	g := G.NewGraph()
	x := ewLeaf(g, ewIn("x", []int{3, 2}, 1, 2, 3, 4, 5, 6))
	m := ewLeaf(g, ewIn("m", []int{2, 1}, 0, 1))
	n, err := ops.TakeRows(x, m)
	ewWantShapeError(t, "matrix indices", n, err)
	rng := rand.New(rand.NewPCG(1, 1))
	n, err = ops.SampleRows(x, rng, 4)
	ewWantShapeError(t, "b > m", n, err)
	n, err = ops.SampleRows(x, rng, 0)
	ewWantShapeError(t, "b = 0", n, err)
	n, err = ops.SampleRows(x, nil, 1)
	ewWantError(t, "nil rng", n, err)
	n, err = ops.SampleIndices(x, rng, 0, 0)
	ewWantShapeError(t, "m = 0", n, err)
	y := ewLeaf(g, ewIn("y", []int{2, 2}, 1, 2, 3, 4))
	if _, _, err := ops.SampleRowsPair(x, y, rng, 1); !errors.Is(err, ops.ErrShape) {
		t.Errorf("pair with different rows: %v", err)
	}
}

// rowSampleGraph builds SampleRowsPair(x, ids) on x [m,d] (distinct entries) and ids [m] (ids_i = i), with the loss
// Σ w ⊙ x_I and its gradient with respect to x; run returns the drawn indices, the gathered rows and ∂loss/∂x.
func rowSampleGraph(t *testing.T, rng *rand.Rand, m, d, b int, w []float64) func() (idx []int, rows, grad []float64) {
	t.Helper()
	g := G.NewGraph()
	xv := make([]float64, m*d)
	for i := range xv {
		xv[i] = float64(i) + 0.25
	}
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(m, d), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(m, d), tensor.WithBacking(xv))))
	iv := make([]float64, m)
	for i := range iv {
		iv[i] = float64(i)
	}
	ids := G.NewVector(g, tensor.Float64, G.WithShape(m), G.WithName("ids"), G.WithValue(tensor.New(tensor.WithShape(m), tensor.WithBacking(iv))))
	wn := G.NewMatrix(g, tensor.Float64, G.WithShape(b, d), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(b, d), tensor.WithBacking(w))))
	xs, is, err := ops.SampleRowsPair(x, ids, rng, b)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := ops.Dot(wn, xs)
	if err != nil {
		t.Fatal(err)
	}
	gx, err := G.Grad(loss, x)
	if err != nil {
		t.Fatal(err)
	}
	var vx, vi, vg G.Value
	G.Read(xs, &vx)
	G.Read(is, &vi)
	G.Read(gx[0], &vg)
	vm := G.NewTapeMachine(g)
	t.Cleanup(func() { vm.Close() })
	return func() ([]int, []float64, []float64) {
		t.Helper()
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		fi := vi.(*tensor.Dense).Float64s()
		idx := make([]int, len(fi))
		for i, v := range fi {
			idx[i] = int(v)
		}
		return idx, slices.Clone(vx.(*tensor.Dense).Float64s()), slices.Clone(vg.(*tensor.Dense).Float64s())
	}
}

// Every run draws b distinct indices; the pair's two gathers share them; the backward scatters the output
// gradient into exactly those rows (zero elsewhere); the draws change between runs and repeat with the seed.
func TestSampleRowsPairScatter(t *testing.T) {
	t.Parallel()
	const m, d, b = 7, 2, 3
	w := []float64{1, -2, 3, -4, 5, -6}
	run := rowSampleGraph(t, rand.New(rand.NewPCG(8, 9)), m, d, b, w)
	again := rowSampleGraph(t, rand.New(rand.NewPCG(8, 9)), m, d, b, w)
	changed := false
	var prev []int
	for step := 0; step < 20; step++ {
		idx, rows, grad := run()
		idx2, _, _ := again()
		if !slices.Equal(idx, idx2) {
			t.Fatalf("run %d: same seed, different draws %v and %v", step, idx, idx2)
		}
		seen := map[int]bool{}
		want := make([]float64, m*d)
		for r, i := range idx {
			if i < 0 || i >= m || seen[i] {
				t.Fatalf("run %d: indices %v not distinct in [0,%d)", step, idx, m)
			}
			seen[i] = true
			for c := 0; c < d; c++ {
				if rows[r*d+c] != float64(i*d+c)+0.25 {
					t.Fatalf("run %d: gathered row %d = %v, want row %d of x", step, r, rows[r*d:(r+1)*d], i)
				}
				want[i*d+c] = w[r*d+c]
			}
		}
		if !slices.Equal(grad, want) {
			t.Fatalf("run %d: indices %v: gradient %v, want %v", step, idx, grad, want)
		}
		changed = changed || (prev != nil && !slices.Equal(prev, idx))
		prev = idx
	}
	if !changed {
		t.Error("the indices never changed between runs")
	}
}

// Each index is drawn with probability b/m (uniform subsets), and (m/b)·Σ_{i∈I} v_i is unbiased for Σ v.
func TestSampleRowsUniform(t *testing.T) {
	t.Parallel()
	const m, d, b, runs = 6, 1, 2, 6000
	run := rowSampleGraph(t, rand.New(rand.NewPCG(10, 11)), m, d, b, []float64{1, 1})
	count := make([]float64, m)
	sum, sum2 := 0.0, 0.0
	for r := 0; r < runs; r++ {
		idx, rows, _ := run()
		for _, i := range idx {
			count[i]++
		}
		est := float64(m) / b * (rows[0] + rows[1])
		sum += est
		sum2 += est * est
	}
	p := float64(b) / m
	sd := math.Sqrt(runs * p * (1 - p))
	for i, c := range count {
		if math.Abs(c-runs*p) > 4*sd {
			t.Errorf("index %d drawn %v times, want %v ± %.1f", i, c, runs*p, 4*sd)
		}
	}
	mean := sum / runs
	se := math.Sqrt((sum2/runs - mean*mean) / runs)
	exact := 0.0
	for i := 0; i < m; i++ {
		exact += float64(i) + 0.25
	}
	if math.Abs(mean-exact) > 3*se {
		t.Errorf("estimator mean %v, exact %v (3 SE = %v)", mean, exact, 3*se)
	}
}

// Two SampleRows nodes with the same generator, size and operand are distinct nodes drawing independently.
func TestSampleRowsDistinctNodes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	ns := ewGraphNodes(t,
		func(x *G.Node) (*G.Node, error) { return ops.SampleRows(x, rng, 2) },
		func(x *G.Node) (*G.Node, error) { return ops.SampleRows(x, rng, 2) },
		func(x *G.Node) (*G.Node, error) { return ops.SampleIndices(x, rng, 3, 2) },
		func(x *G.Node) (*G.Node, error) { return ops.SampleIndices(x, rng, 3, 2) })
	ewDistinct(t, "SampleRows", ns)
}
