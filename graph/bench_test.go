package graph_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BenchmarkProgramOverhead measures the graph adapter's per-step cost on a small model, the least-squares loss
// ‖X·w − y‖² with gradient: "graph" runs it as a Program (param copy-in, tape reset and run, gradient copy-out);
// "plain" computes the same loss and gradient directly with two Gemv calls. The difference per op is the
// adapter's overhead.
func BenchmarkProgramOverhead(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		const d = 5
		rng := rand.New(rand.NewPCG(1, 1))
		x := make([]float64, n*d)
		y := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		b.Run(fmt.Sprintf("graph/N=%d", n), func(b *testing.B) {
			w, err := graph.NewParam("w", make([]float64, d), nil, d, 1)
			if err != nil {
				b.Fatal(err)
			}
			g := graph.New(graph.Options{})
			xn, yn := g.Input("x", n, d), g.Input("y", n, 1)
			r := g.Sub(g.MatMul(xn, g.Param(w), false, false), yn)
			prog, err := g.Compile(g.Dot(r, r), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer prog.Close()
			copy(prog.InputData("x"), x)
			copy(prog.InputData("y"), y)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := prog.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("plain/N=%d", n), func(b *testing.B) {
			w := make([]float64, d)
			r := make([]float64, n)
			gw := make([]float64, d)
			xm := blas64.General{Rows: n, Cols: d, Stride: d, Data: x}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				copy(r, y)
				blas64.Gemv(blas.NoTrans, 1, xm, blas64.Vector{N: d, Inc: 1, Data: w}, -1, blas64.Vector{N: n, Inc: 1, Data: r})
				loss := blas64.Dot(blas64.Vector{N: n, Inc: 1, Data: r}, blas64.Vector{N: n, Inc: 1, Data: r})
				blas64.Gemv(blas.Trans, 2, xm, blas64.Vector{N: n, Inc: 1, Data: r}, 0, blas64.Vector{N: d, Inc: 1, Data: gw})
				_ = loss
			}
		})
	}
}
