package ops

import (
	"fmt"
	"io"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MatMul returns op(a)·op(b), where op transposes its argument when the flag is set.
// Shapes: op(a) [n,k], op(b) [k,m] -> [n,m]. The transposes are fused into the BLAS call (no copy).
func MatMul(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	return apply(matMul{transA: transA, transB: transB}, a, b)
}

type matMul struct{ transA, transB bool }

func (k matMul) name() string       { return "MatMul" }
func (k matMul) params(w io.Writer) { fmt.Fprintf(w, "tA=%t,tB=%t", k.transA, k.transB) }
func (k matMul) arity() int         { return 2 }
func (k matMul) diff() []bool       { return []bool{true, true} }

// dims returns the shape of op(x) for a 2-D x.
func opDims(s tensor.Shape, trans bool) (int, int) {
	if trans {
		return s[1], s[0]
	}
	return s[0], s[1]
}

func (k matMul) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 2 || len(in[1]) != 2 {
		return nil, &ShapeError{Op: "MatMul", Want: "two matrices", Got: fmt.Sprintf("%v and %v", in[0], in[1])}
	}
	n, ka := opDims(in[0], k.transA)
	kb, m := opDims(in[1], k.transB)
	if ka != kb {
		return nil, &ShapeError{Op: "MatMul", Want: "inner dimensions equal", Got: fmt.Sprintf("%v(tA=%t) and %v(tB=%t)", in[0], k.transA, in[1], k.transB)}
	}
	return tensor.Shape{n, m}, nil
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func general(x arg) blas64.General {
	return blas64.General{Rows: x.rows(), Cols: x.cols(), Stride: x.cols(), Data: x.data}
}

func (k matMul) forward(in []arg, out []float64) error {
	n, _ := opDims(in[0].shape, k.transA)
	_, m := opDims(in[1].shape, k.transB)
	c := blas64.General{Rows: n, Cols: m, Stride: m, Data: out}
	blas64.Gemm(trans(k.transA), trans(k.transB), 1, general(in[0]), general(in[1]), 0, c)
	return nil
}

// backward: C = op(A)op(B). dop(A) = G op(B)ᵀ, dop(B) = op(A)ᵀ G; transpose back when the flag is set.
func (k matMul) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	a, b, gg := general(in[0]), general(in[1]), general(g)
	switch wrt {
	case 0:
		d := blas64.General{Rows: in[0].rows(), Cols: in[0].cols(), Stride: in[0].cols(), Data: dst}
		if !k.transA { // dA = G op(B)ᵀ
			blas64.Gemm(blas.NoTrans, trans(!k.transB), 1, gg, b, 0, d)
		} else { // dA = op(B) Gᵀ
			blas64.Gemm(trans(k.transB), blas.Trans, 1, b, gg, 0, d)
		}
	default:
		d := blas64.General{Rows: in[1].rows(), Cols: in[1].cols(), Stride: in[1].cols(), Data: dst}
		if !k.transB { // dB = op(A)ᵀ G
			blas64.Gemm(trans(!k.transA), blas.NoTrans, 1, a, gg, 0, d)
		} else { // dB = Gᵀ op(A)
			blas64.Gemm(blas.Trans, trans(k.transA), 1, gg, a, 0, d)
		}
	}
	return nil
}
