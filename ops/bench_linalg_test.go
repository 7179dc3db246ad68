package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Flop counts used for GFLOP/s (a multiply-add counts as 2 flops):
//
//	Cholesky forward            n³/3          (dpotrf)
//	Cholesky backward (plain)   3n³           (dtrmm n³ + two dtrsm n³ each; see ops.CholeskyBackward)
//	TriSolve forward            n²m           (dtrsm), m = n here
//	TriSolve backward (plain)   3n²m          (dtrsm n²m for dB + dgemm 2n²m for dT)
//
// The "tape" sub-benchmarks time one TapeMachine run of a graph (RunAll + Reset), so the gorgonia adapter overhead
// (value binding, buffer handling, the Dot loss) shows up as a lower GFLOP/s than "plain":
//
//	CholeskyBackward/tape: loss = Dot(W, Cholesky(A)), ∂loss/∂A: n³/3 + 3n³ flops counted.
//	TriSolveBackward/tape: loss = Dot(W, TriSolve(T, B)), ∂/∂T and ∂/∂B: n³ forward + 3n³ (∂T, which recomputes dB)
//	                       + n³ (∂B) = 5n³ counted — the two gradient ops are independent, so dB is solved twice.
var linalgSizes = []int{100, 200, 500, 1000}

func reportGFLOPs(b *testing.B, flops float64) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(flops*float64(b.N)/s/1e9, "GFLOP/s")
	}
}

// benchSPD returns B·Bᵀ/n + I with B uniform in [−1, 1).
func benchSPD(rng *rand.Rand, n int) []float64 {
	bm := mat.NewDense(n, n, benchRandom(rng, n*n))
	var a mat.Dense
	a.Mul(bm, bm.T())
	d := a.RawMatrix().Data
	for i := range d {
		d[i] /= float64(n)
	}
	for i := 0; i < n; i++ {
		d[i*n+i]++
	}
	return d
}

func benchRandom(rng *rand.Rand, k int) []float64 {
	v := make([]float64, k)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

// benchLower returns a well-conditioned lower-triangular n×n factor: the Cholesky factor of benchSPD.
func benchLower(b *testing.B, rng *rand.Rand, n int) []float64 {
	l := make([]float64, n*n)
	if _, err := ops.CholeskyLower(l, benchSPD(rng, n), n, ops.JitterPolicy{}); err != nil {
		b.Fatal(err)
	}
	return l
}

func matNode(g *G.ExprGraph, name string, n, m int, v []float64) *G.Node {
	return G.NewMatrix(g, tensor.Float64, G.WithShape(n, m), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(n, m), tensor.WithBacking(v))))
}

func runTape(b *testing.B, g *G.ExprGraph, flops float64) {
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	b.StopTimer()
	reportGFLOPs(b, flops)
}

func BenchmarkCholesky(b *testing.B) {
	for _, n := range linalgSizes {
		flops := float64(n) * float64(n) * float64(n) / 3
		b.Run(fmt.Sprintf("n=%d/plain", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			a, l := benchSPD(rng, n), make([]float64, n*n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ops.CholeskyLower(l, a, n, ops.JitterPolicy{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportGFLOPs(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/tape", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			g := G.NewGraph()
			if _, err := ops.Cholesky(matNode(g, "a", n, n, benchSPD(rng, n)), ops.JitterPolicy{}); err != nil {
				b.Fatal(err)
			}
			runTape(b, g, flops)
		})
	}
}

func BenchmarkCholeskyBackward(b *testing.B) {
	for _, n := range linalgSizes {
		n3 := float64(n) * float64(n) * float64(n)
		b.Run(fmt.Sprintf("n=%d/plain", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			l, lbar, dst := benchLower(b, rng, n), benchRandom(rng, n*n), make([]float64, n*n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ops.CholeskyBackward(dst, l, lbar, n)
			}
			b.StopTimer()
			reportGFLOPs(b, 3*n3)
		})
		b.Run(fmt.Sprintf("n=%d/tape", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			g := G.NewGraph()
			a := matNode(g, "a", n, n, benchSPD(rng, n))
			l, err := ops.Cholesky(a, ops.JitterPolicy{})
			if err != nil {
				b.Fatal(err)
			}
			loss, err := ops.Dot(matNode(g, "w", n, n, benchRandom(rng, n*n)), l)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := G.Grad(loss, a); err != nil {
				b.Fatal(err)
			}
			runTape(b, g, n3/3+3*n3)
		})
	}
}

func BenchmarkTriSolve(b *testing.B) {
	for _, n := range linalgSizes {
		n3 := float64(n) * float64(n) * float64(n) // n²m with m = n
		b.Run(fmt.Sprintf("n=%d/plain", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			l, rhs, x := benchLower(b, rng, n), benchRandom(rng, n*n), make([]float64, n*n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ops.TriSolveTo(x, l, rhs, n, n, false, false)
			}
			b.StopTimer()
			reportGFLOPs(b, n3)
		})
		b.Run(fmt.Sprintf("n=%d/tape", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			g := G.NewGraph()
			if _, err := ops.TriSolve(matNode(g, "t", n, n, benchLower(b, rng, n)), matNode(g, "b", n, n, benchRandom(rng, n*n)), false, false); err != nil {
				b.Fatal(err)
			}
			runTape(b, g, n3)
		})
	}
}

func BenchmarkTriSolveBackward(b *testing.B) {
	for _, n := range linalgSizes {
		n3 := float64(n) * float64(n) * float64(n)
		b.Run(fmt.Sprintf("n=%d/plain", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			l, rhs := benchLower(b, rng, n), benchRandom(rng, n*n)
			x, gx, dT, dB := make([]float64, n*n), benchRandom(rng, n*n), make([]float64, n*n), make([]float64, n*n)
			ops.TriSolveTo(x, l, rhs, n, n, false, false)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ops.TriSolveBackward(dT, dB, l, x, gx, n, n, false, false)
			}
			b.StopTimer()
			reportGFLOPs(b, 3*n3)
		})
		b.Run(fmt.Sprintf("n=%d/tape", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			g := G.NewGraph()
			tn, bn := matNode(g, "t", n, n, benchLower(b, rng, n)), matNode(g, "b", n, n, benchRandom(rng, n*n))
			x, err := ops.TriSolve(tn, bn, false, false)
			if err != nil {
				b.Fatal(err)
			}
			loss, err := ops.Dot(matNode(g, "w", n, n, benchRandom(rng, n*n)), x)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := G.Grad(loss, tn, bn); err != nil {
				b.Fatal(err)
			}
			runTape(b, g, 5*n3)
		})
	}
}
