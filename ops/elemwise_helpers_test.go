package ops_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Helpers shared by the tests of the elementwise, broadcast, reduction and triangular ops (prefix ew).

// ewLeaf adds a leaf with the shape and value of in to g.
func ewLeaf(g *G.ExprGraph, in gradcheck.Input) *G.Node {
	if len(in.Shape) == 0 {
		return G.NewScalar(g, tensor.Float64, G.WithName(in.Name), G.WithValue(in.Value[0]))
	}
	v := append([]float64(nil), in.Value...)
	return G.NewTensor(g, tensor.Float64, len(in.Shape), G.WithShape(in.Shape...), G.WithName(in.Name),
		G.WithValue(tensor.New(tensor.WithShape(in.Shape...), tensor.WithBacking(v))))
}

// ewIn returns an input with the given shape and values.
func ewIn(name string, shape []int, v ...float64) gradcheck.Input {
	return gradcheck.Input{Name: name, Shape: shape, Value: v}
}

// ewEval builds build on leaves holding ins, runs the graph forward and returns the output's shape and entries.
func ewEval(t *testing.T, build gradcheck.Build, ins ...gradcheck.Input) (tensor.Shape, []float64) {
	t.Helper()
	g := G.NewGraph()
	leaves := make([]*G.Node, len(ins))
	for i, in := range ins {
		leaves[i] = ewLeaf(g, in)
	}
	out, err := build(g, leaves)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	var v G.Value
	G.Read(out, &v)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatalf("run: %v", err)
	}
	switch x := v.(type) {
	case *G.F64:
		return tensor.ScalarShape(), []float64{float64(*x)}
	case *tensor.Dense:
		return x.Shape().Clone(), append([]float64(nil), x.Float64s()...)
	}
	t.Fatalf("output value is %T", v)
	return nil, nil
}

// ewClose fails t unless got and want agree entrywise to rel relative (or 1e-300 absolute) error; NaN and ±Inf
// must match exactly.
func ewClose(t *testing.T, what string, got, want []float64, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(w) || math.IsInf(w, 0) {
			if !(math.IsNaN(w) && math.IsNaN(g)) && g != w {
				t.Errorf("%s[%d] = %v, want %v", what, i, g, w)
			}
			continue
		}
		if d := math.Abs(g - w); d > 1e-300 && d > rel*math.Abs(w) {
			t.Errorf("%s[%d] = %.17g, want %.17g (rel err %.3g)", what, i, g, w, d/math.Abs(w))
		}
	}
}

// ewWantShapeError fails t unless err is a *ops.ShapeError.
func ewWantShapeError(t *testing.T, what string, n *G.Node, err error) {
	t.Helper()
	var se *ops.ShapeError
	if !errors.As(err, &se) {
		t.Errorf("%s: got node %v, error %v; want a *ops.ShapeError", what, n, err)
	}
}

// ewWantError fails t unless err is non-nil and n is nil.
func ewWantError(t *testing.T, what string, n *G.Node, err error) {
	t.Helper()
	if err == nil || n != nil {
		t.Errorf("%s: got node %v, error %v; want an error", what, n, err)
	}
}

// ewGraphNodes builds a graph with one [3,2] leaf and the nodes of fs applied to it.
func ewGraphNodes(t *testing.T, fs ...func(*G.Node) (*G.Node, error)) []*G.Node {
	t.Helper()
	g := G.NewGraph()
	x := ewLeaf(g, ewIn("x", []int{3, 2}, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6))
	out := make([]*G.Node, len(fs))
	for i, f := range fs {
		n, err := f(x)
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		out[i] = n
	}
	return out
}

// ewDistinct fails t unless the nodes are pairwise distinct with distinct hash codes.
func ewDistinct(t *testing.T, what string, ns []*G.Node) {
	t.Helper()
	for i := range ns {
		for j := i + 1; j < len(ns); j++ {
			if ns[i] == ns[j] || ns[i].Hashcode() == ns[j].Hashcode() || ns[i].ID() == ns[j].ID() {
				t.Errorf("%s: variants %d (%v) and %d (%v) merged or share hash %d", what, i, ns[i].Op(), j, ns[j].Op(), ns[i].Hashcode())
			}
		}
	}
}
