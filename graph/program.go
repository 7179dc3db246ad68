package graph

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Program is a compiled Graph: it binds inputs by name, runs the forward pass (and, when compiled with a loss,
// the backward pass) and exposes the loss, the gradient of every trainable Param and the monitored values.
// A Program is not safe for concurrent use.
type Program struct {
	g       *Graph
	exec    *executor
	loss    *G.Node
	lossVal float64
	outs    []*output
	trained []*boundParam // params whose gradients are computed, in Graph order
	gnodes  []*G.Node
	grads   [][]float64
	mons    map[string][]float64
	runs    int
	roots   G.Nodes // the nodes whose values a run reports: loss, outputs, gradients, monitors
}

type output struct {
	name  string
	n     *G.Node
	shape []int
	data  []float64
	// copied says data holds the last Run's value: outputs are copied out of the executor on first read
	// (Output), so that a caller reading them in place (OutputView) pays no copy.
	copied bool
}

// ErrNotInLoss is returned by Compile when a trainable Param does not affect the loss (its gradient would be
// undefined, and an optimiser would silently never move it).
var ErrNotInLoss = errors.New("graph: trainable param does not affect the loss")

// Compile returns a Program that evaluates loss (a scalar) and its gradient with respect to every trainable
// Param used in g. Outputs are extra nodes whose values are copied after each Run (by name; see Output).
func (g *Graph) Compile(loss *Node, outputs map[string]*Node) (*Program, error) {
	if g.check("Compile", loss) != nil {
		return nil, g.err
	}
	if s := loss.n.Shape(); !s.IsScalar() {
		return nil, &ops.ShapeError{Op: "Compile", Want: "a scalar loss", Got: fmt.Sprint(s)}
	}
	p, err := g.compile(outputs)
	if err != nil {
		return nil, err
	}
	p.loss = loss.n
	p.roots = append(p.roots, loss.n)
	var wrt G.Nodes
	for _, b := range g.params {
		if b.p.trainable {
			p.trained = append(p.trained, b)
			wrt = append(wrt, b.leaf)
		}
	}
	if len(wrt) > 0 {
		if err := p.differentiate(wrt); err != nil {
			return nil, err
		}
	}
	return p, p.finish()
}

// CompileForward returns a Program that only evaluates outputs (no loss, no gradients): prediction graphs.
func (g *Graph) CompileForward(outputs map[string]*Node) (*Program, error) {
	if len(outputs) == 0 {
		return nil, errors.New("graph: CompileForward: no outputs")
	}
	p, err := g.compile(outputs)
	if err != nil {
		return nil, err
	}
	return p, p.finish()
}

func (g *Graph) compile(outputs map[string]*Node) (*Program, error) {
	if g.err != nil {
		return nil, g.err
	}
	p := &Program{g: g, mons: map[string][]float64{}}
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := outputs[name]
		if g.check("output "+name, n) != nil {
			return nil, g.err
		}
		o := &output{name: name, n: n.n, shape: n.Shape()}
		p.roots = append(p.roots, n.n)
		p.outs = append(p.outs, o)
	}
	return p, nil
}

func (p *Program) differentiate(wrt G.Nodes) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: differentiating the loss: engine panic: %v", r)
		}
	}()
	// A param that does not reach the loss makes the engine fail obscurely: name it instead.
	reach := ancestors(p.loss, p.g.kids)
	for _, b := range p.trained {
		if !reach[b.leaf] {
			return fmt.Errorf("%w: %q", ErrNotInLoss, b.p.name)
		}
	}
	gs, err := G.Grad(p.loss, wrt...)
	if err != nil {
		return fmt.Errorf("graph: differentiating the loss: %w", err)
	}
	p.gnodes = gs
	p.grads = make([][]float64, len(gs))
	for i, b := range p.trained {
		p.grads[i] = make([]float64, len(b.p.raw))
	}
	return nil
}

func ancestors(n *G.Node, kids map[*G.Node][]*G.Node) map[*G.Node]bool {
	seen := map[*G.Node]bool{}
	stack := []*G.Node{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] {
			continue
		}
		seen[x] = true
		stack = append(stack, kids[x]...)
	}
	return seen
}

func (p *Program) finish() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: compiling: engine panic: %v", r)
		}
	}()
	// Compile only what the results need: the stray gradient nodes gorgonia creates for operands nobody
	// differentiates (data inputs such as X in K(Z, X)) are left out.
	roots := append(G.Nodes{}, p.roots...)
	roots = append(roots, p.gnodes...)
	for _, m := range p.g.mons {
		roots = append(roots, m.n)
	}
	if p.exec, err = newExecutor(p.g.g, roots, p.g.owners()); err != nil {
		return err
	}
	return p.g.bindZeros(p.exec.nodes)
}

// Set copies data into the input named name (its full size, row-major) for the following runs.
func (p *Program) Set(name string, data []float64) error {
	in, ok := p.g.inputs[name]
	if !ok {
		return fmt.Errorf("graph: Set: no input named %q", name)
	}
	if len(data) != len(in.data) {
		return &ops.ShapeError{Op: "Set " + name, Want: fmt.Sprintf("%d values (shape %v)", len(in.data), in.shape), Got: fmt.Sprint(len(data))}
	}
	copy(in.data, data)
	return nil
}

// InputData returns the storage of input name itself (write into it instead of calling Set to avoid a copy),
// or nil if there is no such input.
func (p *Program) InputData(name string) []float64 {
	if in, ok := p.g.inputs[name]; ok {
		return in.data
	}
	return nil
}

// Run executes the program once: params are read from their storage, inputs from their last Set, then the
// forward (and backward) pass runs. Afterwards Loss, Grad, Output and Monitored report this run.
func (p *Program) Run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: run: engine panic: %v", r)
		}
	}()
	for _, b := range p.g.params {
		copy(b.data, b.p.raw)
		if err := letLeaf(b.leaf, b.t, b.data); err != nil {
			return err
		}
	}
	for _, name := range p.g.order {
		in := p.g.inputs[name]
		if err := letLeaf(in.node, in.t, in.data); err != nil {
			return err
		}
	}
	if err := p.exec.run(); err != nil {
		return fmt.Errorf("graph: run: %w", ops.UnwrapVM(err))
	}
	p.runs++
	if p.loss != nil {
		v, err := scalarOf(p.exec.value(p.loss))
		if err != nil {
			return err
		}
		p.lossVal = v
	}
	for i, gn := range p.gnodes {
		if err := copyValue(p.grads[i], p.exec.value(gn)); err != nil {
			return fmt.Errorf("graph: gradient of %q: %w", p.trained[i].p.name, err)
		}
	}
	for _, o := range p.outs {
		if p.exec.value(o.n) == nil {
			return fmt.Errorf("graph: output %q: no value (was the node executed?)", o.name)
		}
		o.copied = false
	}
	for _, m := range p.g.mons {
		d, err := appendValue(p.mons[m.name][:0], p.exec.value(m.n))
		if err != nil {
			return fmt.Errorf("graph: monitor %q: %w", m.name, err)
		}
		p.mons[m.name] = d
	}
	return nil
}

func letLeaf(n *G.Node, t *tensor.Dense, data []float64) error {
	if t == nil {
		return G.Let(n, data[0])
	}
	return G.Let(n, t)
}

func scalarOf(v G.Value) (float64, error) {
	switch t := v.(type) {
	case *G.F64:
		return float64(*t), nil
	case *tensor.Dense:
		if t.Size() == 1 {
			return t.Float64s()[0], nil
		}
	}
	return 0, fmt.Errorf("graph: expected a scalar value, got %T", v)
}

func appendValue(dst []float64, v G.Value) ([]float64, error) {
	switch t := v.(type) {
	case *G.F64:
		return append(dst, float64(*t)), nil
	case *tensor.Dense:
		if t.RequiresIterator() {
			t = t.Materialize().(*tensor.Dense)
		}
		return append(dst, t.Float64s()...), nil
	case nil:
		return dst, errors.New("no value (was the node executed?)")
	}
	return dst, fmt.Errorf("unexpected value type %T", v)
}

func copyValue(dst []float64, v G.Value) error {
	d, err := appendValue(dst[:0], v)
	if err != nil {
		return err
	}
	if len(d) != len(dst) {
		return &ops.ShapeError{Op: "gradient", Want: fmt.Sprint(len(dst)), Got: fmt.Sprint(len(d))}
	}
	return nil
}

// Loss returns the loss of the last Run.
func (p *Program) Loss() float64 { return p.lossVal }

// Params returns the Params whose gradients this Program computes, in a fixed order.
func (p *Program) Params() []*Param {
	ps := make([]*Param, len(p.trained))
	for i, b := range p.trained {
		ps[i] = b.p
	}
	return ps
}

// AllParams returns every Param the graph reads, trainable or not.
func (p *Program) AllParams() []*Param {
	ps := make([]*Param, len(p.g.params))
	for i, b := range p.g.params {
		ps[i] = b.p
	}
	return ps
}

// Grad returns the gradient of the loss with respect to p's raw value from the last Run (the Program's
// storage: valid until the next Run), or nil when p is not differentiated by this Program.
func (p *Program) Grad(param *Param) []float64 {
	for i, b := range p.trained {
		if b.p == param {
			return p.grads[i]
		}
	}
	return nil
}

// Output returns the value of the named output from the last Run (the Program's copy: valid until the next Run),
// or nil.
func (p *Program) Output(name string) []float64 {
	for _, o := range p.outs {
		if o.name == name {
			if !o.copied {
				d, err := appendValue(o.data[:0], p.exec.value(o.n))
				if err != nil {
					return nil // Run checked the value
				}
				o.data, o.copied = d, true
			}
			return o.data
		}
	}
	return nil
}

// OutputView returns the value of the named output from the last Run in the executor's own memory, without the
// copy Output makes, or nil: read-only, and valid only until the next Run (for hot paths that read an output once,
// such as a kernel block multiplied straight away).
func (p *Program) OutputView(name string) []float64 {
	for _, o := range p.outs {
		if o.name != name {
			continue
		}
		if t, ok := p.exec.value(o.n).(*tensor.Dense); ok && !t.RequiresIterator() {
			return t.Float64s()
		}
		return p.Output(name)
	}
	return nil
}

// OutputNames returns the names of the Program's outputs, in the order they were compiled.
func (p *Program) OutputNames() []string {
	names := make([]string, len(p.outs))
	for i, o := range p.outs {
		names[i] = o.name
	}
	return names
}

// OutputShape returns the shape of the named output, or nil.
func (p *Program) OutputShape(name string) []int {
	for _, o := range p.outs {
		if o.name == name {
			return slices.Clone(o.shape)
		}
	}
	return nil
}

// Monitored returns the value of the monitor name from the last Run (valid until the next Run), or nil.
func (p *Program) Monitored(name string) []float64 { return p.mons[name] }

// CholeskyStats returns the counts of Cholesky calls, jitter retries and failures in this Program's graph.
func (p *Program) CholeskyStats() ops.CholeskyStatsSnapshot { return p.g.chol.Snapshot() }

// Runs returns the number of completed runs.
func (p *Program) Runs() int { return p.runs }

// Close releases the Program's resources (none are held outside the Go heap today; Close is kept so that an
// engine with external resources can be swapped in).
func (p *Program) Close() error { return nil }
