package gptest

import (
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Optimizer updates params from their gradients at step i (train.Adam's Step has this shape; gptest does not
// import train).
type Optimizer func(i int, params []*graph.Param, grads [][]float64) error

// BenchStep times b.N training steps of model on the batch x, y (forward, backward, opt: the work per step of
// train.Train minus the batch gather) and reports ms/step.
func BenchStep(b *testing.B, model gp.Model, x, y *mat.Dense, opt Optimizer) {
	b.Helper()
	n, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(model.Loss(g.Input("x", n, d), g.Input("y", n, p)), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	copy(prog.InputData("x"), mat.DenseCopyOf(x).RawMatrix().Data)
	copy(prog.InputData("y"), mat.DenseCopyOf(y).RawMatrix().Data)
	params := prog.Params()
	grads := make([][]float64, len(params))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := prog.Run(); err != nil {
			b.Fatal(err)
		}
		for k, p := range params {
			grads[k] = prog.Grad(p)
		}
		if err := opt(i, params, grads); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/step")
}
