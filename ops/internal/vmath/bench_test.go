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

// BenchmarkDots times Dots of one row of 1024 with the nine rows of a [9,1024] matrix (the shape of the
// covariance backward pass at D = 8), and Axpys of the same shape, with each kernel.
func BenchmarkDots(b *testing.B) {
	const n, rows = 1024, 9
	rng := rand.New(rand.NewPCG(7, 8))
	x, y, a, out := randVec(rng, n), randVec(rng, rows*n), randVec(rng, rows), make([]float64, rows)
	prev := Kernel()
	defer SetKernel(prev)
	for _, name := range Kernels() {
		SetKernel(name)
		b.Run("dots/"+name, func(b *testing.B) {
			for b.Loop() {
				Dots(out, x, y, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(n*rows), "ns/element")
		})
		b.Run("axpys/"+name, func(b *testing.B) {
			for b.Loop() {
				Axpys(y, n, a, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(n*rows), "ns/element")
		})
	}
}
