package blas

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
)

// BenchmarkTriShapes times the triangular level-3 calls of sparse-GP training steps over the sizes users have:
// M = 50–500 inducing points (the triangle's order), N = 128 and 1024 right-hand sides (the minibatch), each with
// its GFLOP/s (M²N for a triangular solve or product and for the lower triangle of a product, 2M²N for the full
// product Dgemm NT beside them). Solves and products run in place: each iteration first restores B (an M×N copy,
// the same in every version, timed with the call).
func BenchmarkTriShapes(b *testing.B) {
	for _, m := range []int{50, 100, 200, 500} {
		for _, n := range []int{128, 1024} {
			rng := rand.New(rand.NewPCG(uint64(m), uint64(n)))
			l := triangle(rng, m, m, blas.Lower)
			for i := 0; i < m; i++ {
				l[i*m+i] += 4
			}
			x, y := operand(rng, m, n, n), operand(rng, m, n, n)
			c := operand(rng, m, m, m)
			x0 := append([]float64(nil), x...)
			var im Implementation
			f := float64(m) * float64(m) * float64(n)
			run := func(name string, flops float64, restore bool, call func()) {
				b.Run(fmt.Sprintf("M=%d,N=%d/%s", m, n, name), func(b *testing.B) {
					cpu0 := cpuTime()
					for i := 0; i < b.N; i++ {
						if restore {
							copy(x, x0)
						}
						call()
					}
					reportCPU(b, cpu0)
					gflops(b, flops)
				})
			}
			run("trsm-LLN", f, true, func() { im.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, l, m, x, n) })
			run("trsm-LLT", f, true, func() { im.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, l, m, x, n) })
			run("trmm-LLT", f, true, func() { im.Dtrmm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, m, n, 0.5, l, m, x, n) })
			run("trmm-LLN", f, true, func() { im.Dtrmm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 0.5, l, m, x, n) })
			run("gemmt-LNT", f, false, func() { im.Dgemmt(blas.Lower, blas.NoTrans, blas.Trans, m, n, 1, x0, n, y, n, 0, c, m) })
			run("gemm-NT", 2*f, false, func() { im.Dgemm(blas.NoTrans, blas.Trans, m, m, n, 1, x0, n, y, n, 0, c, m) })
		}
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per iteration since cpu0 (cpu-ns/op): on a busy machine a less noisy measure of
// the work than the wall time, which it equals on one core when the benchmark runs alone.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkTriQuad times TriQuad's forward and backward (every gradient) at the sizes of sparse-GP layers, GFLOP/s
// counting 3PM²N (a triangular product forward; one and the lower triangle of a product backward, per factor).
func BenchmarkTriQuad(b *testing.B) {
	for _, s := range [][3]int{{50, 1024, 8}, {100, 1024, 8}, {200, 128, 8}, {200, 1024, 1}, {200, 1024, 8}, {500, 1024, 2}} {
		m, n, p := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("M=%d,N=%d,P=%d", m, n, p), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(uint64(m), uint64(n)))
			a, ls, g := triQuadInputs(rng, m, n, p)
			out, da := make([]float64, n*p), make([]float64, m*n)
			dls := make([][]float64, p)
			for q := range dls {
				dls[q] = make([]float64, m*m)
			}
			var w TriQuad
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				w.Forward(a, m, n, ls, out)
				w.Backward(a, m, n, ls, g, da, dls)
			}
			reportCPU(b, cpu0)
			gflops(b, 3*float64(p)*float64(m)*float64(m)*float64(n))
		})
	}
}

// BenchmarkTriQuadParts times TriQuad's parts at M = 200, N = 1024, P = 8: the forward, the backward for ∂A
// alone and for the ∂L_q alone (each after a forward, untimed).
func BenchmarkTriQuadParts(b *testing.B) {
	m, n, p := 200, 1024, 8
	rng := rand.New(rand.NewPCG(uint64(m), uint64(n)))
	a, ls, g := triQuadInputs(rng, m, n, p)
	out, da := make([]float64, n*p), make([]float64, m*n)
	dls := make([][]float64, p)
	for q := range dls {
		dls[q] = make([]float64, m*m)
	}
	f := float64(p) * float64(m) * float64(m) * float64(n)
	for _, part := range []string{"forward", "dA", "dL"} {
		b.Run(part, func(b *testing.B) {
			var w TriQuad
			for i := 0; i < b.N; i++ {
				if part != "forward" {
					b.StopTimer()
				}
				w.Forward(a, m, n, ls, out)
				switch part {
				case "dA":
					b.StartTimer()
					w.Backward(a, m, n, ls, g, da, make([][]float64, p))
				case "dL":
					b.StartTimer()
					w.Backward(a, m, n, ls, g, nil, dls)
				}
			}
			gflops(b, f)
		})
	}
}
