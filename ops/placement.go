package ops

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// OutputSize reports whether op writes its output into a buffer of its own that an executor may place with
// PlaceOutput, and that buffer's length: every gpzoo op with a non-scalar output, except the gradient ops of a
// joint backward (their outputs are slots of the cache their forward op's gradients share). An op's kernel
// overwrites the whole buffer at every run and keeps nothing in it between runs.
func OutputSize(op G.Op) (int, bool) {
	var f *fusedOp
	switch o := op.(type) {
	case *fusedOp:
		f = o
	case *gradOp:
		if o.joint != nil {
			return 0, false
		}
		f = &o.fusedOp
	default:
		return 0, false
	}
	if len(f.shape) == 0 {
		return 0, false
	}
	return f.shape.TotalSize(), true
}

// PlaceOutput makes op (one OutputSize accepts) write its output into data[:size] from its next run on: an
// executor's memory plan lets nodes whose values are never needed at the same time share one buffer.
func PlaceOutput(op G.Op, data []float64) {
	var f *fusedOp
	switch o := op.(type) {
	case *fusedOp:
		f = o
	case *gradOp:
		f = &o.fusedOp
	default:
		return
	}
	n := f.shape.TotalSize()
	f.buf = tensor.New(tensor.WithShape(f.shape.Clone()...), tensor.WithBacking(data[:n:n]))
}

// OwnOutput reports whether op is one of gpzoo's ops, whose output is never an operand or a view of one (a buffer
// of its own, or a slot of its joint backward's cache): a memory plan may reuse an operand's buffer once every
// such reader has run.
func OwnOutput(op G.Op) bool {
	switch op.(type) {
	case *fusedOp, *gradOp:
		return true
	}
	return false
}
