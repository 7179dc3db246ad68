package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The exact GP's marginal likelihood by conjugate gradients (BBMM: Gardner et al. 2018, arXiv 1809.11165):
//
//	−log p(y) = ½ rᵀK̂⁻¹r + ½ log|K̂| + (n/2) log 2π,   K̂ = K + σ²I,   r = y − m(X)
//
// with K̂⁻¹r and the probe solves K̂⁻¹z_t from one run of MBCG, log|K̂| = log|P| + log|P⁻¹K̂| by the pivoted-Cholesky
// preconditioner P's exact log-determinant and stochastic Lanczos quadrature of the rest over seeded probes
// z_t = P^(1/2)w_t (E[w wᵀ] = I), and the gradient in every raw kernel hyperparameter θ and in σ²
//
//	∂/∂θ = −½ αᵀ(∂K)α + ½ tr(K̂⁻¹∂K),   ∂/∂σ² = −½ αᵀα + ½ tr(K̂⁻¹),   α = K̂⁻¹r,
//
// with the traces by Hutchinson's estimator from the same probe solves, less the preconditioner's own estimate
// and plus its exact trace (the control variate of Wenger, Pleiss, Hennig, Cunningham & Gardner 2022, "Preconditioning
// for Scalable Gaussian Process Hyperparameter Optimization", arXiv 2107.00243, as GPyTorch computes it):
//
//	tr(K̂⁻¹∂K̂) ≈ tr(P⁻¹∂P) + (1/T) Σ_t [ (K̂⁻¹z_t)ᵀ ∂K̂ (P⁻¹z_t) − (P⁻¹z_t)ᵀ ∂P (P⁻¹z_t) ],
//
// unbiased for any P, with ∂P the derivative of the Nyström preconditioner at its fixed pivots. Every product
// with K and ∂K goes through a KernelOperator, so that any covariance function, computed by blocks or held whole,
// on one machine or over several, plugs in.

// KernelOperator is a training set's kernel matrix K = K(X, X) [n,n] (noise excluded) seen through products: the
// only way the CG solver touches it. Package gp/cg implements it for every kernel of package gp by blocks of
// its fused covariance ops; package cluster over several machines.
type KernelOperator interface {
	// Bind fixes the training inputs x [n,d] (row-major; not copied: it must stay unchanged while bound) and the
	// kernel's raw hyperparameters (one slice per hyperparameter, sizes HyperSizes) for the calls that follow.
	Bind(x []float64, n, d int, hyper [][]float64) error
	// HyperSizes returns the number of raw values of each hyperparameter.
	HyperSizes() []int
	// Mul writes K·v into out for a block v [n,c] (row-major).
	Mul(v []float64, c int, out []float64) error
	// Diag writes diag K into out [n].
	Diag(out []float64) error
	// Row writes row i of K into out [n].
	Row(i int, out []float64) error
	// BilinearGrad adds Σ_ab (A·Bᵀ)_ab ∂K_ab/∂θ to dst[j][e] for every raw value θ = hyperparameter j's entry e,
	// for a, b [n,c].
	BilinearGrad(a, b []float64, c int, dst [][]float64) error
	// PivotGrad adds Σ_{i,p} U_ip ∂K[i, piv_p]/∂θ + Σ_{q,p} W_qp ∂K[piv_q, piv_p]/∂θ to dst for u [n,k], w [k,k]
	// (k = len(piv)): the gradient of a function of the columns K[:, piv] and of the block K[piv, piv].
	PivotGrad(piv []int, u, w []float64, dst [][]float64) error
}

// Probe kinds of CGConfig: the distribution of the base probes w_t (E[wwᵀ] = I).
const (
	ProbeRademacher = "rademacher" // entries ±1 with equal probability (the default)
	ProbeGaussian   = "gaussian"   // standard normal entries
	// ProbeBasis: √n·e_i for T distinct rows i drawn without replacement: with T = n, the traces and the
	// log-determinant are exact (a test's fixed probes).
	ProbeBasis = "basis"
)

// CGConfig configures a CGSolver. Zero values mean the defaults, GPyTorch's training settings.
type CGConfig struct {
	// Tol is the training solves' tolerance on every column's relative residual (default DefaultCGTol = 1);
	// MaxIters and MinIters bound the iterations (defaults DefaultCGMaxIters, DefaultCGMinIters).
	Tol                float64
	MaxIters, MinIters int
	// Probes is the number T of probe vectors (default DefaultProbes); Lanczos the number of Lanczos steps kept
	// for the quadrature (default DefaultLanczosSteps). Probe is the probes' kind (default ProbeRademacher).
	Probes, Lanczos int
	Probe           string
	// PrecondRank is the pivoted-Cholesky preconditioner's rank (default DefaultPrecondRank; negative: none),
	// used from PrecondMinRows training rows on (default DefaultPrecondMinRows; negative: always).
	PrecondRank, PrecondMinRows int
	// MaxPrecondRank bounds the rank an evaluation raises its preconditioner to when its solve stops at MaxIters
	// above Tol (default DefaultMaxPrecondRank; negative: never raised). The rank doubles and the evaluation runs
	// again with the same probes and start, until the solve converges or the rank reaches MaxPrecondRank (or the
	// rows); later evaluations keep the raised rank (CGStats.PrecondRaised counts the raises).
	MaxPrecondRank int
	// Seed seeds the probes: step s draws them from a generator keyed by (Seed, s), so runs are reproducible.
	Seed uint64
	// Strict makes a solve that reaches MaxIters above its tolerance an error (*NotConvergedError); otherwise it
	// is counted (CGStats.NotConverged) and its residual reported.
	Strict bool
}

// Defaults of CGConfig: GPyTorch's (num_trace_samples, max_lanczos_quadrature_iterations and
// min_preconditioning_size of linear_operator's settings) except the preconditioner's rank.
//
// DefaultPrecondRank is 100, where GPyTorch's max_preconditioner_size is 15 (GPyTorchPrecondRank): on kin40k's rows
// (SE-ARD, length-scales 1.5, noise variance 0.01, tolerance 1; `go run ./examples/exactgp --data DIR --n N
// --noise 0.01 --lengthscale 1.5 --precond-rank K --exact`) rank 100 took 20 CG iterations at N = 10,000 where rank
// 15 took 57–63, and 31–32 at N = 20,000 where rank 15 took 95–96, each evaluation 2–2.5× faster; and its estimate of
// −log p(y)/N was −0.30 to −0.23 at N = 10,000 against the exact −0.247, where rank 15's was −0.10 to −0.06 (20
// Lanczos steps resolve the log of a better-conditioned P⁻¹K̂ far better). The pivoted Cholesky and the
// preconditioner's solves cost O(N·k) per column and O(N·k²) per step: little beside the kernel products.
const (
	DefaultProbes         = 10
	DefaultLanczosSteps   = 20
	DefaultPrecondRank    = 100
	DefaultPrecondMinRows = 2000
	// GPyTorchPrecondRank is GPyTorch's default preconditioner rank (max_preconditioner_size), for comparisons
	// at its settings.
	GPyTorchPrecondRank = 15
	// DefaultMaxPrecondRank is the default of CGConfig.MaxPrecondRank. A solve that misses its tolerance within
	// the iteration cap leaves the gradient of that step wrong, and a stronger preconditioner is what helps (a
	// longer cap rarely does): on bike's 15,642 training rows (uci-regression-evans fold 0) at the hyperparameters
	// of gpzoo train's subset start (signal variance 6.6e7, noise variance 4.7e-5, SE-ARD), the targets' solve to
	// tolerance 1 stopped at 400 iterations with relative residual 2.1 at rank 100, and converged in 3 iterations at
	// rank 300 and 2 at 1000. 1000 is also the prediction solves' rank (gp/cg's DefaultPredictPrecondRank): O(N·k)
	// memory, 0.8 GB at 100,000 rows.
	DefaultMaxPrecondRank = 1000
)

// WithDefaults returns c with its zero fields set to the defaults; an error for invalid values.
func (c CGConfig) WithDefaults() (CGConfig, error) {
	if c.Tol < 0 || math.IsNaN(c.Tol) || math.IsInf(c.Tol, 0) || c.MaxIters < 0 || c.MinIters < 0 || c.Probes < 0 || c.Lanczos < 0 {
		return c, fmt.Errorf("ops: CGConfig: tolerance %v, iterations %d/%d, probes %d and Lanczos steps %d must be finite and ≥ 0", c.Tol, c.MinIters, c.MaxIters, c.Probes, c.Lanczos)
	}
	if c.Tol == 0 {
		c.Tol = DefaultCGTol
	}
	if c.MaxIters == 0 {
		c.MaxIters = DefaultCGMaxIters
	}
	if c.MinIters == 0 {
		c.MinIters = DefaultCGMinIters
	}
	if c.Probes == 0 {
		c.Probes = DefaultProbes
	}
	if c.Lanczos == 0 {
		c.Lanczos = DefaultLanczosSteps
	}
	if c.PrecondRank == 0 {
		c.PrecondRank = DefaultPrecondRank
	}
	if c.PrecondMinRows == 0 {
		c.PrecondMinRows = DefaultPrecondMinRows
	}
	if c.MaxPrecondRank == 0 {
		c.MaxPrecondRank = DefaultMaxPrecondRank
	}
	switch c.Probe = strings.ToLower(c.Probe); c.Probe {
	case "":
		c.Probe = ProbeRademacher
	case ProbeRademacher, ProbeGaussian, ProbeBasis:
	default:
		return c, fmt.Errorf("ops: CGConfig: unknown probe kind %q (want %s, %s or %s)", c.Probe, ProbeRademacher, ProbeGaussian, ProbeBasis)
	}
	return c, nil
}

// Options returns the CGOptions of the training solves.
func (c CGConfig) Options() CGOptions {
	return CGOptions{Tol: c.Tol, MaxIters: c.MaxIters, MinIters: c.MinIters, Lanczos: c.Lanczos}
}

// precondRank returns the preconditioner's configured rank for n rows (0: none).
func (c CGConfig) precondRank(n int) int {
	if c.PrecondRank < 0 || c.PrecondMinRows >= 0 && n < c.PrecondMinRows {
		return 0
	}
	return min(c.PrecondRank, n)
}

// raisedRank returns the rank after rank for n rows, or rank when it cannot be raised: no preconditioner, or
// MaxPrecondRank (or n) reached.
func (c CGConfig) raisedRank(rank, n int) int {
	if rank <= 0 || c.MaxPrecondRank <= rank {
		return rank
	}
	return max(rank, min(2*rank, c.MaxPrecondRank, n))
}

// trainRank returns the training solves' preconditioner rank for n rows: the configured one, or the rank an
// evaluation raised it to.
func (s *CGSolver) trainRank(n int) int {
	if s.rank > 0 {
		return min(s.rank, n)
	}
	return s.cfg.precondRank(n)
}

// RaisedRank returns the rank an evaluation raised the training solves' preconditioner to (0: not raised, the
// configured rank).
func (s *CGSolver) RaisedRank() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rank
}

// SetRaisedRank sets the training solves' preconditioner rank as if an evaluation had raised it (0: the configured
// one), as a resumed training run restores it.
func (s *CGSolver) SetRaisedRank(k int) {
	s.mu.Lock()
	s.rank = max(k, 0)
	s.mu.Unlock()
}

// CGProblem is one exact-GP system: the training inputs X [N,D] (row-major), the kernel's raw hyperparameters and
// the noise variance σ² of K̂ = K(X, X) + σ²I.
type CGProblem struct {
	X     []float64
	N, D  int
	Hyper [][]float64
	Noise float64
}

// CGStats describes a CGSolver's latest evaluation and counts its non-converged solves.
type CGStats struct {
	Iters int // CG iterations of the latest solve
	// Residual is the mean relative residual of the latest solve's columns (its stopping criterion), MaxResidual
	// the largest and DataResidual the largest of the targets' columns (K̂⁻¹r).
	Residual, MaxResidual, DataResidual float64
	Converged                           bool
	PrecondRank                         int // the preconditioner's rank (0: none)
	Evaluations                         int // evaluations so far
	NotConverged                        int // solves that reached MaxIters above their tolerance, so far
	// PrecondRaised counts the raises of the preconditioner's rank so far (CGConfig.MaxPrecondRank): each follows
	// a solve stopped by the iteration cap above its tolerance, run again at the raised rank (NotConverged counts
	// only the solves whose result was used).
	PrecondRaised int
}

// CGEval is one evaluation of −log p(y) and its gradient.
type CGEval struct {
	Loss float64
	// DataFit is rᵀK̂⁻¹r summed over the outputs, LogDet the estimate of log|K̂|.
	DataFit, LogDet float64
	// Alpha is K̂⁻¹r [N,P]: the loss's gradient with respect to r. GradNoise is ∂/∂σ², GradHyper[j] the gradient
	// of every raw value of hyperparameter j.
	Alpha     []float64
	GradNoise float64
	GradHyper [][]float64
	Stats     CGStats
}

// CGSolver evaluates an exact GP's negative log marginal likelihood and its gradient by mBCG, stochastic Lanczos
// quadrature and Hutchinson's estimator, through its KernelOperator; it keeps the latest K̂⁻¹r to start the next
// evaluation's solve from (a warm start) and statistics of its solves. Safe for concurrent use (calls are
// serialised).
type CGSolver struct {
	K   KernelOperator
	cfg CGConfig
	id  uint64

	mu    sync.Mutex
	warm  []float64 // K̂⁻¹r of the latest evaluation [N,P]
	rank  int       // the training solves' preconditioner rank once an evaluation has raised it (0: configured)
	stats CGStats
	stop  atomic.Pointer[<-chan struct{}] // SetStop's channel (nil: none)
}

// ErrStopped is wrapped by the error of a solve, an evaluation or a LOVE cache that ended because the channel
// given to SetStop was closed.
var ErrStopped = errors.New("ops: CG stopped")

// SetStop makes every later kernel product and preconditioner pivot of the solver fail with ErrStopped once stop
// is closed (nil: never), so that a long solve outside a training step (a prediction cache: hundreds of products
// of seconds each at 10⁵ rows) ends within one product of a signal.
func (s *CGSolver) SetStop(stop <-chan struct{}) {
	if stop == nil {
		s.stop.Store(nil)
		return
	}
	s.stop.Store(&stop)
}

// stopped reports ErrStopped once SetStop's channel is closed.
func (s *CGSolver) stopped() error {
	if p := s.stop.Load(); p != nil {
		select {
		case <-*p:
			return ErrStopped
		default:
		}
	}
	return nil
}

var cgSolverIDs atomic.Uint64

// NewCGSolver returns a solver over k with configuration c (zero fields: defaults).
func NewCGSolver(k KernelOperator, c CGConfig) (*CGSolver, error) {
	if k == nil {
		return nil, fmt.Errorf("ops: NewCGSolver: nil KernelOperator")
	}
	c, err := c.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &CGSolver{K: k, cfg: c, id: cgSolverIDs.Add(1)}, nil
}

// Config returns the solver's configuration (defaults filled in).
func (s *CGSolver) Config() CGConfig { return s.cfg }

// Stats returns the statistics of the latest evaluation and the counts so far.
func (s *CGSolver) Stats() CGStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// ResetWarmStart forgets the warm start (the next solve starts from zero).
func (s *CGSolver) ResetWarmStart() {
	s.mu.Lock()
	s.warm = nil
	s.mu.Unlock()
}

// SetWarmStart replaces the warm start by a copy of x (nil: none), as a resumed training run restores it; a
// start whose length is not the next evaluation's N·P is not used.
func (s *CGSolver) SetWarmStart(x []float64) {
	s.mu.Lock()
	s.warm = append([]float64(nil), x...) // nil when x is empty
	s.mu.Unlock()
}

// WarmStart returns a copy of the latest K̂⁻¹r (nil before the first evaluation).
func (s *CGSolver) WarmStart() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float64(nil), s.warm...)
}

func (pr CGProblem) check(op string) error {
	if pr.N <= 0 || pr.D <= 0 || len(pr.X) != pr.N*pr.D {
		return &ShapeError{Op: op, Want: fmt.Sprintf("inputs X of %d×%d values", pr.N, pr.D), Got: fmt.Sprint(len(pr.X))}
	}
	if !(pr.Noise > 0) || math.IsInf(pr.Noise, 0) {
		return &NonFiniteError{Where: op + " noise variance (must be positive and finite)", Value: pr.Noise}
	}
	return nil
}

// bind binds the problem to the operator and returns the pivoted-Cholesky preconditioner of rank rank (0: none)
// and K̂'s product.
func (s *CGSolver) bind(pr CGProblem, op string, rank int) (*LowRankPrecond, func(v, out []float64, c int) error, error) {
	if err := pr.check(op); err != nil {
		return nil, nil, err
	}
	sizes := s.K.HyperSizes()
	if len(pr.Hyper) != len(sizes) {
		return nil, nil, &ShapeError{Op: op, Want: fmt.Sprintf("%d hyperparameters", len(sizes)), Got: fmt.Sprint(len(pr.Hyper))}
	}
	for j, h := range pr.Hyper {
		if len(h) != sizes[j] {
			return nil, nil, &ShapeError{Op: op, Want: fmt.Sprintf("hyperparameter %d with %d values", j, sizes[j]), Got: fmt.Sprint(len(h))}
		}
		if err := CheckFinite(fmt.Sprintf("%s hyperparameter %d", op, j), h, 1); err != nil {
			return nil, nil, err
		}
	}
	if err := s.K.Bind(pr.X, pr.N, pr.D, pr.Hyper); err != nil {
		return nil, nil, err
	}
	n, noise := pr.N, pr.Noise
	apply := func(v, out []float64, c int) error {
		if err := s.stopped(); err != nil {
			return err
		}
		if err := s.K.Mul(v, c, out); err != nil {
			return err
		}
		for i, x := range v[:n*c] {
			out[i] += noise * x
		}
		return nil
	}
	var pre *LowRankPrecond
	if k := min(rank, n); k > 0 {
		var err error
		if pre, err = s.pivoted(n, k, noise); err != nil {
			return nil, nil, err
		}
	}
	return pre, apply, nil
}

// pivoted returns the pivoted-Cholesky preconditioner of rank k of the bound operator with noise σ².
func (s *CGSolver) pivoted(n, k int, noise float64) (*LowRankPrecond, error) {
	diag := make([]float64, n)
	if err := s.K.Diag(diag); err != nil {
		return nil, err
	}
	row := func(i int, out []float64) error {
		if err := s.stopped(); err != nil {
			return err
		}
		return s.K.Row(i, out)
	}
	l, piv, err := PivotedCholesky(n, k, diag, row)
	if err != nil {
		return nil, err
	}
	pre, err := NewLowRankPrecond(l, n, len(piv), noise)
	if err != nil {
		return nil, err
	}
	pre.Piv = piv
	return pre, nil
}

// probes returns the base probes w [n,t] of step step and their kind.
func (s *CGSolver) probes(n, t int, step uint64) []float64 {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, step^0x9e3779b97f4a7c15))
	w := make([]float64, n*t)
	switch s.cfg.Probe {
	case ProbeGaussian:
		for i := range w {
			w[i] = rng.NormFloat64()
		}
	case ProbeBasis:
		scale := math.Sqrt(float64(n))
		for j, i := range rng.Perm(n)[:t] {
			w[i*t+j] = scale
		}
	default:
		for i := range w {
			if rng.Uint64()&1 == 0 {
				w[i] = 1
			} else {
				w[i] = -1
			}
		}
	}
	return w
}

// Evaluate returns −log p(y) for the residual targets r [N,P] (y − m(X)) and its gradient, with the probes of
// step step (keyed by the solver's Seed and step). The targets' solve starts from the previous evaluation's
// solution when it has the same shape (a warm start).
func (s *CGSolver) Evaluate(pr CGProblem, r []float64, p int, step uint64) (*CGEval, error) {
	const op = "CG marginal likelihood"
	s.mu.Lock()
	defer s.mu.Unlock()
	n := pr.N
	if p <= 0 || len(r) != n*p {
		return nil, &ShapeError{Op: op, Want: fmt.Sprintf("targets of %d×P values", n), Got: fmt.Sprint(len(r))}
	}
	if err := CheckFinite(op+" targets", r, p); err != nil {
		return nil, err
	}
	t := s.cfg.Probes
	if s.cfg.Probe == ProbeBasis && t > n {
		return nil, fmt.Errorf("ops: %s: %d basis probes for %d rows", op, t, n)
	}
	c := p + t
	w := s.probes(n, t, step)
	st := CGStats{Evaluations: s.stats.Evaluations + 1, NotConverged: s.stats.NotConverged, PrecondRaised: s.stats.PrecondRaised}
	var (
		pre  *LowRankPrecond
		z, x []float64
		res  *CGResult
		err  error
	)
	for rank := s.trainRank(n); ; {
		var apply func(v, out []float64, c int) error
		if pre, apply, err = s.bind(pr, op, rank); err != nil {
			return nil, err
		}
		if z, x, res, err = s.evalSolve(pre, apply, r, w, n, p, t); err != nil {
			return nil, err
		}
		next := s.cfg.raisedRank(rank, n)
		if res.Converged || next == rank || pre != nil && pre.K < rank { // (a factor that stopped short is exact)
			break
		}
		st.PrecondRaised++ // run again with a stronger preconditioner: this solve is not used
		rank, s.rank = next, next
	}
	st.Iters, st.Converged = res.Iters, res.Converged
	st.Residual = res.MeanResidual()
	st.MaxResidual, _ = res.MaxResidual()
	for _, v := range res.Residuals[:p] {
		st.DataResidual = max(st.DataResidual, v)
	}
	if pre != nil {
		st.PrecondRank = pre.K
	}
	if !res.Converged {
		st.NotConverged++
		if s.cfg.Strict {
			s.stats = st
			return nil, res.Err(s.cfg.Tol)
		}
	}
	ev := &CGEval{Alpha: make([]float64, n*p), Stats: st}
	sol := make([]float64, n*t) // K̂⁻¹z_t
	for i := 0; i < n; i++ {
		copy(ev.Alpha[i*p:(i+1)*p], x[i*c:i*c+p])
		copy(sol[i*t:(i+1)*t], x[i*c+p:(i+1)*c])
	}
	for i, v := range r {
		ev.DataFit += v * ev.Alpha[i]
	}
	slq := 0.0
	for j, tri := range res.Tridiag {
		if len(tri.Diag) == 0 {
			continue // a zero probe
		}
		q, err := LanczosQuadrature(tri, math.Log)
		if err != nil {
			return nil, fmt.Errorf("ops: %s: probe %d: %w", op, j, err)
		}
		slq += res.StartNorm[j] * q
	}
	ev.LogDet = slq / float64(t)
	if pre != nil {
		ev.LogDet += pre.LogDet()
	}
	fp, fn := float64(p), float64(n)
	ev.Loss = 0.5*ev.DataFit + 0.5*fp*ev.LogDet + 0.5*fn*fp*math.Log(2*math.Pi)

	// Gradients. q_t = P⁻¹z_t (z_t itself without a preconditioner).
	q := z
	if pre != nil {
		q = make([]float64, n*t)
		pre.Solve(z, q, t)
	}
	ev.GradHyper = make([][]float64, len(pr.Hyper))
	for j, h := range pr.Hyper {
		ev.GradHyper[j] = make([]float64, len(h))
	}
	// −½ Σ_p α_pᵀ ∂K α_p + (P/2T) Σ_t s_tᵀ ∂K q_t as Σ (A·Bᵀ) ⊙ ∂K with A = [−½α | (P/2T)·S], B = [α | Q].
	am, bm := make([]float64, n*c), make([]float64, n*c)
	ct := fp / (2 * float64(t))
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			a := ev.Alpha[i*p+j]
			am[i*c+j], bm[i*c+j] = -0.5*a, a
		}
		for j := 0; j < t; j++ {
			am[i*c+p+j], bm[i*c+p+j] = ct*sol[i*t+j], q[i*t+j]
		}
	}
	if err := s.K.BilinearGrad(am, bm, c, ev.GradHyper); err != nil {
		return nil, err
	}
	aa, sq, qq := 0.0, 0.0, 0.0
	for _, v := range ev.Alpha {
		aa += v * v
	}
	for i, v := range sol {
		sq += v * q[i]
	}
	for _, v := range q {
		qq += v * v
	}
	ev.GradNoise = -0.5*aa + 0.5*fp*sq/float64(t)
	if pre != nil {
		ev.GradNoise += 0.5 * fp * (pre.TraceInv() - qq/float64(t))
		if pre.K > 0 {
			if err := s.precondGrad(pre, q, n, t, 0.5*fp, ev.GradHyper); err != nil {
				return nil, err
			}
		}
	}
	s.warm = append(s.warm[:0], ev.Alpha...)
	s.stats = st
	return ev, nil
}

// evalSolve runs Evaluate's batched solve of the targets r [n,p] and the probes z_t = P^(1/2)w_t (w [n,t]; z = w
// without a preconditioner) from the warm start, returning z, the solutions [n,p+t] and the run.
func (s *CGSolver) evalSolve(pre *LowRankPrecond, apply func(v, out []float64, c int) error, r, w []float64, n, p, t int) (z, x []float64, res *CGResult, err error) {
	c := p + t
	z = w
	if pre != nil {
		z = make([]float64, n*t)
		pre.Sqrt(w, z, t)
	}
	b := make([]float64, n*c)
	x = make([]float64, n*c)
	for i := 0; i < n; i++ {
		copy(b[i*c:], r[i*p:(i+1)*p])
		copy(b[i*c+p:], z[i*t:(i+1)*t])
		if len(s.warm) == n*p {
			copy(x[i*c:], s.warm[i*p:(i+1)*p])
		}
	}
	var precond func(r, z []float64, c int)
	if pre != nil {
		precond = pre.Solve
	}
	res, err = MBCG(apply, precond, b, x, n, c, p, s.cfg.Options())
	return z, x, res, err
}

// precondGrad adds to dst the gradient in the kernel's hyperparameters of scale·[tr(P⁻¹∂P) − (1/T) Σ_t q_tᵀ ∂P q_t]
// for the Nyström preconditioner P = σ²I + K[:,π] K[π,π]⁻¹ K[π,:] at fixed pivots π and q [n,T]: with C = K[:,π]
// K[π,π]⁻¹ = L·L_π⁻¹ and G = scale·(P⁻¹ − Q·Qᵀ/T) (symmetric), tr(G ∂P) = 2 tr(Cᵀ G ∂K[:,π]) − tr(CᵀGC ∂K[π,π]).
func (s *CGSolver) precondGrad(pre *LowRankPrecond, q []float64, n, t int, scale float64, dst [][]float64) error {
	k := pre.K
	// C = L·L_π⁻¹: L_πᵀ·Cᵀ = Lᵀ.
	lpi := make([]float64, k*k)
	for a, i := range pre.Piv {
		copy(lpi[a*k:(a+1)*k], pre.L[i*k:(i+1)*k])
	}
	lt := make([]float64, k*n) // Lᵀ, overwritten by Cᵀ
	CovTranspose(pre.L, n, k, nil, lt)
	TriSolveTo(lt, lpi, lt, k, n, false, true)
	cm := make([]float64, n*k)
	CovTranspose(lt, k, n, nil, cm)
	// GC = scale·(P⁻¹C − Q·(QᵀC)/T)
	gc := make([]float64, n*k)
	pre.Solve(cm, gc, k)
	qtc := make([]float64, t*k)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: t, Stride: t, Data: q}, blas64.General{Rows: n, Cols: k, Stride: k, Data: cm}, 0,
		blas64.General{Rows: t, Cols: k, Stride: k, Data: qtc})
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -1/float64(t), blas64.General{Rows: n, Cols: t, Stride: t, Data: q}, blas64.General{Rows: t, Cols: k, Stride: k, Data: qtc}, 1,
		blas64.General{Rows: n, Cols: k, Stride: k, Data: gc})
	u := make([]float64, n*k)
	for i, v := range gc {
		u[i] = 2 * scale * v
	}
	w := make([]float64, k*k) // −CᵀGC
	blas64.Gemm(blas.Trans, blas.NoTrans, -scale, blas64.General{Rows: n, Cols: k, Stride: k, Data: cm}, blas64.General{Rows: n, Cols: k, Stride: k, Data: gc}, 0,
		blas64.General{Rows: k, Cols: k, Stride: k, Data: w})
	return s.K.PivotGrad(pre.Piv, u, w, dst)
}

// Solve solves K̂·x = b for b [N,c] to the options' tolerance (zero fields: the solver's) from x0 (nil: zeros),
// preconditioned by a pivoted Cholesky of rank precondRank (0: the training solves' preconditioner; negative:
// none), by MBCGChecked: the result's residuals are b − K̂x itself, restarts counted. A run that does not converge
// returns its solution and result with a *NotConvergedError.
func (s *CGSolver) Solve(pr CGProblem, b []float64, c int, x0 []float64, o CGOptions, precondRank int) ([]float64, *CGResult, error) {
	const op = "CG solve"
	s.mu.Lock()
	defer s.mu.Unlock()
	if c <= 0 || len(b) != pr.N*c || x0 != nil && len(x0) != len(b) {
		return nil, nil, &ShapeError{Op: op, Want: fmt.Sprintf("right-hand sides (and a start) of %d×c values", pr.N), Got: fmt.Sprintf("%d and %d", len(b), len(x0))}
	}
	switch {
	case precondRank == 0:
		precondRank = s.trainRank(pr.N)
	case precondRank < 0:
		precondRank = 0
	}
	pre, apply, err := s.bind(pr, op, precondRank)
	if err != nil {
		return nil, nil, err
	}
	def := s.cfg.Options()
	if o.Tol <= 0 {
		o.Tol = def.Tol
	}
	if o.MaxIters <= 0 {
		o.MaxIters = def.MaxIters
	}
	if o.MinIters <= 0 {
		o.MinIters = 1
	}
	o.Lanczos = 0
	x := make([]float64, len(b))
	copy(x, x0)
	var precond func(r, z []float64, c int)
	if pre != nil {
		precond = pre.Solve
	}
	res, err := MBCGChecked(apply, precond, b, x, pr.N, c, o)
	if err != nil {
		return nil, nil, err
	}
	return x, res, res.Err(o.Tol)
}

// LOVE returns the variance cache R [c,N] (LOVECache) of K̂ for predictive variances k** − ‖R·k*‖²: the Galerkin
// approximation of K̂⁻¹ on the span of S = [U | Q], U the orthonormal basis of the columns of the pivoted-Cholesky
// factor of rank precondRank (0: none; the Nyström directions, which hold most of a cross-covariance k*) and Q
// the basis of rank steps of Lanczos on (I − UUᵀ)K̂(I − UUᵀ), with full reorthogonalisation, from a standard normal
// start drawn from a generator keyed by (the solver's Seed, seed). Without U it is LOVE (Pleiss et al. 2018): Q
// and its tridiagonal. The cost is one product of K̂ with U's r columns and rank products with one column.
func (s *CGSolver) LOVE(pr CGProblem, rank, precondRank int, seed uint64) ([]float64, int, error) {
	const op = "LOVE"
	s.mu.Lock()
	defer s.mu.Unlock()
	if rank < 0 || precondRank < 0 || rank+precondRank == 0 {
		return nil, 0, fmt.Errorf("ops: %s: ranks %d (Lanczos) and %d (preconditioner) must be ≥ 0, not both 0", op, rank, precondRank)
	}
	_, apply, err := s.bind(pr, op, 0)
	if err != nil {
		return nil, 0, err
	}
	n := pr.N
	var u, ku []float64 // U [n,r] and K̂U
	r := 0
	if precondRank > 0 {
		pre, err := s.pivoted(n, min(precondRank, n), pr.Noise)
		if err != nil {
			return nil, 0, err
		}
		u, _ = pre.Eigen()
		r = pre.Rank()
		ku = make([]float64, n*r)
		if r > 0 {
			if err := apply(u, ku, r); err != nil {
				return nil, 0, err
			}
		}
	}
	var q []float64
	var tri Tridiag
	if m := min(rank, n-r); m > 0 {
		rng := rand.New(rand.NewPCG(s.cfg.Seed, seed^0x10fe))
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		if q, tri, err = Lanczos(func(v, out []float64) error { return apply(v, out, 1) }, b, n, m, u); err != nil {
			return nil, 0, err
		}
	}
	m := len(tri.Diag)
	c := r + m
	sm, g := make([]float64, n*c), make([]float64, c*c)
	for i := 0; i < n; i++ {
		copy(sm[i*c:i*c+r], u[i*r:(i+1)*r])
		copy(sm[i*c+r:(i+1)*c], q[i*m:(i+1)*m])
	}
	// G = [[UᵀK̂U, (K̂U)ᵀQ], [Qᵀ(K̂U), T]]
	if r > 0 {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: ku}, blas64.General{Rows: n, Cols: c, Stride: c, Data: sm}, 0,
			blas64.General{Rows: r, Cols: c, Stride: c, Data: g[:r*c]})
		for a := 0; a < r; a++ {
			for b := a + 1; b < r; b++ { // UᵀK̂U symmetric: the average of its two triangles
				v := 0.5 * (g[a*c+b] + g[b*c+a])
				g[a*c+b], g[b*c+a] = v, v
			}
			for b := r; b < c; b++ {
				g[b*c+a] = g[a*c+b]
			}
		}
	}
	for i, d := range tri.Diag {
		g[(r+i)*c+r+i] = d
	}
	for i, e := range tri.Off {
		g[(r+i)*c+r+i+1], g[(r+i+1)*c+r+i] = e, e
	}
	rc, err := LOVECache(sm, g, n, c)
	if err != nil {
		return nil, 0, err
	}
	return rc, c, nil
}
