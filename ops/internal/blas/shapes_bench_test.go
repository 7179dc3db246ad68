package blas

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// BenchmarkSVGPShapes times the level-3 calls of one SVGP step (M = 200 inducing points, minibatch N = 1024)
// on the active kernel, each with its GFLOP/s.
func BenchmarkSVGPShapes(b *testing.B) {
	const m, n = 200, 1024
	rng := rand.New(rand.NewPCG(1, 1))
	l := triangle(rng, m, m, blas.Lower)
	for i := 0; i < m; i++ {
		l[i*m+i] += 4
	}
	x, y := operand(rng, m, n, n), operand(rng, m, n, n)
	c := operand(rng, m, m, m)
	var im Implementation
	x0 := append([]float64(nil), x...)
	run := func(name string, flops float64, f func()) {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(x, x0) // solves and products in place would drift towards denormals or overflow
				f()
			}
			gflops(b, flops)
		})
	}
	f := float64(m) * float64(m) * float64(n)
	run("trsm-LLN", f, func() { im.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, l, m, x, n) })
	run("trsm-LLT", f, func() { im.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, l, m, x, n) })
	run("trmm-LLT", f, func() { im.Dtrmm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, m, n, 0.5, l, m, x, n) })
	run("trmm-LLN", f, func() { im.Dtrmm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 0.5, l, m, x, n) })
	run("gemm-NT-MxMxN", 2*f, func() { im.Dgemm(blas.NoTrans, blas.Trans, m, m, n, 1, x, n, y, n, 0, c, m) })
	run("syrk-LN-MxN", f, func() { im.Dsyrk(blas.Lower, blas.NoTrans, m, n, 1, x, n, 0, c, m) })
	mm := float64(m) * float64(m) * float64(m)
	var la LAPACK
	w := make([]float64, m*m)
	run("potrf-200", mm/3, func() {
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				w[i*m+j] = l[i*m+j]
			}
		}
		for i := 0; i < m; i++ {
			w[i*m+i] += float64(m)
		}
		la.Dpotrf(blas.Lower, m, w, m)
	})
	lbar := operand(rng, m, m, m) // a fresh tril(L̄) each time: the backward of its own output would drift
	for i := 0; i < m; i++ {
		clear(lbar[i*m+i+1 : i*m+m])
	}
	run("cholbackward-200", 2*mm/3, func() {
		copy(c, lbar)
		CholeskyBackward(c, l, m)
	})
}

// BenchmarkFullBatchDGPShapes times the level-3 calls on whole rows of a full-batch decoupled deep-GP step
// (Havasi et al.'s sizes: N = 6553 rows, Ma = 500 mean bases, Mb = 100 covariance bases, width 10): the mean
// K_αxᵀa (Dgemm TN 6553×10×500), its gradients K_αx·G (NN 500×10×6553) and a·Gᵀ (NT 500×6553×10, k = 10: an
// outer product written whole), and the solves with L_β on K_βx [100,6553].
func BenchmarkFullBatchDGPShapes(b *testing.B) {
	const n, ma, mb, w = 6553, 500, 100, 10
	rng := rand.New(rand.NewPCG(1, 2))
	k, g, a := operand(rng, ma, n, n), operand(rng, n, w, w), operand(rng, ma, w, w)
	out, mu := operand(rng, ma, n, n), operand(rng, n, w, w)
	l := triangle(rng, mb, mb, blas.Lower)
	for i := 0; i < mb; i++ {
		l[i*mb+i] += 4
	}
	x := operand(rng, mb, n, n)
	x0 := append([]float64(nil), x...)
	var im Implementation
	run := func(name string, flops float64, f func()) {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f()
			}
			gflops(b, flops)
		})
	}
	run("gemm-TN-6553x10x500", 2*n*w*ma, func() { im.Dgemm(blas.Trans, blas.NoTrans, n, w, ma, 1, k, n, a, w, 0, mu, w) })
	run("gemm-NN-500x10x6553", 2*n*w*ma, func() { im.Dgemm(blas.NoTrans, blas.NoTrans, ma, w, n, 1, k, n, g, w, 0, a, w) })
	run("gemm-NT-500x6553x10", 2*n*w*ma, func() { im.Dgemm(blas.NoTrans, blas.Trans, ma, n, w, 1, a, w, g, w, 0, out, n) })
	run("trsm-LLN-100x6553", mb*mb*n, func() {
		copy(x, x0)
		im.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, mb, n, 1, l, mb, x, n)
	})
}
