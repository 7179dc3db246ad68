package ops

import (
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Sums: one kernel reduceK, over all entries (optionally divided by their number), over the rows of a matrix,
// or over its columns, of the entries or of their squares (SumRowsSq(a) is SumRows(Square(a)) in one pass forward
// and one backward, without the [n,m] intermediate: a sparse GP's ‖L_u⁻¹k_ux‖² per point).

type reduceAxis int

const (
	reduceAll  reduceAxis = iota // every entry → scalar
	reduceRows                   // [n,m] → [m]: Σᵢ x_ij
	reduceCols                   // [n,m] → [n]: Σⱼ x_ij
)

type reduceK struct {
	axis   reduceAxis
	mean   bool // divide by the number of entries (reduceAll only)
	square bool // sum the squares of the entries
}

func (k reduceK) name() string {
	n := "Sum"
	switch {
	case k.mean:
		n = "Mean"
	case k.axis == reduceRows:
		n = "SumRows"
	case k.axis == reduceCols:
		n = "SumCols"
	}
	if k.square {
		n += "Sq"
	}
	return n
}
func (k reduceK) params(w io.Writer) {
	fmt.Fprintf(w, "axis=%d,mean=%t,square=%t", k.axis, k.mean, k.square)
}

// reduceMinCols is the least number of columns (reduceRows) or rows (reduceCols, backward passes) each goroutine
// of a reduction takes: below 2× this a reduction runs on the calling goroutine.
const reduceMinCols = 128

// term returns the summand of entry v: v or v².
func (k reduceK) term(v float64) float64 {
	if k.square {
		return v * v
	}
	return v
}
func (reduceK) arity() int   { return 1 }
func (reduceK) diff() []bool { return []bool{true} }

func (k reduceK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	s := in[0]
	switch k.axis {
	case reduceRows, reduceCols:
		if len(s) != 2 {
			return nil, &ShapeError{Op: k.name(), Want: "a matrix [n,m]", Got: fmt.Sprint(s)}
		}
		if k.axis == reduceRows {
			return tensor.Shape{s[1]}, nil
		}
		return tensor.Shape{s[0]}, nil
	}
	if k.mean && len(s) > 0 && s.TotalSize() == 0 {
		return nil, &ShapeError{Op: k.name(), Want: "at least one entry", Got: fmt.Sprint(s)}
	}
	return tensor.ScalarShape(), nil
}

func (k reduceK) forward(in []arg, out []float64) error {
	x := in[0]
	switch k.axis {
	case reduceRows: // out[j] = Σ_i x_ij, rows in order (row by row: no index arithmetic per entry); columns split
		// over goroutines, each column summed in the same order whatever their number
		m := x.cols()
		clear(out)
		n := x.rows()
		if m == 0 || len(x.data) < n*m {
			return nil
		}
		return ForRows(m, reduceMinCols, func(lo, hi int) error {
			o := out[lo:hi]
			for r := 0; r < n; r++ {
				row := x.data[r*m+lo : r*m+hi]
				if k.square {
					for j, v := range row {
						o[j] += v * v
					}
					continue
				}
				for j, v := range row {
					o[j] += v
				}
			}
			return nil
		})
	case reduceCols: // out[i] = Σ_j x_ij, in column order
		m := x.cols()
		for i := range out {
			s := 0.0
			for _, v := range x.data[i*m : i*m+m] {
				s += k.term(v)
			}
			out[i] = s
		}
	default:
		s := 0.0
		for _, v := range x.data {
			s += k.term(v)
		}
		if k.mean {
			s /= float64(len(x.data))
		}
		out[0] = s
	}
	return nil
}

func (k reduceK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	if k.square { // d/dx Σ x² = 2x: the plain sum's gradient times 2x
		if err := k.plain().backward(0, in, arg{}, g, dst); err != nil {
			return err
		}
		x := in[0].data
		return ForRows(len(dst), reduceMinCols*reduceMinCols, func(lo, hi int) error {
			for i, v := range x[lo:hi] {
				dst[lo+i] *= 2 * v
			}
			return nil
		})
	}
	switch k.axis {
	case reduceRows: // every row of dst is g
		m := in[0].cols()
		for r := 0; m > 0 && r+m <= len(dst); r += m {
			copy(dst[r:r+m], g.data[:m])
		}
	case reduceCols: // row i of dst is g_i
		m := in[0].cols()
		for i, v := range g.data[:len(dst)/max(m, 1)] {
			row := dst[i*m : i*m+m]
			for j := range row {
				row[j] = v
			}
		}
	default:
		v := g.data[0]
		if k.mean {
			v /= float64(len(dst))
		}
		for i := range dst {
			dst[i] = v
		}
	}
	return nil
}

// plain returns the reduction of the entries themselves.
func (k reduceK) plain() reduceK { k.square = false; return k }

// Sum returns the sum of all entries. Shape: any → scalar.
func Sum(x *G.Node) (*G.Node, error) { return apply(reduceK{axis: reduceAll}, x) }

// Mean returns the mean of all entries. Shape: any (at least one entry) → scalar.
func Mean(x *G.Node) (*G.Node, error) { return apply(reduceK{axis: reduceAll, mean: true}, x) }

// SumRows sums over the rows, i.e. returns the column sums Σᵢ x_ij. Shape: [n,m] → [m].
func SumRows(x *G.Node) (*G.Node, error) { return apply(reduceK{axis: reduceRows}, x) }

// SumCols sums over the columns, i.e. returns the row sums Σⱼ x_ij. Shape: [n,m] → [n].
func SumCols(x *G.Node) (*G.Node, error) { return apply(reduceK{axis: reduceCols}, x) }

// SumRowsSq returns the column sums of squares Σᵢ x_ij², i.e. SumRows(Square(x)) in one op. Shape: [n,m] → [m].
func SumRowsSq(x *G.Node) (*G.Node, error) { return apply(reduceK{axis: reduceRows, square: true}, x) }
