package gp

import (
	"math"

	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// MeanFunction is a GP's prior mean m(X) [N,Q] for X [N,D].
type MeanFunction interface {
	Mean(x *graph.Node) *graph.Node
	OutputDim() int
	Params() []*graph.Param
}

// DataMean is a MeanFunction that also evaluates on plain data, outside a graph: deep GPs push their training
// inputs and inducing inputs through the fixed mean functions of inner layers with it (dgp.Build). IdentityMean
// and ProjectionMean implement it.
type DataMean interface {
	MeanFunction
	// MeanOf returns m(x) [N,Q] for x [N,D] (a new matrix).
	MeanOf(x *mat.Dense) *mat.Dense
}

// MeanFunctionLayer is implemented by layers that say what their prior mean function is (nil: zero), so that
// diagnostics can tell what a layer's GP adds to it (dgp.Diagnose).
type MeanFunctionLayer interface {
	MeanFunction() MeanFunction
}

// ZeroMean is m(x) = 0 with Q outputs.
type ZeroMean struct{ Q int }

// NewZeroMean returns the zero mean with q ≥ 1 outputs.
func NewZeroMean(q int) (*ZeroMean, error) {
	if q <= 0 {
		return nil, configErr("ZeroMean: output dimension must be positive, got %d", q)
	}
	return &ZeroMean{Q: q}, nil
}

// Mean returns zeros [N,Q].
func (m *ZeroMean) Mean(x *graph.Node) *graph.Node { return x.Graph().Zeros("zeromean", rows(x), m.Q) }

// OutputDim returns Q.
func (m *ZeroMean) OutputDim() int { return m.Q }

// Params returns nil.
func (m *ZeroMean) Params() []*graph.Param { return nil }

// ConstantMean is m(x) = c with c [Q] trainable.
type ConstantMean struct{ C *graph.Param }

// NewConstantMean returns the constant mean with initial value c (one entry per output).
func NewConstantMean(name string, c []float64) (*ConstantMean, error) {
	if len(c) == 0 {
		return nil, configErr("ConstantMean: no values")
	}
	if name == "" {
		name = "mean"
	}
	p, err := graph.NewParam(name+".c", c, graph.Identity{}, len(c))
	if err != nil {
		return nil, err
	}
	return &ConstantMean{C: p}, nil
}

// Mean returns c broadcast to [N,Q].
func (m *ConstantMean) Mean(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.AddRow(g.Zeros("constmean.zeros", rows(x), m.OutputDim()), g.Param(m.C))
}

// OutputDim returns Q.
func (m *ConstantMean) OutputDim() int { return m.C.Size() }

// Params returns c.
func (m *ConstantMean) Params() []*graph.Param { return []*graph.Param{m.C} }

// LinearMean is m(x) = x·A + b with A [D,Q] and b [Q].
type LinearMean struct{ A, B *graph.Param }

// NewLinearMean returns a linear mean with initial A (row-major [d,q]) and b [q]; nil a or b means zeros.
func NewLinearMean(name string, d, q int, a, b []float64) (*LinearMean, error) {
	if d <= 0 || q <= 0 {
		return nil, configErr("LinearMean: dimensions must be positive, got %d×%d", d, q)
	}
	if name == "" {
		name = "mean"
	}
	if a == nil {
		a = make([]float64, d*q)
	}
	if b == nil {
		b = make([]float64, q)
	}
	pa, err := graph.NewParam(name+".A", a, graph.Identity{}, d, q)
	if err != nil {
		return nil, err
	}
	pb, err := graph.NewParam(name+".b", b, graph.Identity{}, q)
	if err != nil {
		return nil, err
	}
	return &LinearMean{A: pa, B: pb}, nil
}

// Mean returns x·A + b [N,Q].
func (m *LinearMean) Mean(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.AddRow(g.MatMul(x, g.Param(m.A), false, false), g.Param(m.B))
}

// OutputDim returns Q.
func (m *LinearMean) OutputDim() int { return m.B.Size() }

// Params returns A and b.
func (m *LinearMean) Params() []*graph.Param { return []*graph.Param{m.A, m.B} }

// IdentityMean is m(x) = x (Q = D): the mean of deep-GP inner layers whose widths agree.
type IdentityMean struct{ D int }

// Mean returns x.
func (m IdentityMean) Mean(x *graph.Node) *graph.Node { return x }

// OutputDim returns D.
func (m IdentityMean) OutputDim() int { return m.D }

// Params returns nil.
func (m IdentityMean) Params() []*graph.Param { return nil }

// MeanOf returns a copy of x (DataMean).
func (m IdentityMean) MeanOf(x *mat.Dense) *mat.Dense { return mat.DenseCopyOf(x) }

// ProjectionMean is m(x) = x·W with a fixed (not trained) W [D,Q]: the mean of deep-GP inner layers that change
// width (Salimbeni & Deisenroth 2017, Sec. 4; MATH.md §9): the top-Q principal directions of the layer's input
// data when stepping down (Q < D), and W = [I 0] (identity with zero padding) when stepping up.
type ProjectionMean struct {
	d, q int
	w    []float64 // row-major [D,Q]
}

// NewProjectionMean returns x·W for w row-major [d,q] (copied); non-finite entries are an error.
func NewProjectionMean(d, q int, w []float64) (*ProjectionMean, error) {
	if d <= 0 || q <= 0 {
		return nil, configErr("ProjectionMean: dimensions must be positive, got %d×%d", d, q)
	}
	if len(w) != d*q {
		return nil, configErr("ProjectionMean: %d weights, want %d×%d", len(w), d, q)
	}
	for i, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, configErr("ProjectionMean: non-finite weight %v at row %d, column %d", v, i/q, i%q)
		}
	}
	return &ProjectionMean{d: d, q: q, w: append([]float64(nil), w...)}, nil
}

// Mean returns x·W [N,Q].
func (m *ProjectionMean) Mean(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.MatMul(x, g.Const("projection", m.w, m.d, m.q), false, false)
}

// MeanOf returns x·W [N,Q] (DataMean).
func (m *ProjectionMean) MeanOf(x *mat.Dense) *mat.Dense {
	var out mat.Dense
	out.Mul(x, mat.NewDense(m.d, m.q, m.w))
	return &out
}

// Weights returns a copy of W, row-major [D,Q].
func (m *ProjectionMean) Weights() []float64 { return append([]float64(nil), m.w...) }

// InputDim returns D.
func (m *ProjectionMean) InputDim() int { return m.d }

// OutputDim returns Q.
func (m *ProjectionMean) OutputDim() int { return m.q }

// Params returns nil: W is fixed.
func (m *ProjectionMean) Params() []*graph.Param { return nil }
