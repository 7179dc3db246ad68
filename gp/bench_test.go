package gp_test

import (
	"fmt"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
)

// BenchmarkGPRStep times one forward+backward pass of the exact GP's negative log marginal likelihood
// (SE-ARD, D = 5; benchmodels.GPR, which `gpzoo bench` times too at N = 1000): the Cholesky of the N×N kernel
// matrix dominates.
func BenchmarkGPRStep(b *testing.B) {
	for _, n := range []int{200, 500, 1000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s, err := benchmodels.GPR(n)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(s.Flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
