package graph

import (
	"fmt"
	"slices"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Graph builds one differentiable computation. The zero value is not usable: call New.
type Graph struct {
	g      *G.ExprGraph
	err    error
	names  map[string]int
	inputs map[string]*input
	order  []string // input names in creation order
	params []*boundParam
	byP    map[*Param]*boundParam
	mons   []*monitor
	jitter ops.JitterPolicy
	chol   *ops.CholeskyStats
	kids   map[*G.Node][]*G.Node // operands of every node built by apply (gorgonia does not export them)
	memo   map[any]*Node
	zeros  map[*G.Node]bool   // constants made by Zeros: Add and Sub skip them
	placed map[G.Op]*executor // the executor of the Program running each op (nil: several), for memory plans
}

// owners returns the map of which Program's executor runs each op, made on first use.
func (g *Graph) owners() map[G.Op]*executor {
	if g.placed == nil {
		g.placed = map[G.Op]*executor{}
	}
	return g.placed
}

// Node is a value in a Graph: a leaf (input, constant, param) or the result of an op.
type Node struct {
	n *G.Node
	g *Graph
}

type input struct {
	node  *G.Node
	shape []int
	data  []float64
	t     *tensor.Dense
}

type boundParam struct {
	p    *Param
	leaf *G.Node
	c    *Node // constrained
	data []float64
	t    *tensor.Dense
}

type monitor struct {
	name string
	n    *G.Node
}

// Options configure a Graph. The zero value gives the defaults.
type Options struct {
	// Jitter is the Cholesky jitter policy of every Cholesky in the graph (zero fields mean ops' defaults).
	// Its Stats field is ignored: the Graph keeps its own counts (see Program.CholeskyStats).
	Jitter ops.JitterPolicy
}

// New returns an empty Graph.
func New(o Options) *Graph {
	g := &Graph{g: G.NewGraph(), names: map[string]int{}, inputs: map[string]*input{}, byP: map[*Param]*boundParam{}, kids: map[*G.Node][]*G.Node{},
		jitter: o.Jitter, chol: &ops.CholeskyStats{}}
	g.jitter.Stats = g.chol
	return g
}

// Err returns the first error met while building, or nil.
func (g *Graph) Err() error { return g.err }

func (g *Graph) fail(err error) *Node {
	if g.err == nil {
		g.err = err
	}
	return &Node{g: g}
}

// unique returns base, or base#k for the k-th repeat, so no two leaves share a name.
func (g *Graph) unique(base string) string {
	k := g.names[base]
	g.names[base] = k + 1
	if k == 0 {
		return base
	}
	return fmt.Sprintf("%s#%d", base, k)
}

// Shape returns the node's shape (empty for a scalar; nil for a poisoned node).
func (n *Node) Shape() []int {
	if n == nil || n.n == nil {
		return nil
	}
	s := n.n.Shape()
	if s.IsScalar() {
		return []int{}
	}
	return slices.Clone([]int(s))
}

// Name returns the engine's name of the node.
func (n *Node) Name() string {
	if n == nil || n.n == nil {
		return "<invalid>"
	}
	return n.n.Name()
}

func newLeafTensor(shape []int, data []float64) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

func (g *Graph) leaf(name string, shape []int, data []float64) (*G.Node, *tensor.Dense) {
	name = g.unique(name)
	if len(shape) == 0 {
		return G.NewScalar(g.g, tensor.Float64, G.WithName(name), G.WithValue(data[0])), nil
	}
	t := newLeafTensor(shape, data)
	return G.NewTensor(g.g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(t)), t
}

func size(shape []int) (int, error) {
	n := 1
	for _, s := range shape {
		if s <= 0 {
			return 0, &ops.ShapeError{Op: "graph", Want: "positive dimensions", Got: fmt.Sprint(shape)}
		}
		n *= s
	}
	return n, nil
}

// Input declares a data leaf named name with a fixed shape; Program.Set binds its value before each Run
// (it starts at zero). Names must be unique among inputs.
func (g *Graph) Input(name string, shape ...int) *Node {
	if g.err != nil {
		return &Node{g: g}
	}
	if _, dup := g.inputs[name]; dup || name == "" {
		return g.fail(fmt.Errorf("graph: input name %q empty or already used", name))
	}
	n, err := size(shape)
	if err != nil {
		return g.fail(fmt.Errorf("graph: input %q: %w", name, err))
	}
	in := &input{shape: slices.Clone(shape), data: make([]float64, n)}
	in.node, in.t = g.leaf("input:"+name, shape, in.data)
	g.inputs[name] = in
	g.order = append(g.order, name)
	return &Node{n: in.node, g: g}
}

// Const returns a constant leaf with the given value and shape (an empty shape is a scalar).
func (g *Graph) Const(name string, value []float64, shape ...int) *Node {
	if g.err != nil {
		return &Node{g: g}
	}
	n, err := size(shape)
	if err == nil && n != len(value) {
		err = &ops.ShapeError{Op: "Const " + name, Want: fmt.Sprintf("%d values", n), Got: fmt.Sprint(len(value))}
	}
	if err != nil {
		return g.fail(fmt.Errorf("graph: const %q: %w", name, err))
	}
	node, _ := g.leaf("const:"+name, shape, slices.Clone(value))
	return &Node{n: node, g: g}
}

// Scalar returns a constant scalar leaf.
func (g *Graph) Scalar(name string, v float64) *Node { return g.Const(name, []float64{v}) }

// Param returns the constrained node of p in this graph, creating p's leaf on first use.
func (g *Graph) Param(p *Param) *Node {
	if g.err != nil {
		return &Node{g: g}
	}
	if p == nil {
		return g.fail(fmt.Errorf("graph: nil Param"))
	}
	if b, ok := g.byP[p]; ok {
		return b.c
	}
	b := &boundParam{p: p, data: slices.Clone(p.raw)}
	b.leaf, b.t = g.leaf("param:"+p.name, p.shape, b.data)
	g.byP[p] = b
	g.params = append(g.params, b)
	b.c = p.t.Forward(g, &Node{n: b.leaf, g: g})
	return b.c
}

// RawParam returns the leaf of p's unconstrained (raw) value in this graph, creating it on first use: for ops that
// apply the transform themselves, as ops.CGLoss does through its kernel's own graphs.
func (g *Graph) RawParam(p *Param) *Node {
	if g.Param(p).n == nil {
		return &Node{g: g}
	}
	return &Node{n: g.byP[p].leaf, g: g}
}

// Monitor asks Programs compiled from g to copy the value of n during each forward pass, under name.
func (g *Graph) Monitor(name string, n *Node) {
	if g.check("Monitor", n) != nil {
		return
	}
	for _, m := range g.mons {
		if m.name == name {
			g.fail(fmt.Errorf("graph: monitor %q declared twice", name))
			return
		}
	}
	m := &monitor{name: name, n: n.n}
	g.mons = append(g.mons, m)
}

// check validates operands: they must belong to g and not be poisoned.
func (g *Graph) check(op string, xs ...*Node) error {
	if g.err != nil {
		return g.err
	}
	for i, x := range xs {
		if x == nil || x.n == nil {
			g.fail(fmt.Errorf("graph: %s: operand %d is nil or invalid", op, i))
			return g.err
		}
		if x.g != g {
			g.fail(fmt.Errorf("graph: %s: operand %d (%s) belongs to another Graph", op, i, x.n.Name()))
			return g.err
		}
	}
	return nil
}

// apply runs an ops constructor on the operands' engine nodes, recording the first error; a panic inside the
// engine is recovered into that error.
func (g *Graph) apply(op string, f func(xs ...*G.Node) (*G.Node, error), xs ...*Node) (out *Node) {
	if g.check(op, xs...) != nil {
		return &Node{g: g}
	}
	ns := make([]*G.Node, len(xs))
	names := make([]string, len(xs))
	for i, x := range xs {
		ns[i] = x.n
		names[i] = x.n.Name()
	}
	defer func() {
		if r := recover(); r != nil {
			out = g.fail(fmt.Errorf("graph: %s%v: engine panic: %v", op, names, r))
		}
	}()
	n, err := f(ns...)
	if err != nil {
		return g.fail(fmt.Errorf("graph: %s%v: %w", op, names, err))
	}
	g.kids[n] = ns
	return &Node{n: n, g: g}
}

// Graph returns the Graph the node belongs to (nil for a nil node).
func (n *Node) Graph() *Graph {
	if n == nil {
		return nil
	}
	return n.g
}

// Fail records err as the Graph's error (if it has none yet) and returns a poisoned node: for model code that
// detects invalid input while building.
func (g *Graph) Fail(err error) *Node { return g.fail(err) }

// Zeros returns a constant of zeros with the given shape.
func (g *Graph) Zeros(name string, shape ...int) *Node {
	if g.err != nil {
		return &Node{g: g}
	}
	if _, err := size(shape); err != nil {
		return g.fail(fmt.Errorf("graph: Zeros %q: %w", name, err))
	}
	// The leaf gets its value only when a Program runs it (bindZeros): Add and Sub skip a Zeros operand, so a
	// white-noise kernel's cross-covariance [M,N], say, would otherwise hold M·N zeros that no node reads.
	name = g.unique("const:" + name)
	var n *G.Node
	if len(shape) == 0 {
		n = G.NewScalar(g.g, tensor.Float64, G.WithName(name))
	} else {
		n = G.NewTensor(g.g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name))
	}
	if g.zeros == nil {
		g.zeros = map[*G.Node]bool{}
	}
	g.zeros[n] = true
	return &Node{n: n, g: g}
}

// bindZeros gives the Zeros leaves among nodes their value (zeros of their shape), once: only those a compiled
// Program reads are ever allocated.
func (g *Graph) bindZeros(nodes []*G.Node) error {
	for _, n := range nodes {
		if !g.zeros[n] || n.Value() != nil {
			continue
		}
		var err error
		if s := n.Shape(); s.IsScalar() {
			err = G.Let(n, 0.0)
		} else {
			sz, _ := size(s)
			err = G.Let(n, newLeafTensor(s, make([]float64, sz)))
		}
		if err != nil {
			return fmt.Errorf("graph: binding zeros %s: %w", n.Name(), err)
		}
	}
	return nil
}

// zeroOperand reports whether z is a constant made by Zeros with x's shape, so that x ± z is x itself: the
// cross-covariance of a white-noise kernel added to another kernel's, say ([M,N] of zeros and its gradients
// carried through an Add every step otherwise).
func (g *Graph) zeroOperand(z, x *Node) bool {
	return z.n != nil && x.n != nil && g.zeros[z.n] && z.n.Shape().Eq(x.n.Shape())
}

// Fill returns a constant with every entry v.
func (g *Graph) Fill(name string, v float64, shape ...int) *Node {
	n, err := size(shape)
	if err != nil {
		return g.fail(fmt.Errorf("graph: Fill %q: %w", name, err))
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = v
	}
	return g.Const(name, d, shape...)
}

// Memo returns the node built by f for key in this graph, calling f only the first time: a graph-scoped cache,
// so that, say, a layer's Predict and KL share one Cholesky factor of Kuu within one graph. Keys should be
// comparable values private to the caller (e.g. a struct{layer pointer; name}).
func (g *Graph) Memo(key any, f func() *Node) *Node {
	if g.memo == nil {
		g.memo = map[any]*Node{}
	}
	if n, ok := g.memo[key]; ok {
		return n
	}
	n := f()
	g.memo[key] = n
	return n
}
