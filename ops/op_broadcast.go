package ops

import (
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Broadcasting a vector along the rows or columns of a matrix (one kernel rowColK), and the shape ops: Repeat,
// Reshape, Transpose, Col, StackCols, SliceRows. Every output is a fresh copy, never a view of an input.

// rowColK adds or multiplies a vector v into every row (byRow: v has length m, v_j meets column j) or every
// column (v has length n, v_i meets row i) of a matrix x [n,m].
type rowColK struct {
	mul   bool
	byRow bool
}

func (k rowColK) name() string {
	op := "Add"
	if k.mul {
		op = "Mul"
	}
	if k.byRow {
		return op + "Row"
	}
	return op + "Col"
}
func (k rowColK) params(w io.Writer) { fmt.Fprintf(w, "mul=%t,byRow=%t", k.mul, k.byRow) }
func (rowColK) arity() int           { return 2 }
func (rowColK) diff() []bool         { return []bool{true, true} }

func (k rowColK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	x, v := in[0], in[1]
	if len(x) != 2 || len(v) != 1 {
		return nil, &ShapeError{Op: k.name(), Want: "a matrix [n,m] and a vector", Got: fmt.Sprintf("%v and %v", x, v)}
	}
	want := x[0]
	if k.byRow {
		want = x[1]
	}
	if v[0] != want {
		return nil, &ShapeError{Op: k.name(), Want: fmt.Sprintf("a vector of length %d for %v", want, x), Got: fmt.Sprint(v)}
	}
	return x.Clone(), nil
}

// vidx returns the index into v of the flat matrix index i of a matrix with m columns.
func (k rowColK) vidx(i, m int) int {
	if k.byRow {
		return i % m
	}
	return i / m
}

func (k rowColK) forward(in []arg, out []float64) error {
	x, v := in[0], in[1]
	m := x.cols()
	for i, xi := range x.data {
		if k.mul {
			out[i] = xi * v.data[k.vidx(i, m)]
		} else {
			out[i] = xi + v.data[k.vidx(i, m)]
		}
	}
	return nil
}

// backward: ∂x = g (add) or g ⊙ v broadcast (mul); ∂v_j = Σ over the broadcast direction of g (add) or g ⊙ x (mul).
func (k rowColK) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	x, v := in[0], in[1]
	m := x.cols()
	if wrt == 0 {
		for i, gi := range g.data {
			if k.mul {
				dst[i] = gi * v.data[k.vidx(i, m)]
			} else {
				dst[i] = gi
			}
		}
		return nil
	}
	clear(dst)
	for i, gi := range g.data {
		if k.mul {
			gi *= x.data[i]
		}
		dst[k.vidx(i, m)] += gi
	}
	return nil
}

// AddRow adds the vector r to every row of x: out_ij = x_ij + r_j. Shapes: x [n,m], r [m] → [n,m].
func AddRow(x, r *G.Node) (*G.Node, error) { return apply(rowColK{byRow: true}, x, r) }

// MulRow scales column j of x by r_j: out_ij = x_ij·r_j (e.g. inputs divided by ARD length-scales, with r = 1/ℓ).
// Shapes: x [n,m], r [m] → [n,m].
func MulRow(x, r *G.Node) (*G.Node, error) { return apply(rowColK{mul: true, byRow: true}, x, r) }

// AddCol adds the vector c to every column of x: out_ij = x_ij + c_i. Shapes: x [n,m], c [n] → [n,m].
func AddCol(x, c *G.Node) (*G.Node, error) { return apply(rowColK{}, x, c) }

// MulCol scales row i of x by c_i: out_ij = x_ij·c_i. Shapes: x [n,m], c [n] → [n,m].
func MulCol(x, c *G.Node) (*G.Node, error) { return apply(rowColK{mul: true}, x, c) }

// checkPositiveDims returns a *ShapeError unless every size in shape is positive.
func checkPositiveDims(op string, shape []int) error {
	for _, d := range shape {
		if d <= 0 {
			return &ShapeError{Op: op, Want: "positive sizes", Got: fmt.Sprint(shape)}
		}
	}
	return nil
}

// writeShapeParam writes a shape into a kernel's params.
func writeShapeParam(w io.Writer, s tensor.Shape) { fmt.Fprintf(w, "shape=%v", []int(s)) }

// repeatK broadcasts a scalar to a fixed shape.
type repeatK struct{ shape tensor.Shape }

func (repeatK) name() string         { return "Repeat" }
func (k repeatK) params(w io.Writer) { writeShapeParam(w, k.shape) }
func (repeatK) arity() int           { return 1 }
func (repeatK) diff() []bool         { return []bool{true} }
func (k repeatK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 0 {
		return nil, &ShapeError{Op: "Repeat", Want: "a scalar", Got: fmt.Sprint(in[0])}
	}
	return k.shape.Clone(), nil
}
func (repeatK) forward(in []arg, out []float64) error {
	for i := range out {
		out[i] = in[0].data[0]
	}
	return nil
}
func (repeatK) backward(_ int, _ []arg, _ arg, g arg, dst []float64) error {
	s := 0.0
	for _, v := range g.data {
		s += v
	}
	dst[0] = s
	return nil
}

// Repeat returns a tensor of the given shape (positive sizes; none for a scalar) with every entry v; the gradient
// to v is the sum of the output gradient. Shapes: v scalar → shape.
func Repeat(v *G.Node, shape ...int) (*G.Node, error) {
	if err := checkPositiveDims("Repeat", shape); err != nil {
		return nil, err
	}
	return apply(repeatK{shape: tensor.Shape(append([]int(nil), shape...))}, v)
}

// reshapeK copies x into a new shape of the same size.
type reshapeK struct{ shape tensor.Shape }

func (reshapeK) name() string         { return "Reshape" }
func (k reshapeK) params(w io.Writer) { writeShapeParam(w, k.shape) }
func (reshapeK) arity() int           { return 1 }
func (reshapeK) diff() []bool         { return []bool{true} }
func (k reshapeK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if sizeOfShape(in[0]) != sizeOfShape(k.shape) {
		return nil, &ShapeError{Op: "Reshape", Want: fmt.Sprintf("%d entries (for %v)", sizeOfShape(k.shape), k.shape), Got: fmt.Sprint(in[0])}
	}
	return k.shape.Clone(), nil
}
func (reshapeK) forward(in []arg, out []float64) error { copy(out, in[0].data); return nil }
func (reshapeK) backward(_ int, _ []arg, _ arg, g arg, dst []float64) error {
	copy(dst, g.data)
	return nil
}

// sizeOfShape returns the number of entries of s (1 for a scalar).
func sizeOfShape(s tensor.Shape) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Reshape returns a copy of x with the given shape (row-major order kept; no sizes for a scalar). Shapes: any →
// shape, with the same number of entries.
func Reshape(x *G.Node, shape ...int) (*G.Node, error) {
	if err := checkPositiveDims("Reshape", shape); err != nil {
		return nil, err
	}
	return apply(reshapeK{shape: tensor.Shape(append([]int(nil), shape...))}, x)
}

// transposeK copies a matrix transposed.
type transposeK struct{}

func (transposeK) name() string     { return "Transpose" }
func (transposeK) params(io.Writer) {}
func (transposeK) arity() int       { return 1 }
func (transposeK) diff() []bool     { return []bool{true} }
func (transposeK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 2 {
		return nil, &ShapeError{Op: "Transpose", Want: "a matrix [n,m]", Got: fmt.Sprint(in[0])}
	}
	return tensor.Shape{in[0][1], in[0][0]}, nil
}

// transposeCopy writes the transpose of the row-major r×c matrix src into dst (c×r).
func transposeCopy(dst, src []float64, r, c int) {
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst[j*r+i] = src[i*c+j]
		}
	}
}
func (transposeK) forward(in []arg, out []float64) error {
	transposeCopy(out, in[0].data, in[0].rows(), in[0].cols())
	return nil
}
func (transposeK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	transposeCopy(dst, g.data, in[0].cols(), in[0].rows())
	return nil
}

// Transpose returns a transposed copy of x (not a view). Shapes: [n,m] → [m,n].
func Transpose(x *G.Node) (*G.Node, error) { return apply(transposeK{}, x) }

// colK extracts column j of a matrix.
type colK struct{ j int }

func (colK) name() string         { return "Col" }
func (k colK) params(w io.Writer) { fmt.Fprintf(w, "j=%d", k.j) }
func (colK) arity() int           { return 1 }
func (colK) diff() []bool         { return []bool{true} }
func (k colK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	s := in[0]
	if len(s) != 2 {
		return nil, &ShapeError{Op: "Col", Want: "a matrix [n,m]", Got: fmt.Sprint(s)}
	}
	if k.j < 0 || k.j >= s[1] {
		return nil, &ShapeError{Op: "Col", Want: fmt.Sprintf("column %d inside", k.j), Got: fmt.Sprint(s)}
	}
	return tensor.Shape{s[0]}, nil
}
func (k colK) forward(in []arg, out []float64) error {
	m := in[0].cols()
	for i := range out {
		out[i] = in[0].data[i*m+k.j]
	}
	return nil
}
func (k colK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	clear(dst)
	m := in[0].cols()
	for i, gi := range g.data {
		dst[i*m+k.j] = gi
	}
	return nil
}

// Col returns column j (0-based) of x as a vector. Shapes: [n,m], 0 ≤ j < m → [n].
func Col(x *G.Node, j int) (*G.Node, error) { return apply(colK{j: j}, x) }

// stackColsK places k vectors of length n side by side as the columns of an [n,k] matrix.
type stackColsK struct{ k int }

func (stackColsK) name() string         { return "StackCols" }
func (k stackColsK) params(w io.Writer) { fmt.Fprintf(w, "k=%d", k.k) }
func (k stackColsK) arity() int         { return k.k }
func (k stackColsK) diff() []bool {
	d := make([]bool, k.k)
	for i := range d {
		d[i] = true
	}
	return d
}
func (k stackColsK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	for i, s := range in {
		if len(s) != 1 || s[0] != in[0][0] {
			return nil, &ShapeError{Op: "StackCols", Want: "vectors of one length", Got: fmt.Sprintf("%v (operand %d) and %v (operand 0)", s, i, in[0])}
		}
	}
	return tensor.Shape{in[0][0], k.k}, nil
}
func (k stackColsK) forward(in []arg, out []float64) error {
	for c, v := range in {
		for i, x := range v.data {
			out[i*k.k+c] = x
		}
	}
	return nil
}
func (k stackColsK) backward(wrt int, _ []arg, _ arg, g arg, dst []float64) error {
	for i := range dst {
		dst[i] = g.data[i*k.k+wrt]
	}
	return nil
}

// StackCols returns the matrix whose column c is xs[c] (e.g. one column per output of a multi-output GP).
// Shapes: k ≥ 1 vectors [n] → [n,k].
func StackCols(xs ...*G.Node) (*G.Node, error) {
	if len(xs) == 0 {
		return nil, &ShapeError{Op: "StackCols", Want: "at least one vector", Got: "none"}
	}
	return apply(stackColsK{k: len(xs)}, xs...)
}

// sliceRowsK copies the rows [from, to) of a matrix or the entries [from, to) of a vector.
type sliceRowsK struct{ from, to int }

func (sliceRowsK) name() string         { return "SliceRows" }
func (k sliceRowsK) params(w io.Writer) { fmt.Fprintf(w, "from=%d,to=%d", k.from, k.to) }
func (sliceRowsK) arity() int           { return 1 }
func (sliceRowsK) diff() []bool         { return []bool{true} }
func (k sliceRowsK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	s := in[0]
	if len(s) != 1 && len(s) != 2 {
		return nil, &ShapeError{Op: "SliceRows", Want: "a vector or a matrix", Got: fmt.Sprint(s)}
	}
	if k.from < 0 || k.to <= k.from || k.to > s[0] {
		return nil, &ShapeError{Op: "SliceRows", Want: fmt.Sprintf("0 ≤ from < to ≤ rows for rows [%d,%d)", k.from, k.to), Got: fmt.Sprint(s)}
	}
	out := s.Clone()
	out[0] = k.to - k.from
	return out, nil
}
func (k sliceRowsK) forward(in []arg, out []float64) error {
	m := in[0].cols()
	copy(out, in[0].data[k.from*m:k.to*m])
	return nil
}
func (k sliceRowsK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	m := in[0].cols()
	clear(dst)
	copy(dst[k.from*m:k.to*m], g.data)
	return nil
}

// SliceRows returns a copy of rows from..to−1 (0-based, half-open) of x. Shapes: [n,m] → [to−from, m], or
// [n] → [to−from]; 0 ≤ from < to ≤ n.
func SliceRows(x *G.Node, from, to int) (*G.Node, error) {
	return apply(sliceRowsK{from: from, to: to}, x)
}
