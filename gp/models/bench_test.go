package models_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkSVGPStep times one SVGP training step (M inducing points, minibatch B, D = 8, one output, Gaussian
// likelihood, whitened): forward, backward and an Adam update — what train.Train does per step, minus the batch
// gather. Flops counted (leading terms): the Cholesky of Kuu M³/3 and its backward ≈ 5M³/3; L_u⁻¹K_uf M²B and
// its backward 2M²B; L_Sᵀ·A M²B and its backward 2M²B; the kernel K_uf 2MBD and its backward ≈ 6MBD.
func BenchmarkSVGPStep(b *testing.B) {
	for _, c := range []struct{ m, batch int }{{100, 1024}, {200, 1024}, {500, 1024}} {
		b.Run(fmt.Sprintf("M=%d,B=%d", c.m, c.batch), func(b *testing.B) {
			const d = 8
			rng := rand.New(rand.NewPCG(1, 1))
			x, y := toy(rng, c.batch, d, 1)
			z := mat.DenseCopyOf(x.Slice(0, c.m, 0, d))
			l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kernel(b, d), Z: z})
			if err != nil {
				b.Fatal(err)
			}
			m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: gaussian(b, 0.1), NumData: 10 * c.batch})
			if err != nil {
				b.Fatal(err)
			}
			g := graph.New(graph.Options{})
			xn, yn := g.Input("x", c.batch, d), g.Input("y", c.batch, 1)
			prog, err := g.Compile(m.Loss(xn, yn), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer prog.Close()
			copy(prog.InputData("x"), x.RawMatrix().Data)
			copy(prog.InputData("y"), y.RawMatrix().Data)
			params := prog.Params()
			grads := make([][]float64, len(params))
			opt := &train.Adam{LR: 1e-3}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := prog.Run(); err != nil {
					b.Fatal(err)
				}
				for k, p := range params {
					grads[k] = prog.Grad(p)
				}
				if err := opt.Step(i, params, grads); err != nil {
					b.Fatal(err)
				}
			}
			mf, bf, df := float64(c.m), float64(c.batch), float64(d)
			flops := 2*mf*mf*mf + 6*mf*mf*bf + 8*mf*bf*df
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/step")
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
