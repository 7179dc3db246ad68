package mcmc

// Density is a log density over ℝᵈ: the target of the sampler. Each chain calls its own Density from one
// goroutine.
type Density interface {
	// Dim returns d, the length of the points.
	Dim() int
	// LogDensity returns log π(x), up to an additive constant, and writes its gradient ∇ log π(x) into grad
	// (length d). At a point where π is zero or cannot be evaluated (outside a prior's support, a covariance
	// matrix that is not positive definite) it returns −Inf and no error: the sampler treats the move there as a
	// divergence and rejects it. An error stops the chain.
	LogDensity(x, grad []float64) (float64, error)
}
