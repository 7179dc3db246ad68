package ops_test

import (
	"errors"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// errNegative is the toy function's input error.
var errNegative = errors.New("negative input")

// fixedCov is a toy covariance function with a fixed-shape hyperparameter (CovHyper.Shape) and an input check
// (CovChecker): K_ij = Σ A · x1_i0 x2_j0, A [2,2]; inputs must be ≥ 0.
type fixedCov struct{}

func (fixedCov) Name() string           { return "FixedShapeToy" }
func (fixedCov) Hypers() []ops.CovHyper { return []ops.CovHyper{{Name: "A", Shape: []int{2, 2}}} }
func (fixedCov) sum(h []ops.CovInput) float64 {
	s := 0.0
	for _, v := range h[0].Data {
		s += v
	}
	return s
}
func (c fixedCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	m, d := x2.Rows(), x1.Cols()
	for i := range x1.Rows() {
		for j := range m {
			out[i*m+j] = c.sum(h) * x1.Data[i*d] * x2.Data[j*d]
		}
	}
}
func (fixedCov) MatrixGrad(_ int, _, _ ops.CovInput, _ []ops.CovInput, _, _, dst []float64) {
	clear(dst)
}
func (c fixedCov) Diag(x ops.CovInput, h []ops.CovInput, out []float64) {
	for i := range out {
		out[i] = c.sum(h) * x.Data[i*x.Cols()] * x.Data[i*x.Cols()]
	}
}
func (fixedCov) DiagGrad(_ int, _ ops.CovInput, _ []ops.CovInput, _, _, dst []float64) { clear(dst) }
func (fixedCov) CheckInputs(x ops.CovInput, _ []ops.CovInput) error {
	for _, v := range x.Data {
		if v < 0 {
			return errNegative
		}
	}
	return nil
}

// TestCovFixedShapeAndChecker: a hyperparameter of a fixed shape is accepted in that shape only (ShapeError
// otherwise, naming the shape), and a CovChecker's error ends the forward pass of CovMatrix and CovDiag.
func TestCovFixedShapeAndChecker(t *testing.T) {
	t.Parallel()
	var f fixedCov
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 1), G.WithName("x"))
	a22 := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("a22"))
	a23 := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("a23"))
	a2 := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("a2"))
	for _, bad := range []*G.Node{a23, a2} {
		if _, err := ops.CovMatrix(f, x, x, bad); !errors.Is(err, ops.ErrShape) {
			t.Errorf("hyperparameter %v: %v (want ErrShape)", bad.Shape(), err)
		}
	}
	k, err := ops.CovMatrix(f, x, x, a22)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := ops.CovDiag(f, x, a22)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    []float64
		want error
	}{{[]float64{1, 2, 3}, nil}, {[]float64{1, -2, 3}, errNegative}} {
		for _, out := range []*G.Node{k, kd} {
			if err := G.Let(x, tensor.New(tensor.WithShape(3, 1), tensor.WithBacking(append([]float64(nil), c.x...)))); err != nil {
				t.Fatal(err)
			}
			if err := G.Let(a22, tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4}))); err != nil {
				t.Fatal(err)
			}
			prog, locs, err := G.Compile(g.SubgraphRoots(out))
			if err != nil {
				t.Fatal(err)
			}
			m := G.NewTapeMachine(g.SubgraphRoots(out), G.WithPrecompiled(prog, locs))
			err = ops.UnwrapVM(m.RunAll())
			m.Close()
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("inputs %v, %v: %v (want %v)", c.x, out, err, c.want)
			}
			if c.want == nil && err == nil && out == k && out.Value().Data().([]float64)[1*3+2] != 10*2*3 {
				t.Errorf("K[1,2] = %v, want 60", out.Value().Data().([]float64)[1*3+2])
			}
		}
	}
}
