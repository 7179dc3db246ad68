package gp_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// initProbe is a kernel that initialises itself from the data, recording what it was given.
type initProbe struct {
	gp.Kernel
	x, y *mat.Dense
}

func (p *initProbe) InitFromData(x, y *mat.Dense, _ *rand.Rand) error {
	p.x, p.y = x, y
	return nil
}

// columns is a kernel on chosen input columns (the shape of gp.Active: Kernel() and Dims()).
type columns struct {
	inner gp.Kernel
	dims  []int
	dim   int
}

func (c columns) K(x1, x2 *graph.Node) *graph.Node { return c.inner.K(x1, x2) }
func (c columns) KDiag(x *graph.Node) *graph.Node  { return c.inner.KDiag(x) }
func (c columns) InputDim() int                    { return c.dim }
func (c columns) Params() []*graph.Param           { return c.inner.Params() }
func (c columns) String() string                   { return "columns" }
func (c columns) Kernel() gp.Kernel                { return c.inner }
func (c columns) Dims() []int                      { return c.dims }

// InitKernelFromData reaches the initialisers inside sums, products and column selections (with the selected
// columns), and leaves other kernels unchanged.
func TestInitKernelFromData(t *testing.T) {
	t.Parallel()
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 3})
	if err != nil {
		t.Fatal(err)
	}
	before := fmt.Sprint(se.Params()[0].Value(), se.Params()[1].Value())
	direct, inSum, inProd := &initProbe{Kernel: se}, &initProbe{Kernel: se}, &initProbe{Kernel: se}
	sub := &initProbe{Kernel: se}
	prod, err := gp.NewProduct(se, inProd)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := gp.NewSum(inSum, prod, columns{inner: sub, dims: []int{2, 0}, dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(4, 3, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	y := mat.NewDense(4, 1, []float64{1, 2, 3, 4})
	if err := gp.InitKernelFromData(direct, x, y, nil); err != nil || direct.x != x || direct.y != y {
		t.Errorf("direct: %v, x %v", err, direct.x)
	}
	if err := gp.InitKernelFromData(sum, x, y, nil); err != nil {
		t.Fatal(err)
	}
	if inSum.x != x || inProd.x != x || inSum.y != y || inProd.y != y {
		t.Error("an initialiser inside a sum or a product was not called with the data")
	}
	if sub.x == nil || fmt.Sprint(sub.x.RawMatrix().Data) != fmt.Sprint([]float64{2, 0, 5, 3, 8, 6, 11, 9}) || sub.y != y {
		t.Errorf("inside the column selection: x %v, want columns 2 and 0", sub.x)
	}
	if after := fmt.Sprint(se.Params()[0].Value(), se.Params()[1].Value()); after != before {
		t.Errorf("SE changed: %s → %s", before, after)
	}
	if err := gp.InitKernelFromData(columns{inner: sub, dims: []int{5}, dim: 3}, x, y, nil); err == nil {
		t.Error("a column outside the inputs accepted")
	}
}
