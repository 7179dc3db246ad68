package gp_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
)

// BenchmarkGPRStep times one forward+backward pass of the exact GP's negative log marginal likelihood
// (SE-ARD, D = 5): the Cholesky of the N×N kernel matrix dominates. Flops are counted as N³/3 (Cholesky)
// + N³ (its backward, two triangular solves and a product) + N² (solve) + 6N²D (kernel and its gradients).
func BenchmarkGPRStep(b *testing.B) {
	for _, n := range []int{200, 500, 1000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			const d = 5
			rng := rand.New(rand.NewPCG(1, 1))
			k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d})
			if err != nil {
				b.Fatal(err)
			}
			m, err := gp.NewGPR(gp.GPRConfig{Kernel: k})
			if err != nil {
				b.Fatal(err)
			}
			g := graph.New(graph.Options{})
			x, y := g.Input("x", n, d), g.Input("y", n, 1)
			prog, err := g.Compile(m.Loss(x, y), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer prog.Close()
			for i, xd := 0, prog.InputData("x"); i < len(xd); i++ {
				xd[i] = rng.NormFloat64()
			}
			for i, yd := 0, prog.InputData("y"); i < len(yd); i++ {
				yd[i] = rng.NormFloat64()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := prog.Run(); err != nil {
					b.Fatal(err)
				}
			}
			nf := float64(n)
			flops := nf*nf*nf/3 + nf*nf*nf + nf*nf + 6*nf*nf*d
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
