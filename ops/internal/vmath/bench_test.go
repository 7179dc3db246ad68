package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkExp times Exp on 4096 inputs in [−20, 0] (the arguments of covariance kernels) with each kernel, and
// the plain math.Exp loop it replaces; ns/element is the figure to compare.
func BenchmarkExp(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(7, 8))
	src, dst := make([]float64, n), make([]float64, n)
	for i := range src {
		src[i] = -20 * rng.Float64()
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/element")
	}
	prev := Kernel()
	defer SetKernel(prev)
	for _, name := range Kernels() {
		b.Run(name, func(b *testing.B) {
			SetKernel(name)
			b.SetBytes(8 * n)
			for b.Loop() {
				Exp(dst, src)
			}
			report(b)
		})
	}
	b.Run("math.Exp", func(b *testing.B) {
		b.SetBytes(8 * n)
		for b.Loop() {
			for i, x := range src {
				dst[i] = math.Exp(x)
			}
		}
		report(b)
	})
}
