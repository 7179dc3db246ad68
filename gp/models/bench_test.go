package models_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp/layers"
)

// BenchmarkSVGPStep times one SVGP training step (M inducing points, minibatch B, D = 8, one output, Gaussian
// likelihood, whitened): forward, backward and an Adam update — what train.Train does per step, minus the batch
// gather. Flops counted (leading terms): the Cholesky of Kuu M³/3 and its backward ≈ 5M³/3; L_u⁻¹K_uf M²B and
// its backward 2M²B; L_Sᵀ·A M²B and its backward 2M²B; the kernel K_uf 2MBD and its backward ≈ 6MBD.
func BenchmarkSVGPStep(b *testing.B) {
	for _, c := range []struct{ m, batch int }{{16, 32}, {100, 1024}, {200, 1024}, {500, 1024}} {
		b.Run(fmt.Sprintf("M=%d,B=%d", c.m, c.batch), func(b *testing.B) {
			const d = 8
			rng := rand.New(rand.NewPCG(1, 1))
			l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kernel(b, d), Z: randomBases(rng, c.m, d)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			stepBench(b, l, c.batch)
			mf, bf, df := float64(c.m), float64(c.batch), float64(d)
			flops := 2*mf*mf*mf + 6*mf*mf*bf + 8*mf*bf*df
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
