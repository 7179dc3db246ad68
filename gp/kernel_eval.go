package gp

import (
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KernelMatrix evaluates k(x1, x2) [N1,N2] at the kernel's current hyperparameters, outside any training graph
// (for initialisation and diagnostics). Inputs must be finite and have the kernel's InputDim columns.
func KernelMatrix(k Kernel, x1, x2 *mat.Dense) (*mat.Dense, error) {
	if k == nil || x1 == nil || x2 == nil {
		return nil, configErr("KernelMatrix needs a kernel and two input matrices")
	}
	n1, d1 := x1.Dims()
	n2, d2 := x2.Dims()
	if d1 != k.InputDim() || d2 != k.InputDim() {
		return nil, &ops.ShapeError{Op: "gp.KernelMatrix", Want: fmt.Sprintf("inputs with %d columns", k.InputDim()), Got: fmt.Sprintf("%d and %d", d1, d2)}
	}
	for _, x := range []*mat.Dense{x1, x2} {
		if err := ops.CheckFinite("kernel inputs", mat.DenseCopyOf(x).RawMatrix().Data, k.InputDim()); err != nil {
			return nil, err
		}
	}
	g := graph.New(graph.Options{})
	a := g.Const("x1", mat.DenseCopyOf(x1).RawMatrix().Data, n1, d1)
	b := a
	if x2 != x1 {
		b = g.Const("x2", mat.DenseCopyOf(x2).RawMatrix().Data, n2, d2)
	}
	prog, err := g.CompileForward(map[string]*graph.Node{"k": k.K(a, b)})
	if err != nil {
		return nil, fmt.Errorf("gp: KernelMatrix: %w", err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("gp: KernelMatrix: %w", err)
	}
	return mat.NewDense(n1, n2, append([]float64(nil), prog.Output("k")...)), nil
}
