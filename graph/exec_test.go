package graph

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// testSE is a squared-exponential covariance function for the executor tests (package gp's kernels sit above
// graph).
var testSE = &ops.Stationary{
	Label: "graph-test-SE",
	Profile: func(s2 float64, _ []float64, v []float64) {
		for i, r2 := range v {
			v[i] = s2 * math.Exp(-r2/2)
		}
	},
	Slope: func(_ []float64, _, k, g, w []float64) {
		for i := range w {
			w[i] = -0.5 * g[i] * k[i]
		}
	},
}

// execTestProgram builds a small SVGP-like program whose graph has independent branches, nodes used several
// times (the engine's gradient sums), gradient ops sharing a covariance workspace, and two random draws from one
// generator in different branches.
func execTestProgram(t *testing.T, seed uint64) (*Graph, *Program) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	data := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		return v
	}
	const n, m, d = 300, 40, 3
	z := mustNewParam(t, "z", data(m*d), Identity{}, m, d)
	ls := mustNewParam(t, "ls", []float64{0.3, 0.5, 0.2}, Identity{}, d)
	vr := mustNewParam(t, "var", []float64{0.4}, Identity{})
	qm := mustNewParam(t, "qm", data(m), Identity{}, m, 1)
	g := New(Options{})
	x := g.Input("x", n, d)
	draws := rand.New(rand.NewPCG(seed, 9))
	zn, lsn, vn := g.Param(z), g.Exp(g.Param(ls)), g.Exp(g.Param(vr))
	kuu := g.AddDiag(g.CovMatrix(testSE, zn, zn, vn, lsn), g.Fill("jit", 1e-6, m))
	l := g.Cholesky(kuu)
	kuf := g.CovMatrix(testSE, zn, x, vn, lsn)
	a := g.TriSolve(l, kuf, false, false)
	mean := g.MatMul(a, g.Param(qm), true, false)
	varf := g.SumRowsSq(a)
	eps1 := g.StandardNormal(mean, draws, n, 1)
	eps2 := g.StandardNormal(mean, draws, m, 1)
	f := g.Add(mean, g.Mul(eps1, g.Reshape(g.Sqrt(g.AddConst(varf, 1)), n, 1)))
	loss := g.Add(g.Add(g.Sum(g.Square(f)), g.Sum(g.Square(g.MatMul(l, eps2, false, false)))), g.LogDetChol(l))
	g.Monitor("varf", varf)
	p, err := g.Compile(loss, map[string]*Node{"mean": mean, "a": a})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Set("x", data(n*d)); err != nil {
		t.Fatal(err)
	}
	return g, p
}

func mustNewParam(t *testing.T, name string, v []float64, tr Transform, shape ...int) *Param {
	t.Helper()
	p, err := NewParam(name, v, tr, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// programBits runs p twice and returns every value it reports, run by run.
func programBits(t *testing.T, p *Program) []float64 {
	t.Helper()
	var out []float64
	for range 2 {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Loss())
		for _, q := range p.Params() {
			out = append(out, p.Grad(q)...)
		}
		out = append(out, p.Output("mean")...)
		out = append(out, p.Output("a")...)
		out = append(out, p.Monitored("varf")...)
	}
	return out
}

// The executor gives the tape machine's bits (the engine's own runner, on a twin program built from the same
// seeds), and the same bits for every GOMAXPROCS.
func TestExecutorMatchesTapeMachine(t *testing.T) {
	_, twin := execTestProgram(t, 1)
	// The engine's tape machine on the twin's nodes: its values are bound to the nodes.
	roots := append(G.Nodes{}, twin.roots...)
	roots = append(roots, twin.gnodes...)
	for _, m := range twin.g.mons {
		roots = append(roots, m.n)
	}
	vm := G.NewTapeMachine(twin.g.g.ExactSubgraphRoots(roots...))
	defer vm.Close()
	for _, b := range twin.g.params {
		copy(b.data, b.p.raw)
		if err := letLeaf(b.leaf, b.t, b.data); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range twin.g.order {
		in := twin.g.inputs[name]
		if err := letLeaf(in.node, in.t, in.data); err != nil {
			t.Fatal(err)
		}
	}
	var want []float64
	for range 2 {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		loss, err := scalarOf(twin.loss.Value())
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, loss)
		for _, gn := range twin.gnodes {
			if want, err = appendValue(want, gn.Value()); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range twin.outs { // outputs are compiled in name order: a, mean
			if o.name == "mean" {
				want, _ = appendValue(want, o.n.Value())
			}
		}
		for _, o := range twin.outs {
			if o.name == "a" {
				want, _ = appendValue(want, o.n.Value())
			}
		}
		want, _ = appendValue(want, twin.g.mons[0].n.Value())
	}
	for _, procs := range []int{1, 2, 3, 8} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			_, p := execTestProgram(t, 1)
			got := programBits(t, p)
			if len(got) != len(want) {
				t.Fatalf("GOMAXPROCS %d: %d values, the tape machine %d", procs, len(got), len(want))
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("GOMAXPROCS %d: value %d is %v, the tape machine's %v", procs, i, got[i], want[i])
				}
			}
		}()
	}
}

// The engine's gradient sums run through the executor's own buffers, and gradient ops of one forward op, and the
// random ops drawing from one generator, are chained in program order.
func TestExecutorDependencies(t *testing.T) {
	_, p := execTestProgram(t, 2)
	e := p.exec
	if len(e.sums) == 0 {
		t.Fatal("no engine gradient sum was recognised")
	}
	task := map[int]int{}
	for ti, i := range e.tasks {
		task[i] = ti
	}
	reach := func(from, to int) bool { // is task to reachable from task from
		seen := map[int]bool{from: true}
		stack := []int{from}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x == to {
				return true
			}
			for _, s := range e.dag.Succ[x] {
				if !seen[int(s)] {
					seen[int(s)] = true
					stack = append(stack, int(s))
				}
			}
		}
		return false
	}
	byKey := map[any][]int{}
	for ti, i := range e.tasks {
		if k := ops.SharedState(e.nodes[i].Op()); k != nil {
			byKey[k] = append(byKey[k], ti)
		}
	}
	chained := 0
	for _, ts := range byKey {
		for k := 1; k < len(ts); k++ {
			if !reach(ts[k-1], ts[k]) {
				t.Fatalf("tasks %d and %d share state but are not ordered", ts[k-1], ts[k])
			}
			chained++
		}
	}
	if chained < 3 { // two draws from one generator, the covariance ops' gradients
		t.Fatalf("only %d shared-state links", chained)
	}
}

// placedBuffers returns, for the Program's nodes whose outputs the memory plan placed, how many there are and
// how many distinct buffers they use.
func placedBuffers(p *Program) (nodes, buffers int) {
	seen := map[*float64]bool{}
	for t, i := range p.exec.tasks {
		_ = t
		if _, ok := ops.OutputSize(p.exec.nodes[i].Op()); !ok {
			continue
		}
		v := p.exec.vals[i]
		d, ok := v.(interface{ Float64s() []float64 })
		if !ok || len(d.Float64s()) == 0 {
			continue
		}
		nodes++
		seen[&d.Float64s()[0]] = true
	}
	return nodes, len(seen)
}

// withPlanMin runs f with the memory plan placing outputs of at least n values.
func withPlanMin(n int, f func()) {
	defer func(prev int) { planMin = prev }(planMin)
	planMin = n
	f()
}

// The memory plan (every output placed: planMin 1) shares buffers among the nodes whose values are never needed
// together, and the Program gives the bits of one without a plan, for every GOMAXPROCS.
func TestPlanSameBits(t *testing.T) {
	var want [3][]float64 // three calls of programBits: runs 1–6 (the random draws differ from run to run)
	withPlanMin(math.MaxInt, func() {
		_, p := execTestProgram(t, 3)
		for rep := range want {
			want[rep] = programBits(t, p)
		}
		if n, b := placedBuffers(p); n != b {
			t.Fatalf("without a plan %d outputs share %d buffers", n, b)
		}
	})
	for _, procs := range []int{1, 2, 3, 8} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			withPlanMin(1, func() {
				_, p := execTestProgram(t, 3)
				for rep := range want { // several schedules
					got := programBits(t, p)
					for i := range want[rep] {
						if math.Float64bits(got[i]) != math.Float64bits(want[rep][i]) {
							t.Fatalf("GOMAXPROCS %d, repeat %d: value %d is %v with the plan, %v without", procs, rep, i, got[i], want[rep][i])
						}
					}
				}
				if n, b := placedBuffers(p); b >= n || b == 0 {
					t.Errorf("GOMAXPROCS %d: %d placed outputs in %d buffers: nothing shared", procs, n, b)
				}
			})
		}()
	}
}

// An op that two Programs of one graph run keeps a buffer of its own: the second Program's plan takes it back
// from the first's, and both keep giving their bits.
func TestPlanTwoPrograms(t *testing.T) {
	var want [2][]float64
	withPlanMin(math.MaxInt, func() {
		_, p := execTestProgram(t, 4)
		for rep := range want {
			want[rep] = programBits(t, p)
		}
	})
	withPlanMin(1, func() {
		g, p := execTestProgram(t, 4)
		// A second Program over part of the same nodes: the mean and a, as outputs (roots, never placed).
		var mean, a *Node
		for _, o := range p.outs {
			switch o.name {
			case "mean":
				mean = &Node{n: o.n, g: g}
			case "a":
				a = &Node{n: o.n, g: g}
			}
		}
		fwd, err := g.CompileForward(map[string]*Node{"mean": mean, "s": g.Scale(a, 2)})
		if err != nil {
			t.Fatal(err)
		}
		for rep := range want {
			got := programBits(t, p)
			for i := range want[rep] {
				if math.Float64bits(got[i]) != math.Float64bits(want[rep][i]) {
					t.Fatalf("repeat %d: value %d is %v beside a second Program, %v alone", rep, i, got[i], want[rep][i])
				}
			}
			// The second Program runs the same nodes on the same parameters (the mean does not draw).
			if err := fwd.Run(); err != nil {
				t.Fatal(err)
			}
			for i, v := range fwd.Output("mean") {
				if v != p.Output("mean")[i] {
					t.Fatalf("repeat %d: the second Program's mean[%d] %v, the first's %v", rep, i, v, p.Output("mean")[i])
				}
			}
		}
	})
}
