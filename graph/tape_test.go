package graph

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestRunTapeIsDirect requires Programs to run the tape without the engine's thread lock, and the direct path
// to agree bit for bit with RunAll. It fails when the engine version changes: tapeRunall is linked to an
// unexported method whose signature must then be re-checked (see tape.go) before linkedEngine is updated.
func TestRunTapeIsDirect(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var pins []string
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "gorgonia.org/gorgonia" {
			pins = append(pins, strings.Join(f[1:], " "))
		} else if len(f) >= 3 && f[0] == "replace" && f[1] == "gorgonia.org/gorgonia" {
			pins = append(pins, "replaced")
		}
	}
	if !slices.Equal(pins, []string{linkedEngine}) {
		t.Fatalf("go.mod pins gorgonia as %q; runall was linked against %s: re-check tapeRunall's signature", pins, linkedEngine)
	}
	if !tapeDirect {
		t.Fatal("tapeDirect is false in a test binary")
	}
	w, err := NewParam("w", []float64{0.3, -1.2, 0.7, 0.5, 2.0, -0.4}, nil, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{})
	x := g.Input("x", 3, 3)
	wn := g.Param(w)
	// K = X + W·Wᵀ + I: a Cholesky, a triangular solve and a log-determinant, forward and backward.
	k := g.AddDiag(g.Add(x, g.MatMul(wn, wn, false, true)), g.Fill("one", 1, 3))
	l := g.Cholesky(k)
	a := g.TriSolve(l, wn, false, false)
	loss := g.Add(g.LogDetChol(l), g.Sum(g.Square(a)))
	prog, err := g.Compile(loss, map[string]*Node{"a": a})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if !prog.direct {
		t.Fatal("the Program runs through RunAll (thread lock and hand-off per run)")
	}
	if err := prog.Set("x", []float64{2, 0.5, 0, 0.5, 3, 0.1, 0, 0.1, 1}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		loss    float64
		grad, a []float64
	}
	run := func(direct bool) result {
		prog.direct = direct
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		return result{prog.Loss(), slices.Clone(prog.Grad(w)), slices.Clone(prog.Output("a"))}
	}
	viaRunAll, direct := run(false), run(true)
	if direct.loss != viaRunAll.loss || !slices.Equal(direct.grad, viaRunAll.grad) || !slices.Equal(direct.a, viaRunAll.a) {
		t.Errorf("direct run %+v differs from RunAll %+v", direct, viaRunAll)
	}
	if again := run(true); again.loss != direct.loss || !slices.Equal(again.grad, direct.grad) {
		t.Errorf("second direct run %+v differs from the first %+v", again, direct)
	}
}
