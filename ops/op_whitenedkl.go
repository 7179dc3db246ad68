package ops

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// WhitenedKL returns Σ_p KL[N(m_p, L_pL_pᵀ) ‖ N(0, I)] for a whitened q(u) with P outputs (Hensman et al. 2015;
// MATH.md §3), in one op:
//
//	½[‖m‖²_F + Σ_p ‖L_p‖²_F − M·P] − Σ_p Σ_i log L_p,ii
//
// m is [M,P] and each L_p [M,M] a Cholesky factor (lower triangular with a positive diagonal: only the lower
// triangle is read; a non-positive diagonal entry gives NaN or +Inf, no error, as LogDetChol). The composition it
// replaces (per output a Dot, a LogDetChol, a Neg and two Adds, and for every Dot two gradient ops summed by the
// engine) cost a deep GP's hidden layer of width 8 some fifty small nodes per step.
//
// Gradients: ∂/∂m = g·m, ∂/∂L_p = g·(L_p − diag(1/L_p,ii)) on the lower triangle, 0 above it.
func WhitenedKL(m *G.Node, l ...*G.Node) (*G.Node, error) {
	if len(l) == 0 {
		return nil, &ShapeError{Op: "WhitenedKL", Want: "at least one factor", Got: "none"}
	}
	return apply(whitenedKL{p: len(l)}, append([]*G.Node{m}, l...)...)
}

type whitenedKL struct{ p int }

func (whitenedKL) name() string         { return "WhitenedKL" }
func (k whitenedKL) params(w io.Writer) { fmt.Fprintf(w, "p=%d", k.p) }
func (k whitenedKL) arity() int         { return 1 + k.p }
func (k whitenedKL) diff() []bool {
	d := make([]bool, 1+k.p)
	for i := range d {
		d[i] = true
	}
	return d
}

func (k whitenedKL) outShape(in []tensor.Shape) (tensor.Shape, error) {
	m := in[0]
	if len(m) != 2 || m[1] != k.p {
		return nil, &ShapeError{Op: "WhitenedKL", Want: fmt.Sprintf("m of shape [M,%d]", k.p), Got: fmt.Sprint(m)}
	}
	if err := checkPositiveDims("WhitenedKL", m); err != nil {
		return nil, err
	}
	for p, l := range in[1:] {
		if len(l) != 2 || l[0] != m[0] || l[1] != m[0] {
			return nil, &ShapeError{Op: "WhitenedKL", Want: fmt.Sprintf("factors [%d,%d]", m[0], m[0]), Got: fmt.Sprintf("%v (factor %d)", l, p)}
		}
	}
	return tensor.ScalarShape(), nil
}

// lowerSumSq returns ‖tril(L)‖²_F, row by row.
func lowerSumSq(l []float64, n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		for _, v := range l[i*n : i*n+i+1] {
			s += v * v
		}
	}
	return s
}

func (k whitenedKL) forward(in []arg, out []float64) error {
	n := in[0].rows()
	quad, logs := floats.Dot(in[0].data, in[0].data), 0.0
	for _, l := range in[1:] {
		quad += lowerSumSq(l.data, n)
		for i := 0; i < n; i++ {
			logs += math.Log(l.data[i*n+i])
		}
	}
	out[0] = 0.5*(quad-float64(n*k.p)) - logs
	return nil
}

func (k whitenedKL) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	gs := g.scalar()
	if wrt == 0 {
		floats.ScaleTo(dst, gs, in[0].data)
		return nil
	}
	n, l := in[0].rows(), in[wrt].data
	for i := 0; i < n; i++ {
		row, src := dst[i*n:i*n+n], l[i*n:i*n+n]
		for j := 0; j < i; j++ {
			row[j] = gs * src[j]
		}
		row[i] = gs * (src[i] - 1/src[i])
		clear(row[i+1:])
	}
	return nil
}
