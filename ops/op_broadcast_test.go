package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

var ewRowColOps = []struct {
	name  string
	op    func(x, v *G.Node) (*G.Node, error)
	byRow bool
	mul   bool
}{
	{"AddRow", ops.AddRow, true, false},
	{"MulRow", ops.MulRow, true, true},
	{"AddCol", ops.AddCol, false, false},
	{"MulCol", ops.MulCol, false, true},
}

func TestRowColGrad(t *testing.T) {
	t.Parallel()
	for i, tc := range ewRowColOps {
		for _, xs := range [][]int{{3, 2}, {1, 4}, {4, 1}} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, xs), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), uint64(xs[0])))
				vn := xs[0]
				if tc.byRow {
					vn = xs[1]
				}
				gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return tc.op(in[0], in[1]) },
					[]gradcheck.Input{gradcheck.Random("x", rng, -2, 2, xs...), gradcheck.Random("v", rng, -2, 2, vn)})
			})
		}
	}
}

func TestRowColForward(t *testing.T) {
	t.Parallel()
	x := ewIn("x", []int{2, 3}, 1, 2, 3, 4, 5, 6)
	r := ewIn("r", []int{3}, 10, 20, 30)
	c := ewIn("c", []int{2}, -1, 2)
	for _, tc := range []struct {
		name string
		op   func(x, v *G.Node) (*G.Node, error)
		v    gradcheck.Input
		want []float64
	}{
		{"AddRow", ops.AddRow, r, []float64{11, 22, 33, 14, 25, 36}},
		{"MulRow", ops.MulRow, r, []float64{10, 40, 90, 40, 100, 180}},
		{"AddCol", ops.AddCol, c, []float64{0, 1, 2, 6, 7, 8}},
		{"MulCol", ops.MulCol, c, []float64{-1, -2, -3, 8, 10, 12}},
	} {
		_, got := ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return tc.op(in[0], in[1]) }, x, tc.v)
		ewClose(t, tc.name, got, tc.want, 0)
	}
}

func TestShapeOpsGrad(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	un := func(f func(*G.Node) (*G.Node, error)) gradcheck.Build {
		return func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return f(in[0]) }
	}
	for _, tc := range []struct {
		name  string
		build gradcheck.Build
		in    []gradcheck.Input
	}{
		{"Repeat[3,2]", un(func(x *G.Node) (*G.Node, error) { return ops.Repeat(x, 3, 2) }), []gradcheck.Input{gradcheck.Random("v", rng, -1, 1)}},
		{"Repeat[4]", un(func(x *G.Node) (*G.Node, error) { return ops.Repeat(x, 4) }), []gradcheck.Input{gradcheck.Random("v", rng, -1, 1)}},
		{"Repeat[]", un(func(x *G.Node) (*G.Node, error) { return ops.Repeat(x) }), []gradcheck.Input{gradcheck.Random("v", rng, -1, 1)}},
		{"Reshape[3,2]->[2,3]", un(func(x *G.Node) (*G.Node, error) { return ops.Reshape(x, 2, 3) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 3, 2)}},
		{"Reshape[3,2]->[6]", un(func(x *G.Node) (*G.Node, error) { return ops.Reshape(x, 6) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 3, 2)}},
		{"Reshape[6]->[3,2]", un(func(x *G.Node) (*G.Node, error) { return ops.Reshape(x, 3, 2) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 6)}},
		{"Reshape[1]->[]", un(func(x *G.Node) (*G.Node, error) { return ops.Reshape(x) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 1)}},
		{"Transpose[3,2]", un(ops.Transpose), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 3, 2)}},
		{"Transpose[1,4]", un(ops.Transpose), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 1, 4)}},
		{"Col0", un(func(x *G.Node) (*G.Node, error) { return ops.Col(x, 0) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 3, 2)}},
		{"Col1", un(func(x *G.Node) (*G.Node, error) { return ops.Col(x, 1) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 3, 2)}},
		{"StackCols3", func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.StackCols(in...) },
			[]gradcheck.Input{gradcheck.Random("a", rng, -1, 1, 4), gradcheck.Random("b", rng, -1, 1, 4), gradcheck.Random("c", rng, -1, 1, 4)}},
		{"StackCols1", func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.StackCols(in...) },
			[]gradcheck.Input{gradcheck.Random("a", rng, -1, 1, 3)}},
		{"SliceRowsMatrix", un(func(x *G.Node) (*G.Node, error) { return ops.SliceRows(x, 1, 3) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 4, 2)}},
		{"SliceRowsVector", un(func(x *G.Node) (*G.Node, error) { return ops.SliceRows(x, 0, 2) }), []gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 5)}},
	} {
		t.Run(tc.name, func(t *testing.T) { gradcheck.Check(t, tc.build, tc.in) })
	}
}

func TestShapeOpsForward(t *testing.T) {
	t.Parallel()
	x := ewIn("x", []int{2, 3}, 1, 2, 3, 4, 5, 6)
	un := func(f func(*G.Node) (*G.Node, error)) gradcheck.Build {
		return func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return f(in[0]) }
	}
	for _, tc := range []struct {
		name  string
		build gradcheck.Build
		in    []gradcheck.Input
		shape string
		want  []float64
	}{
		{"Repeat", un(func(v *G.Node) (*G.Node, error) { return ops.Repeat(v, 2, 2) }), []gradcheck.Input{ewIn("v", nil, 1.5)}, "[2 2]", []float64{1.5, 1.5, 1.5, 1.5}},
		{"Reshape", un(func(v *G.Node) (*G.Node, error) { return ops.Reshape(v, 3, 2) }), []gradcheck.Input{x}, "[3 2]", []float64{1, 2, 3, 4, 5, 6}},
		{"Transpose", un(ops.Transpose), []gradcheck.Input{x}, "[3 2]", []float64{1, 4, 2, 5, 3, 6}},
		{"Col2", un(func(v *G.Node) (*G.Node, error) { return ops.Col(v, 2) }), []gradcheck.Input{x}, "[2]", []float64{3, 6}},
		{"StackCols", func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.StackCols(in...) },
			[]gradcheck.Input{ewIn("a", []int{2}, 1, 2), ewIn("b", []int{2}, 3, 4), ewIn("c", []int{2}, 5, 6)}, "[2 3]", []float64{1, 3, 5, 2, 4, 6}},
		{"SliceRows", un(func(v *G.Node) (*G.Node, error) { return ops.SliceRows(v, 1, 2) }), []gradcheck.Input{x}, "[1 3]", []float64{4, 5, 6}},
		{"SliceRowsVec", un(func(v *G.Node) (*G.Node, error) { return ops.SliceRows(v, 2, 4) }), []gradcheck.Input{ewIn("v", []int{5}, 1, 2, 3, 4, 5)}, "[2]", []float64{3, 4}},
	} {
		shape, got := ewEval(t, tc.build, tc.in...)
		if s := fmt.Sprint([]int(shape)); s != tc.shape {
			t.Errorf("%s: shape %s, want %s", tc.name, s, tc.shape)
		}
		ewClose(t, tc.name, got, tc.want, 0)
	}
}

// TestTransposeIsCopy: the output of Transpose does not alias its input.
func TestTransposeIsCopy(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	x := ewLeaf(g, ewIn("x", []int{2, 2}, 1, 2, 3, 4))
	y, err := ops.Transpose(x)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	yd := y.Value().Data().([]float64)
	xd := x.Value().Data().([]float64)
	if &yd[0] == &xd[0] {
		t.Fatal("Transpose output aliases its input")
	}
	yd[0] = 99
	if xd[0] != 1 {
		t.Fatal("writing Transpose's output changed its input")
	}
}

func TestBroadcastShapeErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m := ewLeaf(g, ewIn("m", []int{2, 3}, 1, 2, 3, 4, 5, 6))
	v2 := ewLeaf(g, ewIn("v2", []int{2}, 1, 2))
	v3 := ewLeaf(g, ewIn("v3", []int{3}, 1, 2, 3))
	s := ewLeaf(g, ewIn("s", nil, 1))
	for _, tc := range ewRowColOps {
		bad := v3 // wrong length for columns
		if tc.byRow {
			bad = v2
		}
		n, err := tc.op(m, bad)
		ewWantShapeError(t, tc.name+"(wrong length)", n, err)
		n, err = tc.op(v3, v3)
		ewWantShapeError(t, tc.name+"(vector x)", n, err)
		n, err = tc.op(m, s)
		ewWantShapeError(t, tc.name+"(scalar v)", n, err)
		n, err = tc.op(nil, v3)
		ewWantError(t, tc.name+"(nil, v)", n, err)
		n, err = tc.op(m, nil)
		ewWantError(t, tc.name+"(x, nil)", n, err)
	}
	for name, f := range map[string]func() (*G.Node, error){
		"Repeat(vector)":    func() (*G.Node, error) { return ops.Repeat(v2, 2) },
		"Repeat(0 size)":    func() (*G.Node, error) { return ops.Repeat(s, 2, 0) },
		"Reshape(size)":     func() (*G.Node, error) { return ops.Reshape(m, 4) },
		"Reshape(-1)":       func() (*G.Node, error) { return ops.Reshape(m, -1, -6) },
		"Transpose(vector)": func() (*G.Node, error) { return ops.Transpose(v2) },
		"Col(vector)":       func() (*G.Node, error) { return ops.Col(v2, 0) },
		"Col(3)":            func() (*G.Node, error) { return ops.Col(m, 3) },
		"Col(-1)":           func() (*G.Node, error) { return ops.Col(m, -1) },
		"StackCols()":       func() (*G.Node, error) { return ops.StackCols() },
		"StackCols(2,3)":    func() (*G.Node, error) { return ops.StackCols(v2, v3) },
		"StackCols(matrix)": func() (*G.Node, error) { return ops.StackCols(m) },
		"SliceRows(2,1)":    func() (*G.Node, error) { return ops.SliceRows(m, 2, 1) },
		"SliceRows(0,3)":    func() (*G.Node, error) { return ops.SliceRows(m, 0, 3) },
		"SliceRows(-1,1)":   func() (*G.Node, error) { return ops.SliceRows(m, -1, 1) },
		"SliceRows(scalar)": func() (*G.Node, error) { return ops.SliceRows(s, 0, 1) },
	} {
		n, err := f()
		ewWantShapeError(t, name, n, err)
	}
	for name, f := range map[string]func() (*G.Node, error){
		"Repeat(nil)":         func() (*G.Node, error) { return ops.Repeat(nil, 2) },
		"Reshape(nil)":        func() (*G.Node, error) { return ops.Reshape(nil, 2) },
		"Transpose(nil)":      func() (*G.Node, error) { return ops.Transpose(nil) },
		"Col(nil)":            func() (*G.Node, error) { return ops.Col(nil, 0) },
		"StackCols(v2, nil)":  func() (*G.Node, error) { return ops.StackCols(v2, nil) },
		"SliceRows(nil, 0,1)": func() (*G.Node, error) { return ops.SliceRows(nil, 0, 1) },
	} {
		n, err := f()
		ewWantError(t, name, n, err)
	}
}

// TestShapeOpsHashDistinct: the index/shape constants enter the hash.
func TestShapeOpsHashDistinct(t *testing.T) {
	t.Parallel()
	col := func(j int) func(*G.Node) (*G.Node, error) {
		return func(x *G.Node) (*G.Node, error) { return ops.Col(x, j) }
	}
	sl := func(a, b int) func(*G.Node) (*G.Node, error) {
		return func(x *G.Node) (*G.Node, error) { return ops.SliceRows(x, a, b) }
	}
	rs := func(s ...int) func(*G.Node) (*G.Node, error) {
		return func(x *G.Node) (*G.Node, error) { return ops.Reshape(x, s...) }
	}
	ewDistinct(t, "Col", ewGraphNodes(t, col(0), col(1)))
	ewDistinct(t, "SliceRows", ewGraphNodes(t, sl(0, 1), sl(1, 2), sl(0, 2), sl(1, 3)))
	ewDistinct(t, "Reshape", ewGraphNodes(t, rs(2, 3), rs(6, 1), rs(1, 6), ops.Transpose))
	// Repeat of one scalar to two shapes.
	g := G.NewGraph()
	s := ewLeaf(g, ewIn("s", nil, 2))
	a, err := ops.Repeat(s, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ops.Repeat(s, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	ewDistinct(t, "Repeat", []*G.Node{a, b})
}
