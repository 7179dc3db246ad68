package benchmodels

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
)

// GPRDim is the input dimension of the exact-GP benchmark.
const GPRDim = 5

// GPR returns one forward+backward pass of the exact GP's negative log marginal likelihood (SE-ARD with default
// hyperparameters, D = 5, N standard-normal inputs and targets; no optimiser step): the Cholesky of the N×N
// kernel matrix dominates. Flops are counted as N³/3 (Cholesky) + N³ (its backward, two triangular solves and a
// product) + N² (solve) + 6N²D (kernel and its gradients).
func GPR(n int) (*Step, error) {
	const d = GPRDim
	rng := rand.New(rand.NewPCG(1, 1))
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d})
	if err != nil {
		return nil, err
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k})
	if err != nil {
		return nil, err
	}
	x, y := normals(rng, n, d), normals(rng, n, 1)
	s, err := NewStep(m, x, y, nil)
	if err != nil {
		return nil, err
	}
	nf := float64(n)
	s.Flops = nf*nf*nf/3 + nf*nf*nf + nf*nf + 6*nf*nf*d
	return s, nil
}
