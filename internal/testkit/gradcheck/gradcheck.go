// Package gradcheck compares analytic gradients of gorgonia graphs with central finite differences.
//
// It is a test helper: only _test.go files import it.
package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Tolerances of Check. A gradient entry passes when |analytic − fd| ≤ AbsTol or ≤ RelTol·max(|analytic|, |fd|).
// RelTol is the house rule (relative error ≤ 1e-6); AbsTol absorbs the ~1e-10 round-off of a central difference
// with step Step on O(1) losses, for entries whose true gradient is zero.
const (
	RelTol = 1e-6
	AbsTol = 1e-8
	// Step is the relative central-difference step: h = Step·max(1, |x|). Truncation error is O(h²) ≈ 1e-10.
	Step = 1e-5
)

// Input is one operand of the function under test: a leaf of the given shape (empty for a scalar) and value.
type Input struct {
	Name  string
	Shape []int
	Value []float64
	// NoGrad marks an operand that is held fixed (data, not a parameter): it is not differentiated.
	NoGrad bool
}

// Build builds the node under test from the input nodes (in the order of the inputs).
type Build func(g *G.ExprGraph, in []*G.Node) (*G.Node, error)

// Random returns an input with entries uniform in [lo, hi) from rng.
func Random(name string, rng *rand.Rand, lo, hi float64, shape ...int) Input {
	n := 1
	for _, s := range shape {
		n *= s
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return Input{Name: name, Shape: shape, Value: v}
}

// SPD returns an n×n symmetric positive-definite input B·Bᵀ + n·I with B uniform in [−1, 1).
func SPD(name string, rng *rand.Rand, n int) Input {
	b := make([]float64, n*n)
	for i := range b {
		b[i] = 2*rng.Float64() - 1
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += b[i*n+k] * b[j*n+k]
			}
			a[i*n+j] = s
		}
		a[i*n+i] += float64(n)
	}
	return Input{Name: name, Shape: []int{n, n}, Value: a}
}

// LowerTri returns an n×n lower-triangular input with diagonal in [1, 2) and off-diagonal entries in [−0.5, 0.5).
func LowerTri(name string, rng *rand.Rand, n int) Input {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = rng.Float64() - 0.5
		}
		l[i*n+i] = 1 + rng.Float64()
	}
	return Input{Name: name, Shape: []int{n, n}, Value: l}
}

type harness struct {
	g      *G.ExprGraph
	leaves []*G.Node
	loss   *G.Node
	grads  G.Nodes
	wrt    []int
	vm     G.VM
	lossV  *G.Value // apart from the harness: a read target inside it would tie it to its machine (see graph.Program)
}

func newHarness(build Build, inputs []Input, rng *rand.Rand) (*harness, error) {
	h := &harness{g: G.NewGraph()}
	var wrtNodes G.Nodes
	for i, in := range inputs {
		n := leaf(h.g, in, i)
		h.leaves = append(h.leaves, n)
		if !in.NoGrad {
			h.wrt = append(h.wrt, i)
			wrtNodes = append(wrtNodes, n)
		}
	}
	out, err := build(h.g, h.leaves)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	// loss = Σ W ⊙ out with fixed random W in [0.5, 1.5) (signs random), so every output entry matters.
	size := out.Shape().TotalSize()
	if out.Shape().IsScalar() {
		size = 1
	}
	w := make([]float64, size)
	for i := range w {
		w[i] = (0.5 + rng.Float64())
		if rng.IntN(2) == 0 {
			w[i] = -w[i]
		}
	}
	var wn *G.Node
	if out.Shape().IsScalar() {
		wn = G.NewScalar(h.g, tensor.Float64, G.WithName("gradcheck.W"), G.WithValue(w[0]))
	} else {
		wn = G.NewTensor(h.g, tensor.Float64, out.Shape().Dims(), G.WithShape(out.Shape().Clone()...), G.WithName("gradcheck.W"),
			G.WithValue(tensor.New(tensor.WithShape(out.Shape().Clone()...), tensor.WithBacking(w))))
	}
	if h.loss, err = ops.Dot(wn, out); err != nil {
		return nil, fmt.Errorf("loss: %w", err)
	}
	h.lossV = new(G.Value)
	G.Read(h.loss, h.lossV)
	if len(wrtNodes) > 0 {
		if h.grads, err = G.Grad(h.loss, wrtNodes...); err != nil {
			return nil, fmt.Errorf("grad: %w", err)
		}
	}
	h.vm = G.NewTapeMachine(h.g)
	return h, nil
}

func leaf(g *G.ExprGraph, in Input, i int) *G.Node {
	name := fmt.Sprintf("gradcheck.in%d.%s", i, in.Name)
	if len(in.Shape) == 0 {
		return G.NewScalar(g, tensor.Float64, G.WithName(name), G.WithValue(in.Value[0]))
	}
	v := append([]float64(nil), in.Value...)
	return G.NewTensor(g, tensor.Float64, len(in.Shape), G.WithShape(in.Shape...), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(in.Shape...), tensor.WithBacking(v))))
}

func (h *harness) run() (float64, error) {
	h.vm.Reset()
	if err := h.vm.RunAll(); err != nil {
		return 0, err
	}
	return valueScalar(*h.lossV)
}

func valueScalar(v G.Value) (float64, error) {
	switch t := v.(type) {
	case *G.F64:
		return float64(*t), nil
	case *tensor.Dense:
		return t.Float64s()[0], nil
	}
	return 0, fmt.Errorf("gradcheck: loss value is %T", v)
}

func (h *harness) set(i int, in Input, v []float64) error {
	if len(in.Shape) == 0 {
		return G.Let(h.leaves[i], v[0])
	}
	return G.Let(h.leaves[i], tensor.New(tensor.WithShape(in.Shape...), tensor.WithBacking(append([]float64(nil), v...))))
}

// Check fails t unless the gradient of Σ W⊙build(inputs) with respect to every input without NoGrad agrees with
// central finite differences (see RelTol, AbsTol, Step). It also returns the largest relative error seen.
func Check(t testing.TB, build Build, inputs []Input) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	h, err := newHarness(build, inputs, rng)
	if err != nil {
		t.Fatalf("gradcheck: %v", err)
	}
	defer h.vm.Close()
	if _, err := h.run(); err != nil {
		t.Fatalf("gradcheck: forward/backward: %v", err)
	}
	analytic := make([][]float64, len(h.wrt))
	for k, n := range h.grads {
		analytic[k] = flatten(n.Value())
		if len(analytic[k]) != len(inputs[h.wrt[k]].Value) {
			t.Fatalf("gradcheck: gradient of %s has %d entries, want %d", inputs[h.wrt[k]].Name, len(analytic[k]), len(inputs[h.wrt[k]].Value))
		}
	}
	worst := 0.0
	for k, i := range h.wrt {
		in := inputs[i]
		x := append([]float64(nil), in.Value...)
		for j := range x {
			x0 := x[j]
			step := Step * math.Max(1, math.Abs(x0))
			x[j] = x0 + step
			fp := h.mustRun(t, i, in, x)
			x[j] = x0 - step
			fm := h.mustRun(t, i, in, x)
			x[j] = x0
			fd := (fp - fm) / (2 * step)
			a := analytic[k][j]
			diff := math.Abs(a - fd)
			scale := math.Max(math.Abs(a), math.Abs(fd))
			rel := 0.0
			if scale > 0 {
				rel = diff / scale
			}
			if diff > AbsTol && rel > RelTol {
				t.Errorf("gradcheck: ∂/∂%s[%d]: analytic %.12g, central FD %.12g (rel err %.3g)", in.Name, j, a, fd, rel)
			}
			if diff > AbsTol && rel > worst {
				worst = rel
			}
		}
		if err := h.set(i, in, x); err != nil {
			t.Fatal(err)
		}
	}
	return worst
}

func (h *harness) mustRun(t testing.TB, i int, in Input, x []float64) float64 {
	t.Helper()
	if err := h.set(i, in, x); err != nil {
		t.Fatalf("gradcheck: let: %v", err)
	}
	f, err := h.run()
	if err != nil {
		t.Fatalf("gradcheck: run: %v", err)
	}
	return f
}

func flatten(v G.Value) []float64 {
	switch t := v.(type) {
	case *G.F64:
		return []float64{float64(*t)}
	case *tensor.Dense:
		return append([]float64(nil), t.Float64s()...)
	}
	return nil
}

// Leaves adds a constant leaf to g for each input (named after it and its index), with the input's shape and a
// copy of its values: the operands of an op under test outside a Check.
func Leaves(g *G.ExprGraph, in []Input) []*G.Node {
	ns := make([]*G.Node, len(in))
	for i, x := range in {
		ns[i] = leaf(g, x, i)
	}
	return ns
}

// Eval runs g once on a tape machine and returns copies of the values of ns.
func Eval(t testing.TB, g *G.ExprGraph, ns ...*G.Node) [][]float64 {
	t.Helper()
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatalf("gradcheck.Eval: %v", err)
	}
	out := make([][]float64, len(ns))
	for i, n := range ns {
		if out[i] = flatten(n.Value()); out[i] == nil {
			t.Fatalf("gradcheck.Eval: value of %v is %T", n, n.Value())
		}
	}
	return out
}
