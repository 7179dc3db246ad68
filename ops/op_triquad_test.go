package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// triQuadInputs returns A [m,n] uniform in [−1, 1) and p lower-triangular factors [m,m] with junk in [−5, 5) above
// the diagonal (which TriQuadCols must ignore).
func triQuadInputs(rng *rand.Rand, m, n, p int) []gradcheck.Input {
	in := []gradcheck.Input{gradcheck.Random("a", rng, -1, 1, m, n)}
	for k := 0; k < p; k++ {
		in = append(in, triWithJunk(fmt.Sprintf("l%d", k), rng, m, false))
	}
	return in
}

func triQuadBuild(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
	return ops.TriQuadCols(in[0], in[1:]...)
}

// naiveTriQuadBuild is the composition TriQuadCols replaces, on the lower triangles of the factors:
// StackCols(SumRows(Square(MatMul(tril(L_p), A, true, false)))...).
func naiveTriQuadBuild(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
	cols := make([]*G.Node, 0, len(in)-1)
	for _, l := range in[1:] {
		lt, err := ops.Tril(l, 0)
		if err != nil {
			return nil, err
		}
		b, err := ops.MatMul(lt, in[0], true, false)
		if err != nil {
			return nil, err
		}
		sq, err := ops.Square(b)
		if err != nil {
			return nil, err
		}
		c, err := ops.SumRows(sq)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return ops.StackCols(cols...)
}

// TestTriQuadColsGrad checks ∂/∂A and ∂/∂L_p against central finite differences for one and three outputs,
// square and non-square A, and factors with junk above the diagonal (the FD gradient there is 0: the forward
// ignores it). M = 70 takes lowerABt through its recursion (triQuadBlock = 64); TestTriQuadColsMatchesNaive covers
// deeper recursion.
func TestTriQuadColsGrad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ m, n, p int }{
		{4, 6, 1}, {5, 3, 3}, {6, 6, 1}, {6, 6, 3}, {1, 4, 1}, {3, 1, 3}, {70, 2, 1},
	} {
		t.Run(fmt.Sprintf("M=%d,N=%d,P=%d", c.m, c.n, c.p), func(t *testing.T) {
			t.Parallel()
			if c.m > 64 && testing.Short() {
				t.Skip("large finite-difference check")
			}
			rng := rand.New(rand.NewPCG(uint64(c.m), uint64(c.n*10+c.p)))
			gradcheck.Check(t, triQuadBuild, triQuadInputs(rng, c.m, c.n, c.p))
		})
	}
}

// triQuadEval builds build on ins, differentiates loss = Σ W⊙out (W uniform in [−1, 1) from a fixed seed) with
// respect to every input and runs the tape twice: on ins, then after replacing every input by next (so a stale
// forward product kept for the backward would show). It returns the output and the gradients of the second run.
func triQuadEval(t *testing.T, build gradcheck.Build, ins, next []gradcheck.Input) (out []float64, grads [][]float64) {
	t.Helper()
	g := G.NewGraph()
	leaves := make([]*G.Node, len(ins))
	for i, in := range ins {
		leaves[i] = ewLeaf(g, in)
	}
	y, err := build(g, leaves)
	if err != nil {
		t.Fatal(err)
	}
	s := y.Shape()
	wrng := rand.New(rand.NewPCG(9, 9))
	w := make([]float64, s.TotalSize())
	for i := range w {
		w[i] = 2*wrng.Float64() - 1
	}
	wn := G.NewMatrix(g, tensor.Float64, G.WithShape(s...), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(s...), tensor.WithBacking(w))))
	loss, err := ops.Dot(wn, y)
	if err != nil {
		t.Fatal(err)
	}
	var yv G.Value
	G.Read(y, &yv)
	if _, err := G.Grad(loss, leaves...); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i, in := range next {
		v := append([]float64(nil), in.Value...)
		if err := G.Let(leaves[i], tensor.New(tensor.WithShape(in.Shape...), tensor.WithBacking(v))); err != nil {
			t.Fatal(err)
		}
	}
	vm.Reset()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	out = append([]float64(nil), yv.Data().([]float64)...)
	for _, l := range leaves {
		gv, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, append([]float64(nil), gv.Data().([]float64)...))
	}
	return out, grads
}

// TestTriQuadColsMatchesNaive compares TriQuadCols with the MatMul/Square/SumRows composition on tril(L_p): the
// output to 1e-12 relative error (only the summation order differs), ∂A and the lower triangles of ∂L_p to 1e-10
// relative to the largest entry (backward sums over N and P in another order), and the junk triangle of ∂L_p must
// be exactly 0. Sizes beyond triQuadBlock = 64 exercise the recursive lower-triangle product.
func TestTriQuadColsMatchesNaive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ m, n, p int }{{150, 37, 3}, {200, 1, 1}, {65, 130, 2}, {7, 5, 4}} {
		t.Run(fmt.Sprintf("M=%d,N=%d,P=%d", c.m, c.n, c.p), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(c.m), uint64(c.n)))
			ins, next := triQuadInputs(rng, c.m, c.n, c.p), triQuadInputs(rng, c.m, c.n, c.p)
			got, gotG := triQuadEval(t, triQuadBuild, ins, next)
			want, wantG := triQuadEval(t, naiveTriQuadBuild, ins, next)
			ewClose(t, "out", got, want, 1e-12)
			for i := range gotG {
				scale := 0.0
				for _, v := range wantG[i] {
					scale = math.Max(scale, math.Abs(v))
				}
				for j, v := range gotG[i] {
					if i > 0 && j%c.m > j/c.m { // above the diagonal of L_p
						if v != 0 {
							t.Fatalf("∂L%d[%d,%d] = %v above the diagonal, want exactly 0", i-1, j/c.m, j%c.m, v)
						}
						continue
					}
					if d := math.Abs(v - wantG[i][j]); d > 1e-10*scale {
						t.Fatalf("gradient %d entry %d: %.17g, naive %.17g", i, j, v, wantG[i][j])
					}
				}
			}
		})
	}
}

// TestTriQuadColsDoDiff: the per-input backward of the LispMachine (DoDiff) gives the gradients of the joint
// backward of the TapeMachine.
func TestTriQuadColsDoDiff(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 30))
	ins := triQuadInputs(rng, 5, 4, 2)
	_, want := triQuadEval(t, triQuadBuild, ins, ins)
	g := G.NewGraph()
	leaves := make([]*G.Node, len(ins))
	for i, in := range ins {
		leaves[i] = ewLeaf(g, in)
	}
	y, err := ops.TriQuadCols(leaves[0], leaves[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	wrng := rand.New(rand.NewPCG(9, 9))
	w := make([]float64, 8)
	for i := range w {
		w[i] = 2*wrng.Float64() - 1
	}
	wn := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking(w))))
	if _, err := ops.Dot(wn, y); err != nil {
		t.Fatal(err)
	}
	lm := G.NewLispMachine(g)
	defer lm.Close()
	if err := lm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i, l := range leaves {
		gv, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		ewClose(t, fmt.Sprintf("DoDiff gradient %d", i), gv.Data().([]float64), want[i], 1e-12)
	}
}

// TestTriQuadColsForward checks a hand-computed case: A = [[1, 2], [3, 4]] (columns a₀ = (1, 3), a₁ = (2, 4)),
// L₀ = [[1, junk], [2, 1]] so L₀ᵀ = [[1, 2], [0, 1]], L₀ᵀa₀ = (7, 3), L₀ᵀa₁ = (10, 4), and L₁ = 2I.
func TestTriQuadColsForward(t *testing.T) {
	t.Parallel()
	shape, got := ewEval(t, triQuadBuild,
		ewIn("a", []int{2, 2}, 1, 2, 3, 4), ewIn("l0", []int{2, 2}, 1, 99, 2, 1), ewIn("l1", []int{2, 2}, 2, -7, 0, 2))
	if fmt.Sprint([]int(shape)) != "[2 2]" {
		t.Fatalf("shape %v, want [2 2]", shape)
	}
	ewClose(t, "TriQuadCols", got, []float64{49 + 9, 4 * (1 + 9), 100 + 16, 4 * (4 + 16)}, 0)
	shape, got = ewEval(t, triQuadBuild, ewIn("a", []int{2, 3}, 1, 0, 2, 3, 1, 4), ewIn("l0", []int{2, 2}, 1, 99, 2, 1))
	if fmt.Sprint([]int(shape)) != "[3 1]" {
		t.Fatalf("shape %v, want [3 1]", shape)
	}
	ewClose(t, "TriQuadCols P=1", got, []float64{49 + 9, 4 + 1, 100 + 16}, 0)
}

func TestHashTriQuadCols(t *testing.T) {
	t.Parallel()
	checkHashes(t, 3, map[string]variant{
		"a;a":   func(a, _ *G.Node) (*G.Node, error) { return ops.TriQuadCols(a, a) },
		"a;b":   func(a, b *G.Node) (*G.Node, error) { return ops.TriQuadCols(a, b) },
		"b;a":   func(a, b *G.Node) (*G.Node, error) { return ops.TriQuadCols(b, a) },
		"a;a,b": func(a, b *G.Node) (*G.Node, error) { return ops.TriQuadCols(a, a, b) },
		"a;b,a": func(a, b *G.Node) (*G.Node, error) { return ops.TriQuadCols(a, b, a) },
		"a;b,b": func(a, b *G.Node) (*G.Node, error) { return ops.TriQuadCols(a, b, b) },
		"a;b,b,b": func(a, b *G.Node) (*G.Node, error) {
			return ops.TriQuadCols(a, b, b, b)
		},
		"StackCols": func(a, b *G.Node) (*G.Node, error) { // another variable-arity op over the same children
			ca, err := ops.Col(a, 0)
			if err != nil {
				return nil, err
			}
			return ops.StackCols(ca, ca)
		},
	})
}

func TestTriQuadColsShapeErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m := func(name string, r, c int) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name))
	}
	a, l3, l4, rect := m("a", 3, 5), m("l3", 3, 3), m("l4", 4, 4), m("rect", 3, 4)
	v3 := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v3"))
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"))
	f32 := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 3), G.WithName("f32"))
	for name, build := range map[string]func() (*G.Node, error){
		"no factor":        func() (*G.Node, error) { return ops.TriQuadCols(a) },
		"non-square L":     func() (*G.Node, error) { return ops.TriQuadCols(a, rect) },
		"M mismatch":       func() (*G.Node, error) { return ops.TriQuadCols(a, l4) },
		"M mismatch (2nd)": func() (*G.Node, error) { return ops.TriQuadCols(a, l3, l4) },
		"vector A":         func() (*G.Node, error) { return ops.TriQuadCols(v3, l3) },
		"scalar A":         func() (*G.Node, error) { return ops.TriQuadCols(s, l3) },
		"vector L":         func() (*G.Node, error) { return ops.TriQuadCols(a, v3) },
		"nil A":            func() (*G.Node, error) { return ops.TriQuadCols(nil, l3) },
		"nil L":            func() (*G.Node, error) { return ops.TriQuadCols(a, l3, nil) },
		"float32 L":        func() (*G.Node, error) { return ops.TriQuadCols(a, f32) },
	} {
		wantShapeError(t, name, build)
	}
}
