package blas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
)

// cholBenchSizes are the orders GP training factorises (inducing points, deep-GP layers) and two larger ones.
var cholBenchSizes = []int{32, 50, 100, 200, 500, 1000}

// BenchmarkCholesky times Dpotrf (lower) and CholeskyBackward (impl=blocked) beside the implementations they
// replaced (impl=previous: the recursive Dpotrf and the backward through Dtrsm, Dgemm and Dgemmt, chol_ref_test.go),
// on fresh inputs each iteration (the copy, n² values, is part of the time), with GFLOP/s at n³/3 and 2n³/3 flops.
// Run with -count and compare the implementations of the same run.
func BenchmarkCholesky(b *testing.B) {
	var la LAPACK
	for _, n := range cholBenchSizes {
		rng := rand.New(rand.NewPCG(1, 1))
		a, l, lbar := cholInputs(rng, n, n)
		w := make([]float64, len(a))
		nf := float64(n)
		for _, impl := range []string{"blocked", "previous"} {
			b.Run(fmt.Sprintf("op=potrf/n=%d/impl=%s", n, impl), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					copy(w, a)
					ok := false
					if impl == "blocked" {
						ok = la.Dpotrf(blas.Lower, n, w, n)
					} else {
						ok = potrfLowerRef(w, n, n)
					}
					if !ok {
						b.Fatal("not positive definite")
					}
				}
				gflops(b, nf*nf*nf/3)
			})
			b.Run(fmt.Sprintf("op=backward/n=%d/impl=%s", n, impl), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					copy(w, lbar)
					if impl == "blocked" {
						CholeskyBackward(w, l, n)
					} else {
						choleskyBackwardRef(w, l, n)
					}
				}
				gflops(b, 2*nf*nf*nf/3)
			})
		}
	}
}

// BenchmarkCholeskyPaired alternates the blocked implementations and the previous ones (see BenchmarkCholesky)
// call by call, for machines whose speed drifts (shared cores): each of b.N rounds times a few calls of each, and
// the benchmark reports the median time of each (blocked-µs, previous-µs) and the median over rounds of the ratio
// previous/blocked (speedup).
func BenchmarkCholeskyPaired(b *testing.B) {
	var la LAPACK
	for _, n := range cholBenchSizes {
		rng := rand.New(rand.NewPCG(1, 1))
		a, l, lbar := cholInputs(rng, n, n)
		w := make([]float64, len(a))
		reps := max(1, int(4e6/(float64(n)*float64(n)*float64(n))))
		for _, op := range []string{"potrf", "backward"} {
			call := func(previous bool) time.Duration {
				start := time.Now()
				for r := 0; r < reps; r++ {
					switch {
					case op == "potrf":
						copy(w, a)
						if previous {
							potrfLowerRef(w, n, n)
						} else {
							la.Dpotrf(blas.Lower, n, w, n)
						}
					case previous:
						copy(w, lbar)
						choleskyBackwardRef(w, l, n)
					default:
						copy(w, lbar)
						CholeskyBackward(w, l, n)
					}
				}
				return time.Since(start) / time.Duration(reps)
			}
			b.Run(fmt.Sprintf("op=%s/n=%d", op, n), func(b *testing.B) {
				blocked, previous, ratios := make([]float64, b.N), make([]float64, b.N), make([]float64, b.N)
				for i := 0; i < b.N; i++ {
					blocked[i] = float64(call(false).Nanoseconds()) / 1e3
					previous[i] = float64(call(true).Nanoseconds()) / 1e3
					ratios[i] = previous[i] / blocked[i]
				}
				b.ReportMetric(median(blocked), "blocked-µs")
				b.ReportMetric(median(previous), "previous-µs")
				b.ReportMetric(median(ratios), "speedup")
			})
		}
	}
}

func median(x []float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	return x[len(x)/2]
}
