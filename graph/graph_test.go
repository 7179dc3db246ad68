package graph_test

import (
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
)

func mustParam(t *testing.T, name string, v []float64, tr graph.Transform, shape ...int) *graph.Param {
	t.Helper()
	p, err := graph.NewParam(name, v, tr, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTransformsRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tr    graph.Transform
		v     []float64
		shape []int
	}{
		{graph.Identity{}, []float64{-3, 0, 2.5}, []int{3}},
		{graph.Positive{}, []float64{1e-3, 1, 40}, []int{3}},
		{graph.Positive{Floor: 0.5}, []float64{0.6, 3}, []int{2}},
		{graph.LowerTriangular{}, []float64{2, 0, -0.3, 0.7}, []int{2, 2}},
	}
	for _, c := range cases {
		p := mustParam(t, "p", c.v, c.tr, c.shape...)
		got := p.Value()
		for i := range got {
			if math.Abs(got[i]-c.v[i]) > 1e-12*math.Max(1, math.Abs(c.v[i])) {
				t.Errorf("%v: value[%d] = %v, want %v", c.tr, i, got[i], c.v[i])
			}
		}
	}
}

func TestNewParamErrors(t *testing.T) {
	t.Parallel()
	if _, err := graph.NewParam("p", []float64{-1}, graph.Positive{}); err == nil {
		t.Error("negative value for Positive accepted")
	}
	if _, err := graph.NewParam("p", []float64{1, 2}, nil, 3); !errors.Is(err, ops.ErrShape) {
		t.Errorf("size mismatch: got %v, want ErrShape", err)
	}
	if _, err := graph.NewParam("p", []float64{math.NaN()}, nil); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("NaN: got %v, want ErrNonFinite", err)
	}
	if _, err := graph.NewParam("L", []float64{1, 1, 0, 1}, graph.LowerTriangular{}, 2, 2); err == nil {
		t.Error("non-triangular value for LowerTriangular accepted")
	}
	if _, err := graph.NewParam("", []float64{1}, nil); err == nil {
		t.Error("empty name accepted")
	}
}

// A least-squares loss ‖X·w + b − y‖² through MatMul, AddRow-free ops and a Positive transform.
func TestProgramGradients(t *testing.T) {
	t.Parallel()
	w := mustParam(t, "w", []float64{0.3, -0.2, 0.5}, nil, 3, 1)
	s := mustParam(t, "s", []float64{0.7}, graph.Positive{})
	l := mustParam(t, "L", []float64{1.2, 0, 0, 0.3, 0.8, 0, -0.1, 0.2, 1.5}, graph.LowerTriangular{}, 3, 3)
	g := graph.New(graph.Options{})
	x := g.Input("x", 4, 3)
	y := g.Input("y", 4, 1)
	r := g.Sub(g.MatMul(x, g.Param(w), false, false), y)
	sl := g.MatMul(g.Param(l), g.Param(l), false, true)
	loss := g.Add(g.Mul(g.Dot(r, r), g.Param(s)), g.LogDetChol(g.Cholesky(g.AddDiag(sl, g.Param(s)))))
	g.Monitor("residual", r)
	prog, err := g.Compile(loss, map[string]*graph.Node{"r": r})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", []float64{1, 2, 3, 0, 1, 0, -1, 0.5, 2, 0.3, 0.3, 0.3}); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("y", []float64{1, -1, 0.5, 2}); err != nil {
		t.Fatal(err)
	}
	gradcheck.CheckProgram(t, prog)
	if got := len(prog.Monitored("residual")); got != 4 {
		t.Errorf("monitored residual has %d values, want 4", got)
	}
	if got := prog.Output("r"); len(got) != 4 || got[0] != prog.Monitored("residual")[0] {
		t.Errorf("output r = %v, monitor %v", got, prog.Monitored("residual"))
	}
	if err := prog.Set("x", []float64{1}); !errors.Is(err, ops.ErrShape) {
		t.Errorf("Set with wrong size: %v, want ErrShape", err)
	}
	if err := prog.Set("nope", nil); err == nil {
		t.Error("Set of an unknown input accepted")
	}
}

// Two Params with the same name must stay two leaves: gorgonia merges input nodes by name.
func TestSameNameParamsNotMerged(t *testing.T) {
	t.Parallel()
	a1 := mustParam(t, "a", []float64{2}, nil)
	a2 := mustParam(t, "a", []float64{5}, nil)
	g := graph.New(graph.Options{})
	loss := g.Sub(g.Param(a1), g.Scale(g.Param(a2), 3))
	prog, err := g.Compile(loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	if got := prog.Loss(); got != 2-15 {
		t.Errorf("loss = %v, want -13", got)
	}
	if g1, g2 := prog.Grad(a1)[0], prog.Grad(a2)[0]; g1 != 1 || g2 != -3 {
		t.Errorf("grads = %v, %v; want 1, -3", g1, g2)
	}
}

func TestStickyErrorsAndNoPanic(t *testing.T) {
	t.Parallel()
	g := graph.New(graph.Options{})
	a := g.Input("a", 2, 3)
	b := g.Input("b", 4, 5)
	bad := g.MatMul(a, b, false, false) // inner dims 3 vs 4
	out := g.Sum(g.Exp(bad))            // later ops are no-ops
	if _, err := g.Compile(out, nil); !errors.Is(err, ops.ErrShape) {
		t.Fatalf("Compile after a shape error: %v, want ErrShape", err)
	}
	g2 := graph.New(graph.Options{})
	if _, err := g2.Compile(nil, nil); err == nil {
		t.Error("Compile(nil) accepted")
	}
	g3 := graph.New(graph.Options{})
	g3.Input("x", 2)
	g3.Input("x", 2)
	if g3.Err() == nil {
		t.Error("duplicate input name accepted")
	}
	g4 := graph.New(graph.Options{})
	other := graph.New(graph.Options{})
	if g4.Add(g4.Input("x", 2), other.Input("y", 2)); g4.Err() == nil {
		t.Error("operand from another graph accepted")
	}
	g5 := graph.New(graph.Options{})
	if _, err := g5.Compile(g5.Input("v", 3), nil); !errors.Is(err, ops.ErrShape) {
		t.Errorf("non-scalar loss: %v, want ErrShape", err)
	}
}

func TestNotInLoss(t *testing.T) {
	t.Parallel()
	p := mustParam(t, "used", []float64{1}, nil)
	q := mustParam(t, "unused", []float64{1}, nil)
	g := graph.New(graph.Options{})
	g.Param(q)
	if _, err := g.Compile(g.Square(g.Param(p)), nil); !errors.Is(err, graph.ErrNotInLoss) {
		t.Errorf("got %v, want ErrNotInLoss", err)
	}
	q.SetTrainable(false)
	g2 := graph.New(graph.Options{})
	g2.Param(q)
	prog, err := g2.Compile(g2.Square(g2.Param(p)), nil)
	if err != nil {
		t.Fatalf("frozen unused param: %v", err)
	}
	prog.Close()
}

func TestRunNotPD(t *testing.T) {
	t.Parallel()
	g := graph.New(graph.Options{Jitter: ops.JitterPolicy{MaxTries: 2}})
	a := g.Input("a", 2, 2)
	prog, err := g.CompileForward(map[string]*graph.Node{"L": g.Cholesky(a)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("a", []float64{1, 2, 2, 1}); err != nil { // eigenvalues 3 and −1
		t.Fatal(err)
	}
	err = prog.Run()
	var np *ops.NotPDError
	if !errors.As(err, &np) {
		t.Fatalf("got %v, want *ops.NotPDError", err)
	}
	if np.Tries != 3 {
		t.Errorf("Tries = %d, want 3 (1 plain + 2 retries)", np.Tries)
	}
	if s := prog.CholeskyStats(); s.Retries != 2 || s.Failures != 1 {
		t.Errorf("stats = %+v, want 2 retries, 1 failure", s)
	}
	if err := prog.Set("a", []float64{1, math.NaN(), math.NaN(), 1}); err != nil {
		t.Fatal(err)
	}
	var nf *ops.NonFiniteError
	if err := prog.Run(); !errors.As(err, &nf) || nf.Row != 0 || nf.Col != 1 {
		t.Errorf("NaN input: got %v, want NonFiniteError at (0,1)", err)
	}
}

func TestSnapshotRawRestoreRaw(t *testing.T) {
	a, err := graph.NewParam("a", []float64{1, 2}, graph.Identity{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := graph.NewParam("b", []float64{3}, graph.Positive{})
	if err != nil {
		t.Fatal(err)
	}
	ps := []*graph.Param{a, b}
	s := graph.SnapshotRaw(ps)
	rawB := b.Raw()[0]
	a.Raw()[0], b.Raw()[0] = 10, 20
	if s[0][0] != 1 || s[1][0] != rawB {
		t.Fatalf("the snapshot shares storage with the Params: %v", s)
	}
	graph.RestoreRaw(ps, s)
	if a.Raw()[0] != 1 || b.Raw()[0] != rawB {
		t.Errorf("after RestoreRaw: a %v, b raw %v (want 1, %v)", a.Raw(), b.Raw(), rawB)
	}
	a.Raw()[1] = 7
	graph.SnapshotRawInto(s, ps)
	if s[0][1] != 7 {
		t.Errorf("SnapshotRawInto: %v", s[0])
	}
}

// Add and Sub skip an operand made by Zeros of the other's shape, and only such an operand: a constant of zeros
// built otherwise, or Zeros of another (broadcast) shape, is an ordinary operand.
func TestAddSubSkipZeros(t *testing.T) {
	g := graph.New(graph.Options{})
	x := g.Input("x", 2, 3)
	z := g.Zeros("z", 2, 3)
	if g.Add(x, z) != x || g.Add(z, x) != x || g.Sub(x, z) != x {
		t.Error("x ± Zeros is not x itself")
	}
	if g.Sub(z, x) == x {
		t.Error("Zeros − x returned x")
	}
	if c := g.Const("c", make([]float64, 6), 2, 3); g.Add(x, c) == x {
		t.Error("a Const of zeros was skipped (only Zeros nodes are known to be zero)")
	}
	if s := g.Zeros("s"); g.Add(x, s) == x {
		t.Error("a scalar Zeros added to a matrix was skipped")
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
}

// Zeros hold no data until a compiled Program reads them: a Zeros skipped by Add allocates nothing, one read by
// a node (Zeros − x, a scalar Zeros broadcast) is zeros when the Program runs.
func TestZerosBoundWhenRead(t *testing.T) {
	g := graph.New(graph.Options{})
	x := g.Input("x", 2, 3)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	big := g.Zeros("big", 4000, 4000) // 128 MB if it were materialised
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("an unread Zeros [4000,4000] allocated %d bytes", d)
	}
	_ = big
	neg := g.Sub(g.Zeros("z", 2, 3), x)
	shifted := g.Add(x, g.Zeros("s"))
	prog, err := g.CompileForward(map[string]*graph.Node{"neg": neg, "shifted": shifted, "x": g.Add(x, g.Zeros("skipped", 2, 3))})
	if err != nil {
		t.Fatal(err)
	}
	in := []float64{1, -2, 3, -4, 5, -6}
	if err := prog.Set("x", in); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		for i, v := range in {
			if got := prog.Output("neg")[i]; got != -v {
				t.Errorf("run %d: (0 − x)[%d] = %v, want %v", run, i, got, -v)
			}
			if got := prog.Output("shifted")[i]; got != v {
				t.Errorf("run %d: (x + 0)[%d] = %v, want %v", run, i, got, v)
			}
		}
	}
}
