package dgp_test

import (
	"testing"

	"github.com/gpzoo/gpzoo/internal/benchmodels/variational"
)

// BenchmarkDGPStep times one training step (sampled forward pass, backward pass, Adam) of a 2-layer DGP on
// 8-dimensional inputs (variational.DGP, which `gpzoo bench` times too): hidden width 8, minibatch 1024, S = 1,
// coupled layers with M = 200 (the configuration) and decoupled layers (μ_GPcent, S-form) with
// Ma = 500, Mb = 100 (Havasi et al.'s sizes). GFLOP/s from the step's flop count (variational.DGPFlops).
func BenchmarkDGPStep(b *testing.B) {
	for _, fam := range variational.DGPFamilies {
		b.Run(fam, func(b *testing.B) {
			s, err := variational.DGP(fam)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/step")
			b.ReportMetric(s.Flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s") // variational.DGPFlops
		})
	}
}
