package dgp_test

import (
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/variational"
)

// BenchmarkDGPStep times one training step (sampled forward pass, backward pass, Adam) of the deep GPs that
// `gpzoo bench` times too (variational.DGPAt), GFLOP/s from the step's flop count (variational.DGPShapeFlops):
//
//   - DGPStep/coupled-M200 and DGPStep/decoupled-Ma500-Mb100: a 2-layer DGP on 8-dimensional inputs, hidden width
//     8, minibatch 1024, S = 1, coupled layers with M = 200 (the configuration) and decoupled layers
//     (μ_GPcent, S-form) with Ma = 500, Mb = 100 (Havasi et al.'s sizes);
//   - DGPStep/<family>,L=…,N=…,D=…,W=10: the full-batch steps of Havasi et al.'s tables
//     (variational.FullBatchDGPs): L hidden layers of width 10 on kin8nm's 6,553 rows of 8 inputs (L = 1, 3) and
//     on protein's 10,000-row batches of 9 inputs (L = 4), S = 1.
//
// cpu-ms/step is the process's CPU time per step (benchmodels.CPUTime): with -cpu 1, the step's work, steadier
// than its wall time on a shared machine (compare builds with benchstat on it).
func BenchmarkDGPStep(b *testing.B) {
	var shapes []variational.DGPShape
	for _, fam := range variational.DGPFamilies {
		shapes = append(shapes, variational.MinibatchDGP(fam))
	}
	for _, sh := range append(shapes, variational.FullBatchDGPs...) {
		b.Run(sh.Name(), func(b *testing.B) {
			s, err := variational.DGPAt(sh)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ResetTimer()
			c0, ok := benchmodels.CPUTime()
			for i := 0; i < b.N; i++ {
				if err := s.Run(); err != nil {
					b.Fatal(err)
				}
			}
			c1, _ := benchmodels.CPUTime()
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/step")
			b.ReportMetric(s.Flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s") // variational.DGPShapeFlops
			if ok {
				b.ReportMetric((c1-c0).Seconds()/float64(b.N)*1e3, "cpu-ms/step")
			}
		})
	}
}
