package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
)

// BenchmarkApprox times the exact GP's approximations on a 1-D logistic problem of n rows (the SE kernel of
// approxProblem): "laplace" and "ep" compute the approximation from a cold start (LaplaceApprox: Newton
// iterations, each a Cholesky of B; EPApprox: parallel sweeps, each a Cholesky of B and a triangular solve for
// diag Σ), "*-grad" its gradient in K, m and θ (LaplaceGrad, EPGrad: a Cholesky inverse and a triangular solve).
// The iterations per call are reported (iters/op).
func BenchmarkApprox(b *testing.B) {
	for _, n := range []int{200, 500, 1000} {
		rng := rand.New(rand.NewPCG(5, uint64(n)))
		_, k, m, y := approxProblem(rng, n, "binary")
		for i := 0; i < n; i++ {
			k[i*n+i] += 1e-3 // the problem's inputs are dense at these sizes
		}
		gk, gm := make([]float64, n*n), make([]float64, n)
		b.Run(fmt.Sprintf("laplace/n=%d", n), func(b *testing.B) {
			it := 0
			for range b.N {
				q, err := ops.LaplaceApprox(k, m, y, n, lapLogistic{}, nil, ops.LaplaceOptions{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				it += q.Iters
			}
			b.ReportMetric(float64(it)/float64(b.N), "iters/op")
		})
		q, err := ops.LaplaceApprox(k, m, y, n, lapLogistic{}, nil, ops.LaplaceOptions{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("laplace-grad/n=%d", n), func(b *testing.B) {
			for range b.N {
				if err := ops.LaplaceGrad(q, y, lapLogistic{}, nil, 1, gk, gm, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("ep/n=%d", n), func(b *testing.B) {
			it := 0
			for range b.N {
				q, err := ops.EPApprox(k, m, y, n, lapLogistic{}, nil, ops.EPOptions{}, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				it += q.Iters
			}
			b.ReportMetric(float64(it)/float64(b.N), "iters/op")
		})
		qe, err := ops.EPApprox(k, m, y, n, lapLogistic{}, nil, ops.EPOptions{}, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("ep-grad/n=%d", n), func(b *testing.B) {
			for range b.N {
				if err := ops.EPGrad(qe, m, y, lapLogistic{}, nil, ops.EPOptions{}, 1, gk, gm, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
