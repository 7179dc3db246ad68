package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// covCase is one CovMatrix under test: K(x1, x2) (x2 = x1 when shared) with hyperparameters h, the loss Σ W⊙K for
// the output gradient w, and which operands are differentiated (x2 only when grad2).
type covCase struct {
	f        ops.CovFunc
	n, m, d  int
	x1, x2   []float64
	h        []gradcheck.Input
	w        []float64
	shared   bool
	grad2    bool
	nearRows bool // some rows of x2 coincide with rows of x1 (or, shared, some rows repeat)
}

// newCovCase draws a case: inputs in [−1, 1) (lengthscales ~ the data spread), W in [−1, 1), and with nearRows
// every third row of x2 a copy of a row of x1 (shared: of an earlier row of x1).
func newCovCase(f ops.CovFunc, n, m, d int, shared, grad2, nearRows bool, seed uint64) *covCase {
	rng := rand.New(rand.NewPCG(seed, uint64(n*1000003+m*101+d)))
	c := &covCase{f: f, n: n, m: m, d: d, shared: shared, grad2: grad2 || shared, nearRows: nearRows}
	if shared {
		m, c.m = n, n
	}
	c.x1 = gradcheck.Random("x1", rng, -1, 1, n, d).Value
	c.x2 = gradcheck.Random("x2", rng, -1, 1, m, d).Value
	if shared {
		c.x2 = c.x1
	}
	if nearRows {
		for j := 0; j < m; j += 3 {
			src := rng.IntN(n)
			if shared {
				if j == 0 {
					continue
				}
				src = rng.IntN(j)
			}
			copy(c.x2[j*d:(j+1)*d], c.x1[src*d:(src+1)*d])
		}
	}
	c.h = covHyperInputs(f, d, rng, false)
	for i, hp := range f.Hypers() {
		if hp.Name == "lengthscales" {
			for k := range c.h[i].Value {
				c.h[i].Value[k] *= math.Sqrt(float64(d))
			}
		}
	}
	c.w = gradcheck.Random("w", rng, -1, 1, n, m).Value
	return c
}

func (c *covCase) String() string {
	s := fmt.Sprintf("%s/N=%d,M=%d,D=%d", c.f.Name(), c.n, c.m, c.d)
	if c.shared {
		s += "/K(X,X)"
	}
	if c.nearRows {
		s += "/near"
	}
	return s
}

// covResult is what the op computed: K and the gradients of Σ W⊙K with respect to x1, x2 (nil unless
// differentiated; shared: the sum of both operands' gradients, in dx1) and each hyperparameter.
type covResult struct {
	k, dx1, dx2 []float64
	dh          [][]float64
}

// covProgram builds c's graph once; run evaluates it (runs times, each a full forward and backward pass on a tape
// of the loss and the requested gradients only, as graph.Program compiles it) and returns the last run's values.
type covProgram struct {
	c      *covCase
	vm     G.VM
	k      *G.Node
	leaves []*G.Node
	grads  G.Nodes
}

func newCovProgram(t testing.TB, c *covCase) *covProgram {
	t.Helper()
	g := G.NewGraph()
	mk := func(name string, v []float64, s ...int) *G.Node {
		if len(s) == 0 {
			return G.NewScalar(g, tensor.Float64, G.WithName(name), G.WithValue(v[0]))
		}
		return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(s...), tensor.WithBacking(append([]float64(nil), v...)))))
	}
	p := &covProgram{c: c}
	x1 := mk("x1", c.x1, c.n, c.d)
	x2 := x1
	if !c.shared {
		x2 = mk("x2", c.x2, c.m, c.d)
	}
	p.leaves = []*G.Node{x1, x2}
	for i, h := range c.h {
		p.leaves = append(p.leaves, mk(fmt.Sprint("h", i, h.Name), h.Value, h.Shape...))
	}
	k, err := ops.CovMatrix(c.f, x1, x2, p.leaves[2:]...)
	if err != nil {
		t.Fatal(err)
	}
	p.k = k
	loss, err := ops.Dot(mk("w", c.w, c.n, c.m), k)
	if err != nil {
		t.Fatal(err)
	}
	wrt := G.Nodes{x1}
	if c.grad2 && !c.shared {
		wrt = append(wrt, x2)
	}
	wrt = append(wrt, p.leaves[2:]...)
	if p.grads, err = G.Grad(loss, wrt...); err != nil {
		t.Fatal(err)
	}
	p.vm = G.NewTapeMachine(g.ExactSubgraphRoots(append(G.Nodes{loss, k}, p.grads...)...))
	return p
}

func (p *covProgram) run(t testing.TB) *covResult {
	t.Helper()
	p.vm.Reset()
	if err := p.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	val := func(n *G.Node) []float64 {
		switch v := n.Value().(type) {
		case *G.F64:
			return []float64{float64(*v)}
		case *tensor.Dense:
			return append([]float64(nil), v.Float64s()...)
		}
		t.Fatalf("value of %v: %T", n, n.Value())
		return nil
	}
	r := &covResult{k: val(p.k), dx1: val(p.grads[0])}
	hs := p.grads[1:]
	if p.c.grad2 && !p.c.shared {
		r.dx2, hs = val(p.grads[1]), p.grads[2:]
	}
	for _, n := range hs {
		r.dh = append(r.dh, val(n))
	}
	return r
}

// set replaces leaf i's value (x1 = 0, x2 = 1, hyperparameter j = 2+j).
func (p *covProgram) set(t testing.TB, i int, v []float64) {
	t.Helper()
	var err error
	if s := p.leaves[i].Shape(); s.IsScalar() {
		err = G.Let(p.leaves[i], v[0])
	} else {
		err = G.Let(p.leaves[i], tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(append([]float64(nil), v...))))
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (p *covProgram) close() { p.vm.Close() }

// legacy computes c by the former formulation (ops.LegacyStationaryMatrix / MatrixGrad, cov_legacy_test.go).
func (c *covCase) legacy(s *ops.Stationary) *covResult {
	x1 := ops.CovInput{Data: c.x1, Shape: []int{c.n, c.d}}
	x2 := ops.CovInput{Data: c.x2, Shape: []int{c.m, c.d}}
	var h []ops.CovInput
	for _, in := range c.h {
		h = append(h, ops.CovInput{Data: in.Value, Shape: in.Shape})
	}
	r := &covResult{k: make([]float64, c.n*c.m), dx1: make([]float64, c.n*c.d)}
	ops.LegacyStationaryMatrix(s, x1, x2, h, r.k)
	ops.LegacyStationaryMatrixGrad(s, ops.CovWrtX1, x1, x2, h, r.k, c.w, r.dx1)
	if c.grad2 {
		d2 := make([]float64, c.m*c.d)
		ops.LegacyStationaryMatrixGrad(s, ops.CovWrtX2, x1, x2, h, r.k, c.w, d2)
		if c.shared {
			for i, v := range d2 {
				r.dx1[i] += v
			}
		} else {
			r.dx2 = d2
		}
	}
	for j, in := range c.h {
		dh := make([]float64, len(in.Value))
		ops.LegacyStationaryMatrixGrad(s, ops.CovWrtH0+j, x1, x2, h, r.k, c.w, dh)
		r.dh = append(r.dh, dh)
	}
	return r
}

// covClose fails unless got and want agree within tol relative to the largest |want| (the scale of a gradient's
// entries: a small entry is a cancellation of terms of that size).
func covCloseAll(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s[%d] = %.17g, former formulation %.17g (difference %.3g, scale %.3g)", what, i, got[i], want[i], d, scale)
		}
	}
}

// The fused op agrees with the former formulation (each gradient its own pass, Gemms for every product) on
// every stationary family, at the edge shapes N ∈ {1, 2, 3, 17, 1024}, M ∈ {1, 5, 200}, D ∈ {1, 8, 20} (and
// D = 40, past the direct distances), with rows of x2 on rows of x1 (near pairs: the subgradient at r = 0),
// K(X, X) with repeated rows, and x2's gradient asked for or not.
func TestCovFusedMatchesLegacy(t *testing.T) {
	t.Parallel()
	type shape struct{ n, m, d int }
	var shapes []shape
	for _, n := range []int{1, 2, 3, 17, 1024} {
		for _, m := range []int{1, 5, 200} {
			for _, d := range []int{1, 8, 20} {
				shapes = append(shapes, shape{n, m, d})
			}
		}
	}
	shapes = append(shapes, shape{17, 200, 40}, shape{200, 1024, 8})
	for _, f := range covFamilies {
		s, ok := f.(*ops.Stationary)
		if !ok {
			continue
		}
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			var cases []*covCase
			for i, sh := range shapes {
				cases = append(cases, newCovCase(f, sh.n, sh.m, sh.d, false, i%2 == 0, i%3 == 0, uint64(i)))
			}
			for _, n := range []int{1, 3, 17, 200} {
				for _, d := range []int{1, 8, 20, 40} {
					cases = append(cases, newCovCase(f, n, n, d, true, true, n > 2, uint64(n+d)))
				}
			}
			for _, c := range cases {
				p := newCovProgram(t, c)
				got := p.run(t)
				p.close()
				want := c.legacy(s)
				covCloseAll(t, c.String()+"/K", got.k, want.k, 1e-13)
				covCloseAll(t, c.String()+"/dx1", got.dx1, want.dx1, 1e-10)
				if c.grad2 && !c.shared {
					covCloseAll(t, c.String()+"/dx2", got.dx2, want.dx2, 1e-10)
				}
				for j := range want.dh {
					covCloseAll(t, fmt.Sprintf("%s/d%s", c, c.h[j].Name), got.dh[j], want.dh[j], 1e-10)
				}
			}
		})
	}
}

// sameBits fails unless a and b are bit for bit equal.
func covSameBits(t *testing.T, what string, a, b *covResult) {
	t.Helper()
	cmp := func(name string, x, y []float64) {
		if len(x) != len(y) {
			t.Fatalf("%s: %s has %d and %d values", what, name, len(x), len(y))
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				t.Fatalf("%s: %s[%d] = %v (%#x) and %v (%#x)", what, name, i, x[i], math.Float64bits(x[i]), y[i], math.Float64bits(y[i]))
			}
		}
	}
	cmp("K", a.k, b.k)
	cmp("dx1", a.dx1, b.dx1)
	cmp("dx2", a.dx2, b.dx2)
	if len(a.dh) != len(b.dh) {
		t.Fatalf("%s: %d and %d hyperparameter gradients", what, len(a.dh), len(b.dh))
	}
	for j := range a.dh {
		cmp(fmt.Sprint("dh", j), a.dh[j], b.dh[j])
	}
}

// CovMatrix and all its gradients have the same bits for GOMAXPROCS 1, 2 and 3 and for every kernel of
// ops/internal/blas and ops/internal/vmath (GPZOO_BLAS=avx512|avx2|generic), for every registered family, on the
// SVGP shapes (K(Z, X) with and without x2's gradient, K(Z, Z)) with near pairs, and on small and wide shapes.
func TestCovBitsAcrossProcsAndKernels(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(0)
	prevBLAS, prevVMath := ops.BLASKernel(), ops.VMathKernel()
	defer func() {
		runtime.GOMAXPROCS(prevProcs)
		ops.SetBLASKernel(prevBLAS)
		ops.SetVMathKernel(prevVMath)
	}()
	kernels := ops.VMathKernels()
	for _, f := range covFamilies {
		for i, c := range []*covCase{
			newCovCase(f, 200, 1024, 8, false, false, true, 1),
			newCovCase(f, 200, 1024, 8, false, true, true, 2),
			newCovCase(f, 200, 200, 8, true, true, true, 3),
			newCovCase(f, 17, 13, 20, false, true, true, 4),
			newCovCase(f, 300, 130, 40, false, true, true, 5),
		} {
			if testing.Short() && i > 2 {
				continue
			}
			var first *covResult
			var firstName string
			for _, kern := range kernels {
				for _, procs := range []int{1, 2, 3} {
					runtime.GOMAXPROCS(procs)
					if !ops.SetVMathKernel(kern) || !ops.SetBLASKernel(kern) {
						t.Fatalf("kernel %s not available", kern)
					}
					p := newCovProgram(t, c)
					r := p.run(t)
					r2 := p.run(t) // a second run: the workspace's reused buffers and kept r² give the same bits
					p.close()
					name := fmt.Sprintf("%s, kernel %s, GOMAXPROCS %d", c, kern, procs)
					covSameBits(t, name+": second run against first", r2, r)
					if first == nil {
						first, firstName = r, name
						continue
					}
					covSameBits(t, name+" against "+firstName, r, first)
				}
			}
		}
	}
}

// The op's workspace follows its inputs: after new values of x1, x2 or a hyperparameter (G.Let), a run gives the
// bits of a fresh graph on those values, for every family.
func TestCovWorkspaceFollowsInputs(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			c := newCovCase(f, 40, 300, 3, false, true, true, 7)
			p := newCovProgram(t, c)
			defer p.close()
			p.run(t)
			d := newCovCase(f, 40, 300, 3, false, true, true, 8) // new values, same shapes
			p.set(t, 0, d.x1)
			p.set(t, 1, d.x2)
			for j, h := range d.h {
				p.set(t, 2+j, h.Value)
			}
			got := p.run(t)
			d.w = c.w // the loss's W is a constant of c's graph
			fresh := newCovProgram(t, d)
			defer fresh.close()
			covSameBits(t, "after Let", got, fresh.run(t))
		})
	}
}
