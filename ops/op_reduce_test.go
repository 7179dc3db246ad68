package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
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
	for name, op := range map[string]func(*G.Node) (*G.Node, error){"SumRows": ops.SumRows, "SumCols": ops.SumCols} {
		n, err := op(v)
		ewWantShapeError(t, name+"(vector)", n, err)
		n, err = op(s)
		ewWantShapeError(t, name+"(scalar)", n, err)
	}
	for name, op := range map[string]func(*G.Node) (*G.Node, error){"Sum": ops.Sum, "Mean": ops.Mean, "SumRows": ops.SumRows, "SumCols": ops.SumCols} {
		n, err := op(nil)
		ewWantError(t, name+"(nil)", n, err)
	}
	ewDistinct(t, "reductions", ewGraphNodes(t, ops.Sum, ops.Mean, ops.SumRows, ops.SumCols))
}
