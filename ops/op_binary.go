package ops

import (
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Elementwise arithmetic of two operands: one kernel binaryK for +, −, ·, /. The operands have equal shapes, or
// one of them is a scalar (0-d; a [1] vector is not a scalar) that is broadcast to the other's shape. The
// gradient to a broadcast scalar is the sum of its broadcast gradient.

type binaryFn int

const (
	fnAdd binaryFn = iota
	fnSub
	fnMul
	fnDiv
)

var binaryNames = [...]string{fnAdd: "Add", fnSub: "Sub", fnMul: "Mul", fnDiv: "Div"}

type binaryK struct{ fn binaryFn }

func (k binaryK) name() string   { return binaryNames[k.fn] }
func (binaryK) params(io.Writer) {}
func (binaryK) arity() int       { return 2 }
func (binaryK) diff() []bool     { return []bool{true, true} }

func (k binaryK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	a, b := in[0], in[1]
	switch {
	case exactShapeEq(a, b):
		return a.Clone(), nil
	case len(a) == 0:
		return b.Clone(), nil
	case len(b) == 0:
		return a.Clone(), nil
	}
	return nil, &ShapeError{Op: k.name(), Want: "equal shapes or a scalar operand", Got: fmt.Sprintf("%v and %v", a, b)}
}

// exactShapeEq reports whether a and b have the same dims and sizes (tensor.Shape.Eq also equates [n] and [n,1]).
func exactShapeEq(a, b tensor.Shape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// bcastAt returns x's entry i, or its single value when x is a (broadcast) scalar.
func bcastAt(x arg, i int) float64 {
	if len(x.shape) == 0 {
		return x.data[0]
	}
	return x.data[i]
}

// elemMinEntries is the least number of entries each core takes of an elementwise loop split with ForRows.
const elemMinEntries = 1 << 14

// AddTo writes a + b into dst (slices of one length), split over the cores when long: the loop of Add, and of
// the sums that accumulate a node's gradient contributions.
func AddTo(dst, a, b []float64) {
	_ = ForRows(len(dst), elemMinEntries, func(lo, hi int) error {
		d, x, y := dst[lo:hi], a[lo:hi], b[lo:hi]
		for i := range d {
			d[i] = x[i] + y[i]
		}
		return nil
	})
}

// sameShapeForward is forward for operands of equal shapes: one tight loop per function, split over the cores
// when long (the same sums and products as the general loop, entry by entry).
func (k binaryK) sameShapeForward(a, b, out []float64) {
	if k.fn == fnAdd {
		AddTo(out, a, b)
		return
	}
	_ = ForRows(len(out), elemMinEntries, func(lo, hi int) error {
		d, x, y := out[lo:hi], a[lo:hi], b[lo:hi]
		switch k.fn {
		case fnSub:
			for i := range d {
				d[i] = x[i] - y[i]
			}
		case fnMul:
			for i := range d {
				d[i] = x[i] * y[i]
			}
		default:
			for i := range d {
				d[i] = x[i] / y[i]
			}
		}
		return nil
	})
}

func (k binaryK) forward(in []arg, out []float64) error {
	a, b := in[0], in[1]
	if len(a.shape) != 0 && len(b.shape) != 0 {
		k.sameShapeForward(a.data, b.data, out)
		return nil
	}
	for i := range out {
		x, y := bcastAt(a, i), bcastAt(b, i)
		switch k.fn {
		case fnAdd:
			out[i] = x + y
		case fnSub:
			out[i] = x - y
		case fnMul:
			out[i] = x * y
		case fnDiv:
			out[i] = x / y
		}
	}
	return nil
}

// backward: ∂(a+b) = (1, 1), ∂(a−b) = (1, −1), ∂(ab) = (b, a), ∂(a/b) = (1/b, −(a/b)/b). A scalar operand
// broadcast against a tensor output receives the sum over the output.
func (k binaryK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	a, b := in[0], in[1]
	sum := len(in[wrt].shape) == 0 && len(out.shape) != 0
	if !sum && len(a.shape) != 0 && len(b.shape) != 0 {
		switch {
		case k.fn == fnAdd || k.fn == fnSub && wrt == 0:
			copy(dst, g.data)
			return nil
		case k.fn == fnMul:
			other := b.data
			if wrt == 1 {
				other = a.data
			}
			k.sameShapeForward(g.data, other, dst) // g ⊙ other, Mul's own loop
			return nil
		}
	}
	if sum {
		dst[0] = 0
	}
	for i, gi := range g.data {
		var d float64
		switch {
		case k.fn == fnAdd || k.fn == fnSub && wrt == 0:
			d = gi
		case k.fn == fnSub:
			d = -gi
		case k.fn == fnMul && wrt == 0:
			d = gi * bcastAt(b, i)
		case k.fn == fnMul:
			d = gi * bcastAt(a, i)
		case wrt == 0: // Div
			d = gi / bcastAt(b, i)
		default:
			d = -gi * out.data[i] / bcastAt(b, i)
		}
		if sum {
			dst[0] += d
		} else {
			dst[i] = d
		}
	}
	return nil
}

// Add returns a + b elementwise. Shapes: equal, or either operand a scalar (broadcast) → the larger shape.
func Add(a, b *G.Node) (*G.Node, error) { return apply(binaryK{fnAdd}, a, b) }

// Sub returns a − b elementwise. Shapes: equal, or either operand a scalar (broadcast) → the larger shape.
func Sub(a, b *G.Node) (*G.Node, error) { return apply(binaryK{fnSub}, a, b) }

// Mul returns a ⊙ b (elementwise product). Shapes: equal, or either operand a scalar (broadcast) → the larger shape.
func Mul(a, b *G.Node) (*G.Node, error) { return apply(binaryK{fnMul}, a, b) }

// Div returns a ⊘ b (elementwise quotient). Shapes: equal, or either operand a scalar (broadcast) → the larger
// shape.
func Div(a, b *G.Node) (*G.Node, error) { return apply(binaryK{fnDiv}, a, b) }
