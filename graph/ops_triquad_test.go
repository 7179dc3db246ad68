package graph_test

import (
	"errors"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
)

// TestTriQuadCols checks the Graph method end to end: gradients through the LowerTriangular transform of two
// factors and through a (non-square) operand against finite differences, and a shape error made sticky.
func TestTriQuadCols(t *testing.T) {
	t.Parallel()
	a := mustParam(t, "a", []float64{0.3, -0.2, 0.5, 1.1, 0.4, -0.7, 0.2, 0.9, -0.3, 0.6, 0.1, -0.5}, nil, 3, 4)
	l0 := mustParam(t, "L0", []float64{1.2, 0, 0, 0.3, 0.8, 0, -0.1, 0.2, 1.5}, graph.LowerTriangular{}, 3, 3)
	l1 := mustParam(t, "L1", []float64{0.5, 0, 0, -0.4, 1.3, 0, 0.6, 0.1, 0.9}, graph.LowerTriangular{}, 3, 3)
	g := graph.New(graph.Options{})
	w := g.Input("w", 4, 2)
	out := g.TriQuadCols(g.Param(a), g.Param(l0), g.Param(l1))
	if s := out.Shape(); len(s) != 2 || s[0] != 4 || s[1] != 2 {
		t.Fatalf("shape %v, want [4 2]", s)
	}
	prog, err := g.Compile(g.Dot(w, out), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("w", []float64{1, -0.5, 0.3, 2, -1.2, 0.7, 0.4, -0.9}); err != nil {
		t.Fatal(err)
	}
	gradcheck.CheckProgram(t, prog)

	g2 := graph.New(graph.Options{})
	x := g2.Input("x", 3, 4)
	if _, err := g2.Compile(g2.Sum(g2.TriQuadCols(x, g2.Input("l", 4, 4))), nil); !errors.Is(err, ops.ErrShape) {
		t.Errorf("factor [4,4] for A [3,4]: %v, want ErrShape", err)
	}
	g3 := graph.New(graph.Options{})
	if _, err := g3.Compile(g3.Sum(g3.TriQuadCols(g3.Input("x", 3, 4))), nil); !errors.Is(err, ops.ErrShape) {
		t.Errorf("no factor: %v, want ErrShape", err)
	}
}
