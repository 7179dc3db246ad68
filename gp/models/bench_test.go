package models_test

import (
	"fmt"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/variational"
)

// BenchmarkSVGPStep times one SVGP training step (M inducing points, minibatch B, D = 8, one output, Gaussian
// likelihood, whitened; variational.SVGP, which `gpzoo bench` times too at M = 200, B = 1024): forward,
// backward and an Adam update — what train.Train does per step, minus the batch gather.
func BenchmarkSVGPStep(b *testing.B) {
	for _, c := range []struct{ m, batch int }{{16, 32}, {100, 630}, {100, 1024}, {200, 1024}, {500, 1024}} {
		b.Run(fmt.Sprintf("M=%d,B=%d", c.m, c.batch), func(b *testing.B) {
			s, err := variational.SVGP(c.m, c.batch)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			timeSteps(b, s)
			b.ReportMetric(s.Flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// timeSteps times b.N steps of s, reports ms/step and closes s.
func timeSteps(b *testing.B, s *benchmodels.Step) {
	b.Helper()
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/step")
}
