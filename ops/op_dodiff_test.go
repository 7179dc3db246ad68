package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestDoDiffMatchesSymDiff runs one chain of ops (MatMul, AddDiag, Cholesky, TriSolve, Dot, LogDetChol) through
// gorgonia's LispMachine, which differentiates with DoDiff, and through the TapeMachine, which uses SymDiff, and
// requires the same gradients. (gpzoo never trains with the LispMachine; this pins the ADOp path.)
func TestDoDiffMatchesSymDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	b := gradcheck.Random("b", rng, -1, 1, 4, 4)
	y := gradcheck.Random("y", rng, -1, 1, 4, 2)
	build := func() (*G.ExprGraph, *G.Node, *G.Node, *G.Node) {
		g := G.NewGraph()
		bn := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 4), G.WithName("b"), G.WithValue(tensor.New(tensor.WithShape(4, 4), tensor.WithBacking(append([]float64(nil), b.Value...)))))
		yn := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("y"), G.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking(append([]float64(nil), y.Value...)))))
		s := G.NewScalar(g, tensor.Float64, G.WithName("s"), G.WithValue(2.0))
		must := func(n *G.Node, err error) *G.Node {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		a := must(ops.AddDiag(must(ops.MatMul(bn, bn, false, true)), s))
		l := must(ops.Cholesky(a, ops.JitterPolicy{}))
		v := must(ops.TriSolve(l, yn, false, false))
		loss := must(ops.Add(must(ops.Dot(v, v)), must(ops.LogDetChol(l))))
		return g, loss, bn, s
	}
	g1, loss1, b1, s1 := build()
	if _, err := G.Grad(loss1, b1, s1); err != nil {
		t.Fatal(err)
	}
	tm := G.NewTapeMachine(g1)
	defer tm.Close()
	if err := tm.RunAll(); err != nil {
		t.Fatal(err)
	}
	wantB, _ := b1.Grad()
	wantS, _ := s1.Grad()

	g2, _, b2, s2 := build()
	lm := G.NewLispMachine(g2)
	defer lm.Close()
	if err := lm.RunAll(); err != nil {
		t.Fatal(err)
	}
	gotB, _ := b2.Grad()
	gotS, _ := s2.Grad()
	wb, gb := wantB.Data().([]float64), gotB.Data().([]float64)
	for i := range wb {
		if math.Abs(wb[i]-gb[i]) > 1e-10*math.Max(1, math.Abs(wb[i])) {
			t.Errorf("∂/∂b[%d]: DoDiff %v, SymDiff %v", i, gb[i], wb[i])
		}
	}
	if ws, gs := float64(*wantS.(*G.F64)), float64(*gotS.(*G.F64)); math.Abs(ws-gs) > 1e-10*math.Max(1, math.Abs(ws)) {
		t.Errorf("∂/∂s: DoDiff %v, SymDiff %v", gs, ws)
	}
}
