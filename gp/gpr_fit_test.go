package gp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
)

// Both optimisers must raise the log marginal likelihood from the same start to the same optimum: L-BFGS to a
// stationary point, Adam (lr 0.05, 600 steps) to within 1e-3 nats per point of it.
func TestGPRFitAdamAndLBFGS(t *testing.T) {
	t.Parallel()
	x, y := toyData(rand.New(rand.NewPCG(8, 8)), 60, 2)
	start := newGPR(t, 2, 1, nil, 0.5)
	l0, err := start.LogMarginalLikelihoodValue(x, y, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mb := newGPR(t, 2, 1, nil, 0.5)
	if _, err := train.TrainLBFGS(mb, x, y, train.LBFGSConfig{Iters: 200}); err != nil {
		t.Fatal(err)
	}
	lb, err := mb.LogMarginalLikelihoodValue(x, y, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ma := newGPR(t, 2, 1, nil, 0.5)
	if _, err := train.Train(ma, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: 600, Optimizer: &train.Adam{LR: 0.05}}); err != nil {
		t.Fatal(err)
	}
	la, err := ma.LogMarginalLikelihoodValue(x, y, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(lb > l0+10) {
		t.Errorf("L-BFGS: log p(y) %v → %v, expected a large gain", l0, lb)
	}
	if math.Abs(la-lb)/60 > 1e-3 {
		t.Errorf("Adam reached %v, L-BFGS %v: differ by more than 1e-3 nats per point", la, lb)
	}
	// The fitted noise is near the generating 0.1² = 0.01 (60 points: within a factor of 3).
	if v := mb.NoiseVariance(); v < 0.0033 || v > 0.03 {
		t.Errorf("fitted noise variance %v, generating 0.01", v)
	}
}
