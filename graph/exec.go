package graph

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// executor runs a compiled Program's nodes: gpzoo's replacement for gorgonia's TapeMachine.
//
// The tape machine runs one instruction after another on one goroutine, so a step used the second core only
// inside the calls large enough to split (Dgemm above 4·10⁶ flops, covariance matrices above 2¹⁵ entries, …):
// at the sizes users have (hundreds of rows, M ≈ 100) most calls are smaller, and a default fit ran no faster
// on two cores than on one. The executor runs the same nodes, in the same dependency order, as tasks of an
// ops.TaskGraph: nodes whose operands are ready run concurrently (a covariance matrix beside a Cholesky factor,
// the gradients of independent branches), and a goroutine with no ready node helps the running nodes' own
// parallel calls.
//
// Results do not depend on the schedule: every node's value is a function of its operands only, except for
// the state some ops share (ops.SharedState: the gradient ops of one forward op share its workspace, random ops
// their generator), and nodes sharing state are chained in the engine's topological order, the order the tape
// machine ran them in — random numbers are drawn in the same order, and a Program gives the same bits as before
// and for every GOMAXPROCS.
//
// It uses only the engine's exported surface: the topological sort, each node's operands (ExprGraph.From, in
// operand order), its Op's Do and the values bound to leaves.
type executor struct {
	nodes  []*G.Node // the subgraph, operands before their users (the engine's tape order)
	pos    map[*G.Node]int
	in     [][]int     // operands of each node (positions)
	args   [][]G.Value // scratch: each node's operand values
	vals   []G.Value
	leaves []int                 // nodes without an op: their values are bound (Let) before each run
	tasks  []int                 // nodes with an op, in order: task t runs node tasks[t]
	sums   map[int]*tensor.Dense // nodes that add two tensors of their own shape (the engine's gradient sums): their buffers
	dag    ops.TaskGraph
}

// newExecutor prepares the nodes roots depend on, in g.
// owners records which executor runs each op of the graph (nil: more than one), for the memory plan.
func newExecutor(g *G.ExprGraph, roots G.Nodes, owners map[G.Op]*executor) (*executor, error) {
	sorted, err := G.Sort(g.ExactSubgraphRoots(roots...))
	if err != nil {
		return nil, fmt.Errorf("graph: sorting the graph: %w", err)
	}
	e := &executor{pos: make(map[*G.Node]int, len(sorted))}
	for i := len(sorted) - 1; i >= 0; i-- { // Sort lists users before their operands
		n := sorted[i]
		e.pos[n] = len(e.nodes)
		e.nodes = append(e.nodes, n)
	}
	e.in = make([][]int, len(e.nodes))
	e.args = make([][]G.Value, len(e.nodes))
	e.vals = make([]G.Value, len(e.nodes))
	task := make([]int, len(e.nodes)) // node → task (−1: a leaf)
	for i, n := range e.nodes {
		if n.Op() == nil {
			e.leaves = append(e.leaves, i)
			task[i] = -1
			continue
		}
		for it := g.From(n.ID()); it.Next(); {
			c, ok := it.Node().(*G.Node)
			p, in := e.pos[c]
			if !ok || !in {
				return nil, fmt.Errorf("graph: node %s: operand outside the compiled subgraph", n.Name())
			}
			e.in[i] = append(e.in[i], p)
		}
		e.args[i] = make([]G.Value, len(e.in[i]))
		if isEngineSum(n, e.in[i], e.nodes) {
			if e.sums == nil {
				e.sums = map[int]*tensor.Dense{}
			}
			e.sums[i] = tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(n.Shape()...))
		}
		task[i] = len(e.tasks)
		e.tasks = append(e.tasks, i)
	}
	// Dependencies: each node on its operands that have ops, and on the previous node sharing its state.
	e.dag = ops.TaskGraph{Succ: make([][]int32, len(e.tasks)), Preds: make([]int32, len(e.tasks))}
	last := map[any]int{}
	for t, i := range e.tasks {
		var preds []int
		for _, p := range e.in[i] {
			if task[p] >= 0 {
				preds = append(preds, task[p])
			}
		}
		if key := ops.SharedState(e.nodes[i].Op()); key != nil {
			if p, ok := last[key]; ok {
				preds = append(preds, p)
			}
			last[key] = t
		}
		slices.Sort(preds)
		for _, p := range slices.Compact(preds) {
			e.dag.Succ[p] = append(e.dag.Succ[p], int32(t))
			e.dag.Preds[t]++
		}
	}
	if err := e.dag.Check(); err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	e.plan(owners, roots)
	return e, nil
}

// planMin is the least size (float64 values) of an output the memory plan places: smaller ones keep buffers of
// their own (a variable for the tests, which place every output).
var planMin = 1 << 15

// plan lets nodes whose values are never needed at the same time share one buffer: a full-batch deep-GP step
// holds the gradient of every layer's K(Zα, X) [500,N], say, and each is dead once its layer's covariance
// backward has run, before the next layer's is made. A node y may take the buffer last used by x when every
// reader of x is an ancestor of y in the task graph, so that under every schedule x's readers have run before y
// writes; x has a reader (roots, whose values a run reports, are never placed), so x's own predecessors in the
// buffer are then done too. Placed are the outputs of gpzoo's ops (ops.OutputSize) and the executor's sums of at
// least planMin values whose readers are all gpzoo ops or sums (never a view of their operand), used by no other
// Program of the graph (an op two Programs run keeps a buffer of its own: owners).
func (e *executor) plan(owners map[G.Op]*executor, roots G.Nodes) {
	root := make(map[int]bool, len(roots))
	for _, r := range roots {
		root[e.pos[r]] = true
	}
	task := make([]int, len(e.nodes))
	for i := range task {
		task[i] = -1
	}
	for t, i := range e.tasks {
		task[i] = t
	}
	readers := make([][]int, len(e.nodes))
	for t, i := range e.tasks {
		for _, p := range e.in[i] {
			readers[p] = append(readers[p], t)
		}
	}
	size := make([]int, len(e.tasks)) // 0: not placed
	any := false
	for t, i := range e.tasks {
		op := e.nodes[i].Op()
		if _, sum := e.sums[i]; !sum && ops.OwnOutput(op) { // (gpzoo's ops are pointers: comparable keys)
			if prev, seen := owners[op]; seen && prev != e {
				if n, ok := ops.OutputSize(op); ok && prev != nil { // another Program placed it: its own buffer again
					ops.PlaceOutput(op, make([]float64, n))
				}
				owners[op] = nil // run by two Programs: never placed again
				continue
			}
			owners[op] = e
		}
		n, ok := ops.OutputSize(op)
		if buf, sum := e.sums[i]; sum {
			n, ok = buf.Size(), true
		}
		if !ok || n < planMin || root[i] || len(readers[i]) == 0 {
			continue
		}
		for _, r := range readers[i] {
			if _, sum := e.sums[e.tasks[r]]; !sum && !ops.OwnOutput(e.nodes[e.tasks[r]].Op()) {
				ok = false
				break
			}
		}
		if ok {
			size[t], any = n, true
		}
	}
	if !any {
		return
	}
	// anc[t]: the tasks that run before task t under every schedule (its predecessors, transitively), a bit set.
	words := (len(e.tasks) + 63) / 64
	anc := make([][]uint64, len(e.tasks))
	bits := make([]uint64, len(e.tasks)*words)
	for t := range e.tasks {
		anc[t] = bits[t*words : (t+1)*words]
	}
	for p, succ := range e.dag.Succ {
		for _, s := range succ {
			for w, v := range anc[p] {
				anc[s][w] |= v
			}
			anc[s][p/64] |= 1 << (p % 64)
		}
	}
	before := func(x, y int) bool { // every reader of x's node runs before task y
		for _, r := range readers[e.tasks[x]] {
			if anc[y][r/64]&(1<<(r%64)) == 0 {
				return false
			}
		}
		return true
	}
	type buffer struct{ size, last int } // its largest user's size, the task that used it last
	var bufs []buffer
	slot := make([]int, len(e.tasks))
	for t := range e.tasks {
		if size[t] == 0 {
			continue
		}
		best := -1
		for b, f := range bufs { // the smallest free buffer large enough, else the largest free one
			if !before(f.last, t) {
				continue
			}
			switch {
			case best < 0:
				best = b
			case f.size >= size[t] && (bufs[best].size < size[t] || f.size < bufs[best].size):
				best = b
			case bufs[best].size < size[t] && f.size > bufs[best].size:
				best = b
			}
		}
		if best < 0 {
			best = len(bufs)
			bufs = append(bufs, buffer{})
		}
		bufs[best].size, bufs[best].last = max(bufs[best].size, size[t]), t
		slot[t] = best
	}
	mem := make([][]float64, len(bufs))
	for b, f := range bufs {
		mem[b] = make([]float64, f.size)
	}
	for t, i := range e.tasks {
		if size[t] == 0 {
			continue
		}
		data := mem[slot[t]][:size[t]:size[t]]
		if buf, sum := e.sums[i]; sum {
			e.sums[i] = tensor.New(tensor.WithShape(buf.Shape().Clone()...), tensor.WithBacking(data))
			continue
		}
		ops.PlaceOutput(e.nodes[i].Op(), data)
	}
}

// run executes every node once: leaves take their bound values, then the tasks run.
func (e *executor) run() error {
	for _, i := range e.leaves {
		if e.vals[i] = e.nodes[i].Value(); e.vals[i] == nil {
			return fmt.Errorf("graph: leaf %s has no value", e.nodes[i].Name())
		}
	}
	return e.dag.Run(e.exec)
}

// exec runs task t's node.
func (e *executor) exec(t int) error {
	i := e.tasks[t]
	args := e.args[i]
	for k, p := range e.in[i] {
		args[k] = e.vals[p]
	}
	if buf, ok := e.sums[i]; ok {
		if a, b, ok := denseOperands(args); ok {
			ops.AddTo(buf.Float64s(), a, b)
			clear(args)
			e.vals[i] = buf
			return nil
		}
	}
	v, err := e.nodes[i].Op().Do(args...)
	clear(args) // keep no reference to the operands between runs
	if err != nil {
		return fmt.Errorf("%v: %w", e.nodes[i].Op(), err)
	}
	if v == nil {
		return fmt.Errorf("%v: no value", e.nodes[i].Op())
	}
	e.vals[i] = v
	return nil
}

// isEngineSum reports whether n is the engine's elementwise addition of two float64 tensors of n's shape: the
// sums gorgonia's differentiation builds for a node used several times (gradient contributions). The engine's
// Do allocates a new tensor for each; the executor adds into a buffer of the node's own (ops.AddTo: the same
// sums, entry by entry).
func isEngineSum(n *G.Node, in []int, nodes []*G.Node) bool {
	op := n.Op()
	if len(in) != 2 || n.Dtype() != tensor.Float64 || n.Shape().IsScalar() ||
		reflect.TypeOf(op).String() != "gorgonia.elemBinOp" || !strings.HasPrefix(op.String(), "+ ") {
		return false
	}
	for _, p := range in {
		if !nodes[p].Shape().Eq(n.Shape()) || len(nodes[p].Shape()) != len(n.Shape()) {
			return false
		}
	}
	return true
}

// denseOperands returns the data of two contiguous float64 tensors of one size.
func denseOperands(args []G.Value) (a, b []float64, ok bool) {
	x, ok1 := args[0].(*tensor.Dense)
	y, ok2 := args[1].(*tensor.Dense)
	if !ok1 || !ok2 || x.Dtype() != tensor.Float64 || y.Dtype() != tensor.Float64 || x.RequiresIterator() ||
		y.RequiresIterator() || x.Size() != y.Size() {
		return nil, nil, false
	}
	return x.Float64s(), y.Float64s(), true
}

// value returns n's value from the last run (nil if n is not in the executor's subgraph or has not run).
func (e *executor) value(n *G.Node) G.Value {
	if i, ok := e.pos[n]; ok {
		return e.vals[i]
	}
	return nil
}
