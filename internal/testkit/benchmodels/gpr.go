package benchmodels

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
)

// GPRDim is the input dimension of the exact-GP benchmark.
const GPRDim = 5

// GPR returns one forward+backward pass of the exact GP's negative log marginal likelihood (SE-ARD with default
// hyperparameters, D = 5, N standard-normal inputs and targets; no optimiser step): the Cholesky of the N×N
// kernel matrix dominates. Its Flops are GPRFlops(N).
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
	s.Flops = GPRFlops(n)
	return s, nil
}

// GPRFlops counts GPR(n)'s step, the loss −log p(y) = ½‖L⁻¹y‖² + Σ log L_ii + const with L = chol(K + σ²I) and
// its gradient with respect to the variance, the lengthscales and σ² (K = K(X, X) [N,N], D = GPRDim, one target
// column; X is data, not differentiated):
//
//	forward   CovFlops(N, N, D) + CholFlops(N) + TriSolveFlops(N, 1)
//	backward  TriSolveGradFlops(N, 1) + N² (L's two gradients summed) + CholGradFlops(N) + CovGradFlops(N, N, D, 0)
//
// = N³/3 + CholGradFlops(N) + 5N²D + 15N², the Cholesky's backward 2N³/3 in the purego build and 3N³ in the
// openblas build (N = 1000: 1.04 and 3.37 GFLOP).
func GPRFlops(n int) float64 {
	nf, d := float64(n), float64(GPRDim)
	fwd := CovFlops(nf, nf, d) + CholFlops(nf) + TriSolveFlops(nf, 1)
	bwd := TriSolveGradFlops(nf, 1) + nf*nf + CholGradFlops(n) + CovGradFlops(nf, nf, d, 0)
	return fwd + bwd
}
