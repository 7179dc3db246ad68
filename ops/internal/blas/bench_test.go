package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// impls are what the benchmarks compare: this package with each kernel this CPU runs, and gonum's pure-Go BLAS
// (and, with the openblas build tag, OpenBLAS: bench_openblas_test.go).
var impls = map[string]blas.Float64{"gonum": gonum.Implementation{}}

// lapacks are the Dpotrf implementations the benchmarks compare.
var lapacks = map[string]lapack.Float64{"gonum": lapackgonum.Implementation{}}

// forEachImpl runs b for every implementation: ours with every kernel, then the others.
func forEachImpl(b *testing.B, name string, f func(b *testing.B, im blas.Float64, la lapack.Float64)) {
	prev := Kernel()
	defer SetKernel(prev)
	for _, k := range Kernels() {
		b.Run(name+"/impl=gpzoo-"+k, func(b *testing.B) {
			SetKernel(k)
			f(b, Implementation{}, LAPACK{})
		})
	}
	for n, im := range impls {
		b.Run(name+"/impl="+n, func(b *testing.B) { f(b, im, lapacks[n]) })
	}
}

func gflops(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkDgemm(b *testing.B) {
	for _, n := range []int{128, 512, 1000} {
		for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			rng := rand.New(rand.NewPCG(1, 1))
			x, y, c := operand(rng, n, n, n), operand(rng, n, n, n), operand(rng, n, n, n)
			forEachImpl(b, fmt.Sprintf("n=%d/tA=%c", n, tr), func(b *testing.B, im blas.Float64, _ lapack.Float64) {
				for i := 0; i < b.N; i++ {
					im.Dgemm(tr, blas.NoTrans, n, n, n, 1, x, n, y, n, 0, c, n)
				}
				gflops(b, 2*float64(n)*float64(n)*float64(n))
			})
		}
	}
}

func BenchmarkDtrsm(b *testing.B) {
	for _, n := range []int{128, 512, 1000} {
		for _, c := range []struct {
			name string
			s    blas.Side
			t    blas.Transpose
		}{{"LLN", blas.Left, blas.NoTrans}, {"RLT", blas.Right, blas.Trans}} {
			rng := rand.New(rand.NewPCG(1, 1))
			a := triangle(rng, n, n, blas.Lower)
			x := operand(rng, n, n, n)
			forEachImpl(b, fmt.Sprintf("n=%d/%s", n, c.name), func(b *testing.B, im blas.Float64, _ lapack.Float64) {
				for i := 0; i < b.N; i++ {
					im.Dtrsm(c.s, blas.Lower, c.t, blas.NonUnit, n, n, 1, a, n, x, n)
				}
				gflops(b, float64(n)*float64(n)*float64(n))
			})
		}
	}
}

func BenchmarkDtrmm(b *testing.B) {
	for _, n := range []int{128, 512, 1000} {
		rng := rand.New(rand.NewPCG(1, 1))
		a := triangle(rng, n, n, blas.Lower)
		x := operand(rng, n, n, n)
		forEachImpl(b, fmt.Sprintf("n=%d/LLT", n), func(b *testing.B, im blas.Float64, _ lapack.Float64) {
			for i := 0; i < b.N; i++ {
				im.Dtrmm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, a, n, x, n)
				for j := range x { // keep the values bounded
					x[j] *= 0.25
				}
			}
			gflops(b, float64(n)*float64(n)*float64(n))
		})
	}
}

func BenchmarkDsyrk(b *testing.B) {
	for _, n := range []int{128, 512, 1000} {
		rng := rand.New(rand.NewPCG(1, 1))
		x, c := operand(rng, n, n, n), operand(rng, n, n, n)
		forEachImpl(b, fmt.Sprintf("n=%d/LN", n), func(b *testing.B, im blas.Float64, _ lapack.Float64) {
			for i := 0; i < b.N; i++ {
				im.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1, x, n, 0, c, n)
			}
			gflops(b, float64(n)*float64(n)*float64(n))
		})
	}
}

func BenchmarkDpotrf(b *testing.B) {
	for _, n := range []int{128, 512, 1000} {
		rng := rand.New(rand.NewPCG(1, 1))
		a := spd(rng, n, n)
		w := make([]float64, len(a))
		forEachImpl(b, fmt.Sprintf("n=%d/L", n), func(b *testing.B, _ blas.Float64, la lapack.Float64) {
			if la == nil {
				b.Skip("no Dpotrf of this implementation here (gpzoo bench times OpenBLAS's)")
			}
			for i := 0; i < b.N; i++ {
				copy(w, a)
				if !la.Dpotrf(blas.Lower, n, w, n) {
					b.Fatal("not positive definite")
				}
			}
			gflops(b, float64(n)*float64(n)*float64(n)/3)
		})
	}
}
