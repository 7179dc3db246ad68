package models_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp/models"
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

// BenchmarkSGPRStep times one forward+backward pass of SGPR's collapsed bound on a power-sized set (N = 8611
// rows, D = 4, M = 100 inducing inputs; bayesian-benchmarks' power-bb/sgpr): what each of TrainLBFGS's
// evaluations costs. The M×N products L_u⁻¹K_uf and BBᵀ dominate.
func BenchmarkSGPRStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := benchmodels.ToyRegression(rng, 8611, 4, 1)
	k, err := benchmodels.ARDKernel(4)
	if err != nil {
		b.Fatal(err)
	}
	m, err := models.NewSGPR(models.SGPRConfig{Kernel: k, Z: benchmodels.RandomBases(rng, 100, 4)})
	if err != nil {
		b.Fatal(err)
	}
	s, err := benchmodels.NewStep(m, x, y, nil)
	if err != nil {
		b.Fatal(err)
	}
	timeSteps(b, s)
}
