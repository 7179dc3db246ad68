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

// The generic op (op.go): gradients from a kernel's joint backward are cached per forward run. Changing the
// inputs between runs must refresh every gradient; a stale cache would hand run 2 the gradients of run 1.
// Run 2's gradients are compared with a fresh graph evaluated at run 2's inputs.
func TestJointBackwardRefreshesEveryRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	l1 := gradcheck.LowerTri("L", rng, 4)
	b1 := gradcheck.Random("B", rng, -1, 1, 4, 3)
	l2 := gradcheck.LowerTri("L", rng, 4)
	b2 := gradcheck.Random("B", rng, -1, 1, 4, 3)
	build := func(lv, bv []float64) (*G.ExprGraph, *G.Node, *G.Node, G.VM) {
		g := G.NewGraph()
		ln := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 4), G.WithName("L"), G.WithValue(tensor.New(tensor.WithShape(4, 4), tensor.WithBacking(append([]float64(nil), lv...)))))
		bn := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("B"), G.WithValue(tensor.New(tensor.WithShape(4, 3), tensor.WithBacking(append([]float64(nil), bv...)))))
		x, err := ops.TriSolve(ln, bn, false, false) // a jointBackward kernel
		if err != nil {
			t.Fatal(err)
		}
		loss, err := ops.Dot(x, x)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := G.Grad(loss, ln, bn); err != nil {
			t.Fatal(err)
		}
		return g, ln, bn, G.NewTapeMachine(g)
	}
	grads := func(ln, bn *G.Node) ([]float64, []float64) {
		gl, _ := ln.Grad()
		gb, _ := bn.Grad()
		return append([]float64(nil), gl.Data().([]float64)...), append([]float64(nil), gb.Data().([]float64)...)
	}
	_, ln, bn, vm := build(l1.Value, b1.Value)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	gl1, gb1 := grads(ln, bn)
	if err := G.Let(ln, tensor.New(tensor.WithShape(4, 4), tensor.WithBacking(append([]float64(nil), l2.Value...)))); err != nil {
		t.Fatal(err)
	}
	if err := G.Let(bn, tensor.New(tensor.WithShape(4, 3), tensor.WithBacking(append([]float64(nil), b2.Value...)))); err != nil {
		t.Fatal(err)
	}
	vm.Reset()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	gl2, gb2 := grads(ln, bn)
	_, fl, fb, fvm := build(l2.Value, b2.Value)
	defer fvm.Close()
	if err := fvm.RunAll(); err != nil {
		t.Fatal(err)
	}
	wl, wb := grads(fl, fb)
	same := true
	for i := range wl {
		same = same && gl1[i] == gl2[i]
		if math.Abs(gl2[i]-wl[i]) > 1e-12*math.Max(1, math.Abs(wl[i])) {
			t.Errorf("∂/∂L[%d] after new inputs: %v, fresh graph %v", i, gl2[i], wl[i])
		}
	}
	for i := range wb {
		if math.Abs(gb2[i]-wb[i]) > 1e-12*math.Max(1, math.Abs(wb[i])) {
			t.Errorf("∂/∂B[%d] after new inputs: %v, fresh graph %v", i, gb2[i], wb[i])
		}
	}
	if same && len(gb1) > 0 {
		t.Error("gradients did not change with the inputs: the check cannot tell a stale cache")
	}
}

// Two ops that differ only in a meaning-bearing kernel field (here MatMul's transpose flag on a square operand,
// where the shapes agree) must be distinct nodes: the generic op writes the kernel's params into its hash.
func TestGenericOpHashIncludesKernelParams(t *testing.T) {
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 3), G.WithName("a"))
	n1, err := ops.MatMul(a, a, false, false)
	if err != nil {
		t.Fatal(err)
	}
	n2, err := ops.MatMul(a, a, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if n1 == n2 || n1.Hashcode() == n2.Hashcode() {
		t.Error("MatMul(a, a) and MatMul(aᵀ, a) merged: the transpose flag is missing from the hash")
	}
	n3, err := ops.MatMul(a, a, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if n3 != n1 {
		t.Error("the same op built twice on the same operands was not merged")
	}
}
