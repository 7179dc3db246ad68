package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"slices"
	"strings"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// kernel is the numerics of one differentiable op: plain Go on row-major []float64.
//
// One generic gorgonia Op (fusedOp) wraps every kernel, so the gorgonia plumbing (types, hashing, buffers,
// symbolic differentiation) is written once. The backward pass of input i is another fusedOp (gradOp) whose
// inputs are the forward inputs, the forward output and the output gradient: the analytic gradient is a plain
// Go function too, never a composition of engine built-ins.
type kernel interface {
	// name is the op's name; params writes every field that changes the op's meaning (it goes into the hash).
	name() string
	params(w io.Writer)
	// arity is the number of inputs.
	arity() int
	// outShape checks the input shapes and returns the output shape (tensor.ScalarShape() for a scalar).
	outShape(in []tensor.Shape) (tensor.Shape, error)
	// forward writes the output into out (len = out shape's size; fully overwritten).
	forward(in []arg, out []float64) error
	// diff reports which inputs the op is differentiable with respect to.
	diff() []bool
	// backward writes into dst (shape of input wrt) the gradient of a scalar loss with respect to input wrt,
	// given the inputs, the forward output and the loss gradient g with respect to the output.
	backward(wrt int, in []arg, out arg, g arg, dst []float64) error
}

// jointBackward is an optional kernel capability: kernels whose input gradients share most of their work
// compute them all in one call. dst[i] is nil for inputs that are not differentiable. The generic gradient ops
// then run it once per forward run and hand each input its part (see gradOp.Do).
type jointBackward interface {
	backwardAll(in []arg, out arg, g arg, dst [][]float64) error
}

// arg is one operand as seen by a kernel: its data (row-major) and shape.
type arg struct {
	data  []float64
	shape tensor.Shape
}

func (a arg) rows() int {
	switch len(a.shape) {
	case 0:
		return 1
	default:
		return a.shape[0]
	}
}

func (a arg) cols() int {
	if len(a.shape) < 2 {
		return 1
	}
	return a.shape[1]
}

// scalar returns the single value of a scalar operand.
func (a arg) scalar() float64 { return a.data[0] }

// fusedOp adapts a kernel to gorgonia's Op and SDOp interfaces.
type fusedOp struct {
	k      kernel
	inDims []int // dims of each input (0 for scalars), fixed at construction: they enter the type
	shape  tensor.Shape
	buf    *tensor.Dense // output buffer, reused across steps
	runs   uint64        // forward runs so far: gradient ops sharing a joint backward key their cache on it
}

var (
	_ G.Op   = (*fusedOp)(nil)
	_ G.SDOp = (*fusedOp)(nil)
	_ G.ADOp = (*fusedOp)(nil)
	_ G.Op   = (*gradOp)(nil)
)

// apply checks the shapes of xs against k and adds the op's node to their graph.
func apply(k kernel, xs ...*G.Node) (*G.Node, error) {
	if len(xs) != k.arity() {
		return nil, &ShapeError{Op: k.name(), Want: fmt.Sprintf("%d operands", k.arity()), Got: fmt.Sprintf("%d", len(xs))}
	}
	shapes := make([]tensor.Shape, len(xs))
	dims := make([]int, len(xs))
	for i, x := range xs {
		if x == nil {
			return nil, &ShapeError{Op: k.name(), Want: "a node", Got: fmt.Sprintf("nil operand %d", i)}
		}
		if x.Dtype() != tensor.Float64 {
			return nil, &ShapeError{Op: k.name(), Want: "float64 operands", Got: fmt.Sprintf("%v operand %d", x.Dtype(), i)}
		}
		shapes[i] = normShape(x.Shape())
		dims[i] = len(shapes[i])
	}
	s, err := k.outShape(shapes)
	if err != nil {
		return nil, err
	}
	return G.ApplyOp(&fusedOp{k: k, inDims: dims, shape: s}, xs...)
}

// normShape returns a copy of s, with gorgonia's scalar shapes mapped to the empty shape. It runs for every
// operand of every op at every run, so it copies with a plain allocation: tensor.Shape.Clone borrows from the
// tensor package's locked pool, which cost a tenth of an SVGP step at VBKS's size (M = 16, B = 32).
func normShape(s tensor.Shape) tensor.Shape {
	if s.IsScalar() || s.IsScalarEquiv() && len(s) == 0 {
		return tensor.ScalarShape()
	}
	return tensor.Shape(slices.Clone([]int(s)))
}

func opType(inDims []int, outDims int) hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, 0, len(inDims)+1)
	for _, d := range inDims {
		ts = append(ts, dimType(d, a))
	}
	ts = append(ts, dimType(outDims, a))
	return hm.NewFnType(ts...)
}

func dimType(d int, a hm.TypeVariable) hm.Type {
	if d == 0 {
		return a
	}
	return G.TensorType{Dims: d, Of: a}
}

func (op *fusedOp) Arity() int    { return op.k.arity() }
func (op *fusedOp) Type() hm.Type { return opType(op.inDims, len(op.shape)) }
func (op *fusedOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}
func (op *fusedOp) ReturnsPtr() bool     { return false }
func (op *fusedOp) CallsExtern() bool    { return false }
func (op *fusedOp) OverwritesInput() int { return -1 }
func (op *fusedOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "gpzoo.%s{", op.k.name())
	op.k.params(h)
	fmt.Fprintf(h, "}%v%v", op.inDims, op.shape)
}
func (op *fusedOp) Hashcode() uint32 { return hashOf(op) }
func (op *fusedOp) String() string {
	var b strings.Builder
	b.WriteString(op.k.name())
	b.WriteString("{")
	op.k.params(&b)
	b.WriteString("}")
	return b.String()
}

func (op *fusedOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := args(op.k.name, op.k.arity(), vs)
	if err != nil {
		return nil, err
	}
	out := op.output()
	if err := op.k.forward(in, out); err != nil {
		return nil, err
	}
	op.runs++
	return op.value(out), nil
}

// output returns the op's output storage: the reused buffer, or a one-element slice for a scalar.
func (op *fusedOp) output() []float64 {
	if len(op.shape) == 0 {
		return make([]float64, 1)
	}
	if op.buf == nil {
		op.buf = tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(op.shape.Clone()...))
	}
	return op.buf.Float64s()
}

func (op *fusedOp) value(out []float64) G.Value {
	if len(op.shape) == 0 {
		return G.NewF64(out[0])
	}
	return op.buf
}

func (op *fusedOp) DiffWRT(n int) []bool { return op.k.diff() }

func (op *fusedOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	diff := op.k.diff()
	res := make(G.Nodes, len(inputs))
	var shared *jointCache
	if _, ok := op.k.(jointBackward); ok {
		shared = &jointCache{}
	}
	for i := range inputs {
		if !diff[i] {
			continue
		}
		children := make(G.Nodes, 0, len(inputs)+2)
		children = append(children, inputs...)
		children = append(children, output, grad)
		dims := make([]int, 0, len(children))
		dims = append(dims, op.inDims...)
		dims = append(dims, len(op.shape), len(op.shape))
		gop := &gradOp{fusedOp: fusedOp{k: op.k, inDims: dims, shape: normShape(inputs[i].Shape())}, wrt: i, fwd: op, joint: shared}
		n, err := G.ApplyOp(gop, children...)
		if err != nil {
			return nil, fmt.Errorf("ops: %s: building gradient %d: %w", op.k.name(), i, err)
		}
		res[i] = n
	}
	return res, nil
}

// DoDiff is the automatic-differentiation path (gorgonia's LispMachine): it adds the gradient of every
// differentiable input, computed by the same kernel backward as SymDiff, into the input's gradient value.
// gpzoo runs graphs with its own executor (graph), which calls Do; DoDiff exists so the op is complete and is tested against SymDiff.
func (op *fusedOp) DoDiff(_ G.ExecutionContext, inputs G.Nodes, output *G.Node) error {
	vs := make([]G.Value, len(inputs))
	for i, n := range inputs {
		vs[i] = n.Value()
	}
	in, err := args(op.k.name, op.k.arity(), vs)
	if err != nil {
		return err
	}
	gv, err := output.Grad()
	if err != nil {
		return fmt.Errorf("ops: %s: DoDiff: output gradient: %w", op.k.name(), err)
	}
	outs, err := args(op.k.name, 2, []G.Value{output.Value(), gv})
	if err != nil {
		return err
	}
	for i, d := range op.k.diff() {
		if !d {
			continue
		}
		dv, err := inputs[i].Grad()
		if err != nil {
			return fmt.Errorf("ops: %s: DoDiff: gradient of input %d: %w", op.k.name(), i, err)
		}
		tmp := make([]float64, len(in[i].data))
		if err := op.k.backward(i, in, outs[0], outs[1], tmp); err != nil {
			return err
		}
		switch t := dv.(type) {
		case *G.F64:
			*t += G.F64(tmp[0])
		case *tensor.Dense:
			acc := t.Float64s()
			for j, v := range tmp {
				acc[j] += v
			}
		default:
			return fmt.Errorf("ops: %s: DoDiff: unexpected gradient type %T", op.k.name(), dv)
		}
	}
	return nil
}

// gradOp computes the gradient of a fusedOp's input wrt. Its inputs are (forward inputs..., output, grad).
type gradOp struct {
	fusedOp
	wrt   int
	fwd   *fusedOp    // the forward op, whose kernel state (workspace, joint cache) this op shares: SharedState
	joint *jointCache // shared by the gradient ops of one forward op whose kernel is a jointBackward, else nil
}

// jointCache holds every input gradient of one forward op, computed once per forward run.
type jointCache struct {
	runs  uint64 // the forward run the gradients belong to (0: none yet)
	grads [][]float64
}

func (op *gradOp) Arity() int { return op.k.arity() + 2 }
func (op *gradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "gpzoo.grad%d.", op.wrt)
	op.fusedOp.WriteHash(h)
}
func (op *gradOp) Hashcode() uint32 { return hashOf(op) }
func (op *gradOp) String() string   { return fmt.Sprintf("∂%s/∂in%d", op.fusedOp.String(), op.wrt) }

func (op *gradOp) Do(vs ...G.Value) (G.Value, error) {
	n := op.k.arity()
	all, err := args(op.String, n+2, vs)
	if err != nil {
		return nil, err
	}
	if op.joint != nil {
		if err := op.joint.fill(op.fwd, all[:n], all[n], all[n+1]); err != nil {
			return nil, err
		}
		// The op's output is its slot of the cache, not a copy of it: the cache is this op's alone and is
		// rewritten only by the next forward run's fill, as op.buf would be by the next run of the op.
		grad := op.joint.grads[op.wrt]
		switch {
		case len(op.shape) == 0:
			return G.NewF64(grad[0]), nil
		case len(grad) == 0:
			return op.value(op.output()), nil
		}
		if op.buf == nil || &op.buf.Float64s()[0] != &grad[0] {
			op.buf = tensor.New(tensor.WithShape(op.shape.Clone()...), tensor.WithBacking(grad))
		}
		return op.buf, nil
	}
	dst := op.output()
	if err := op.k.backward(op.wrt, all[:n], all[n], all[n+1], dst); err != nil {
		return nil, err
	}
	return op.value(dst), nil
}

// fill computes all gradients of the forward op fwd unless they are current for its latest run.
func (c *jointCache) fill(fwd *fusedOp, in []arg, out, g arg) error {
	if c.runs == fwd.runs && c.grads != nil {
		return nil
	}
	if c.grads == nil {
		c.grads = make([][]float64, len(in))
	}
	for i, d := range fwd.k.diff() {
		if d && len(c.grads[i]) != len(in[i].data) {
			c.grads[i] = make([]float64, len(in[i].data))
		}
	}
	if err := fwd.k.(jointBackward).backwardAll(in, out, g, c.grads); err != nil {
		c.runs = 0
		return err
	}
	c.runs = fwd.runs
	return nil
}

func hashOf(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// args converts gorgonia values to kernel operands without copying dense data. name (the op's name) is called only
// to build an error: formatting it on every execution cost several per cent of a training step.
func args(name func() string, n int, vs []G.Value) ([]arg, error) {
	if len(vs) != n {
		return nil, &ShapeError{Op: name(), Want: fmt.Sprintf("%d operands", n), Got: fmt.Sprintf("%d", len(vs))}
	}
	in := make([]arg, n)
	for i, v := range vs {
		switch t := v.(type) {
		case *G.F64:
			in[i] = arg{data: []float64{float64(*t)}, shape: tensor.ScalarShape()}
		case *tensor.Dense:
			if t.Dtype() != tensor.Float64 {
				return nil, &ShapeError{Op: name(), Want: "float64", Got: t.Dtype().String()}
			}
			if t.RequiresIterator() || t.IsMaterializable() {
				t = t.Materialize().(*tensor.Dense)
			}
			in[i] = arg{data: t.Float64s(), shape: normShape(t.Shape())}
		default:
			return nil, &ShapeError{Op: name(), Want: "a float64 tensor or scalar", Got: fmt.Sprintf("%T", v)}
		}
	}
	return in, nil
}
