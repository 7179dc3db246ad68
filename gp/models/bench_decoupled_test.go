package models_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/variational"
)

// stepBench times one training step (forward, backward, Adam) of an SVGP model built around layer l on a
// minibatch of b rows with D = 8 (variational.LayerStep: the same work per step as train.Train, minus the batch
// gather).
func stepBench(b *testing.B, l gp.Layer, batch int) {
	s, err := variational.LayerStep(l, batch)
	if err != nil {
		b.Fatal(err)
	}
	timeSteps(b, s)
}

// BenchmarkDecoupledScaling is the scaling study (Cheng & Boots 2017, §5): time per step of DECOUPLED
// with |β| = 128 and |α| ∈ {512, …, 16384}, minibatch 1024, mean-basis minibatch 64 (the unbiased KL estimate),
// against a coupled SVGP with M = |α| where that is feasible (|α| ≤ 2048 here). DECOUPLED's step is
// O(D·N·|α| + N·|β|² + |β|³): linear in |α|; the coupled step is O(M³ + N·M²).
func BenchmarkDecoupledScaling(b *testing.B) {
	const d, batch, mbeta = 8, 1024, 128
	for _, ma := range []int{512, 2048, 8192, 16384} {
		b.Run(fmt.Sprintf("decoupled/alpha=%d", ma), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 3))
			l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: kernel(b, d), Zalpha: benchmodels.RandomBases(rng, ma, d),
				Zbeta: benchmodels.RandomBases(rng, mbeta, d), MeanBasisBatch: 64, Rand: rand.New(rand.NewPCG(4, 4))})
			if err != nil {
				b.Fatal(err)
			}
			stepBench(b, l, batch)
		})
		if ma > 2048 {
			continue
		}
		b.Run(fmt.Sprintf("coupled/M=%d", ma), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 3))
			l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kernel(b, d), Z: benchmodels.RandomBases(rng, ma, d)})
			if err != nil {
				b.Fatal(err)
			}
			stepBench(b, l, batch)
		})
	}
}
