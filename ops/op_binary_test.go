package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

var ewBinaryOps = []struct {
	name string
	op   func(a, b *G.Node) (*G.Node, error)
	f    func(a, b float64) float64
}{
	{"Add", ops.Add, func(a, b float64) float64 { return a + b }},
	{"Sub", ops.Sub, func(a, b float64) float64 { return a - b }},
	{"Mul", ops.Mul, func(a, b float64) float64 { return a * b }},
	{"Div", ops.Div, func(a, b float64) float64 { return a / b }},
}

// TestBinaryGrad checks both operands' gradients for equal shapes and for a broadcast scalar on either side.
func TestBinaryGrad(t *testing.T) {
	t.Parallel()
	for i, tc := range ewBinaryOps {
		for _, sh := range []struct{ a, b []int }{
			{[]int{3, 2}, []int{3, 2}},
			{[]int{4}, []int{4}},
			{[]int{}, []int{3, 2}}, // scalar left
			{[]int{3, 2}, []int{}}, // scalar right
			{[]int{}, []int{4}},
			{[]int{4}, []int{}},
			{[]int{}, []int{}},
		} {
			t.Run(fmt.Sprintf("%s/%v,%v", tc.name, sh.a, sh.b), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), uint64(len(sh.a)*3+len(sh.b))))
				gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return tc.op(in[0], in[1]) },
					[]gradcheck.Input{gradcheck.Random("a", rng, -2, 2, sh.a...), gradcheck.Random("b", rng, 0.5, 2, sh.b...)})
			})
		}
	}
}

func TestBinaryForward(t *testing.T) {
	t.Parallel()
	a := []float64{1, -2, 3.5, 4, -0.5, 6}
	b := []float64{0.5, 2, -1, 8, 3, -4}
	for _, tc := range ewBinaryOps {
		for _, mode := range []string{"equal", "scalarLeft", "scalarRight"} {
			ia, ib := ewIn("a", []int{2, 3}, a...), ewIn("b", []int{2, 3}, b...)
			switch mode {
			case "scalarLeft":
				ia = ewIn("a", nil, 1.5)
			case "scalarRight":
				ib = ewIn("b", nil, -2.5)
			}
			shape, got := ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return tc.op(in[0], in[1]) }, ia, ib)
			if len(shape) != 2 || shape[0] != 2 || shape[1] != 3 {
				t.Errorf("%s/%s: shape %v, want (2, 3)", tc.name, mode, shape)
			}
			want := make([]float64, 6)
			for i := range want {
				x, y := a[i], b[i]
				if mode == "scalarLeft" {
					x = 1.5
				}
				if mode == "scalarRight" {
					y = -2.5
				}
				want[i] = tc.f(x, y)
			}
			ewClose(t, tc.name+"/"+mode, got, want, 1e-15)
		}
	}
}

func TestBinaryErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m32 := ewLeaf(g, ewIn("m32", []int{3, 2}, 1, 2, 3, 4, 5, 6))
	m23 := ewLeaf(g, ewIn("m23", []int{2, 3}, 1, 2, 3, 4, 5, 6))
	v3 := ewLeaf(g, ewIn("v3", []int{3}, 1, 2, 3))
	c31 := ewLeaf(g, ewIn("c31", []int{3, 1}, 1, 2, 3))
	v1 := ewLeaf(g, ewIn("v1", []int{1}, 1))
	s := ewLeaf(g, ewIn("s", nil, 1))
	for _, tc := range ewBinaryOps {
		for _, p := range []struct {
			what string
			a, b *G.Node
		}{{"[3,2],[2,3]", m32, m23}, {"[3],[3,1]", v3, c31}, {"[3,2],[3]", m32, v3}, {"[1],[3]", v1, v3}} {
			n, err := tc.op(p.a, p.b)
			ewWantShapeError(t, tc.name+p.what, n, err)
		}
		n, err := tc.op(nil, s)
		ewWantError(t, tc.name+"(nil, s)", n, err)
		n, err = tc.op(s, nil)
		ewWantError(t, tc.name+"(s, nil)", n, err)
	}
	// Distinct ops on the same operands are distinct nodes.
	var ns []*G.Node
	for _, tc := range ewBinaryOps {
		n, err := tc.op(m32, s)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, n)
	}
	ewDistinct(t, "binary", ns)
}
