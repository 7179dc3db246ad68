package ops_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestReduceGrad(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name   string
		op     func(*G.Node) (*G.Node, error)
		shapes [][]int
	}{
		{"Sum", ops.Sum, [][]int{{3, 2}, {4}, {}}},
		{"Mean", ops.Mean, [][]int{{3, 2}, {4}, {}}},
		{"SumRows", ops.SumRows, [][]int{{3, 2}, {1, 4}, {4, 1}}},
		{"SumCols", ops.SumCols, [][]int{{3, 2}, {1, 4}, {4, 1}}},
		{"SumRowsSq", ops.SumRowsSq, [][]int{{3, 2}, {1, 4}, {4, 1}, {3, 300}}}, // 300 columns: split over goroutines
	} {
		for _, shape := range tc.shapes {
			t.Run(fmt.Sprintf("%s/%v", tc.name, shape), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), uint64(len(shape))))
				gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return tc.op(in[0]) },
					[]gradcheck.Input{gradcheck.Random("x", rng, -2, 2, shape...)})
			})
		}
	}
}

func TestReduceForward(t *testing.T) {
	t.Parallel()
	x := ewIn("x", []int{2, 3}, 1, 2, 3, 4, 5, 6)
	for _, tc := range []struct {
		name  string
		op    func(*G.Node) (*G.Node, error)
		shape []int
		want  []float64
	}{
		{"Sum", ops.Sum, nil, []float64{21}},
		{"Mean", ops.Mean, nil, []float64{3.5}},
		{"SumRows", ops.SumRows, []int{3}, []float64{5, 7, 9}},
		{"SumCols", ops.SumCols, []int{2}, []float64{6, 15}},
		{"SumRowsSq", ops.SumRowsSq, []int{3}, []float64{17, 29, 45}},
	} {
		shape, got := ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return tc.op(in[0]) }, x)
		if fmt.Sprint([]int(shape)) != fmt.Sprint(append([]int{}, tc.shape...)) {
			t.Errorf("%s: shape %v, want %v", tc.name, shape, tc.shape)
		}
		ewClose(t, tc.name, got, tc.want, 1e-15)
	}
}

func TestReduceErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	v := ewLeaf(g, ewIn("v", []int{3}, 1, 2, 3))
	s := ewLeaf(g, ewIn("s", nil, 1))
	for name, op := range map[string]func(*G.Node) (*G.Node, error){"SumRows": ops.SumRows, "SumCols": ops.SumCols, "SumRowsSq": ops.SumRowsSq} {
		n, err := op(v)
		ewWantShapeError(t, name+"(vector)", n, err)
		n, err = op(s)
		ewWantShapeError(t, name+"(scalar)", n, err)
	}
	for name, op := range map[string]func(*G.Node) (*G.Node, error){"Sum": ops.Sum, "Mean": ops.Mean, "SumRows": ops.SumRows, "SumCols": ops.SumCols, "SumRowsSq": ops.SumRowsSq} {
		n, err := op(nil)
		ewWantError(t, name+"(nil)", n, err)
	}
	ewDistinct(t, "reductions", ewGraphNodes(t, ops.Sum, ops.Mean, ops.SumRows, ops.SumCols, ops.SumRowsSq))
}

// SumRowsSq splits its columns (forward) and entries (backward) over goroutines: the same bits as one thread, and
// the bits of SumRows(Square(x)) in the forward pass (each column summed in row order either way).
func TestSumRowsSqParallelMatchesSerial(t *testing.T) {
	const n, m = 37, 1000
	rng := rand.New(rand.NewPCG(6, 6))
	x := make([]float64, n*m)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	run := func(procs int, fused bool) (out, grad []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		g := G.NewGraph()
		xn := G.NewTensor(g, tensor.Float64, 2, G.WithShape(n, m), G.WithName("x"),
			G.WithValue(tensor.New(tensor.WithShape(n, m), tensor.WithBacking(append([]float64(nil), x...)))))
		var s *G.Node
		var err error
		if fused {
			s, err = ops.SumRowsSq(xn)
		} else if s, err = ops.Square(xn); err == nil {
			s, err = ops.SumRows(s)
		}
		if err != nil {
			t.Fatal(err)
		}
		loss, err := ops.Sum(s)
		if err != nil {
			t.Fatal(err)
		}
		var sv G.Value
		G.Read(s, &sv)
		if _, err := G.Grad(loss, xn); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		gx, _ := xn.Grad()
		return append([]float64(nil), sv.Data().([]float64)...), append([]float64(nil), gx.Data().([]float64)...)
	}
	o1, g1 := run(1, true)
	o2, g2 := run(2, true)
	oc, gc := run(1, false)
	for j := range o1 {
		if o1[j] != o2[j] || o1[j] != oc[j] {
			t.Fatalf("column %d: serial %v, parallel %v, SumRows(Square) %v", j, o1[j], o2[j], oc[j])
		}
	}
	for i := range g1 {
		if g1[i] != g2[i] || g1[i] != gc[i] {
			t.Fatalf("gradient %d: serial %v, parallel %v, SumRows(Square) %v", i, g1[i], g2[i], gc[i])
		}
	}
}
