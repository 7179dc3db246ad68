package cg

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Defaults of Config's prediction settings.
const (
	// DefaultLOVERank is the Lanczos rank of the LOVE variance cache (GPyTorch's max_root_decomposition_size).
	DefaultLOVERank = 100
	// DefaultLOVEPrecondRank is the rank of the pivoted Cholesky whose column space the LOVE cache holds beside
	// the Lanczos vectors (its rows cost O(N) kernel values each, and its directions one batched product; the
	// Lanczos steps, a product with K̂ each, are the expensive part).
	DefaultLOVEPrecondRank = 200
	// DefaultPredictTol is the relative residual to which the predictive mean's α = K̂⁻¹(y − m) is solved.
	DefaultPredictTol = 1e-6
	// DefaultPredictPrecondRank is the rank of the pivoted-Cholesky preconditioner of the prediction solves (α,
	// and ExactVariance's): a solve to DefaultPredictTol needs a much stronger preconditioner than the training
	// solves at tolerance 1, and it is built once per fit (O(N·k²) flops, N·k values, freed after the solve).
	// Measured on 10,001 rows of gpzoo synth fitted by gpzoo train (noise variance 0.0053): α took 166 CG
	// iterations at rank 200 (the larger of the LOVE and training ranks, the rule before), 47 at 500 and 16 at
	// 1000, and 51 s, 39 s and 26 s with the kernel matrix kept; with the kernel recomputed at every product
	// (≈10 s a product at 100,000 rows) the iterations are the cost.
	DefaultPredictPrecondRank = 1000
)

// Config configures GPR. Zero values mean defaults.
type Config struct {
	// Kernel is the prior covariance (required; any kernel of package gp that describes itself).
	Kernel gp.Kernel
	// Mean is the prior mean; nil means zero.
	Mean gp.MeanFunction
	// NoiseVariance is the initial noise variance σ² (default gp.DefaultNoiseVariance); NoiseFloor its lower
	// bound (default graph.DefaultPositiveFloor).
	NoiseVariance, NoiseFloor float64
	// X [N,D] and Y [N,P] are the training data predictions condition on (optional here; see SetTrainingData).
	X, Y *mat.Dense
	// Solver configures the training solves (ops.CGConfig: tolerance 1, at most 1000 iterations, 10 probes, 20
	// Lanczos steps, a rank-100 preconditioner from 2000 rows, by default: ops.DefaultPrecondRank).
	Solver ops.CGConfig
	// Blocks configures the kernel products (block size, the memory K may take when kept whole).
	Blocks BlocksOptions
	// Operator, when set, computes the solver's kernel products instead of the model's own Blocks (package
	// cluster's Products: the products of a run's workers); it must be K(X, X) of Kernel on the training inputs.
	// Predictions' cross-covariances stay on the model's Blocks.
	Operator ops.KernelOperator
	// LOVERank is the Lanczos rank of the predictive variances' LOVE cache (default DefaultLOVERank) and
	// LOVEPrecondRank the rank of the pivoted Cholesky whose directions it starts from (default
	// DefaultLOVEPrecondRank; negative: none, Lanczos on K̂ alone as Pleiss et al.: ops.CGSolver.LOVE); PredictTol
	// the tolerance of the predictive mean's solve
	// (default DefaultPredictTol). ExactVariance computes the predictive variances by CG solves to PredictTol
	// instead of LOVE (one solve per block of test rows).
	LOVERank, LOVEPrecondRank int
	PredictTol                float64
	ExactVariance             bool
	// PredictPrecondRank is the preconditioner's rank of the prediction solves (default
	// DefaultPredictPrecondRank; capped at the rows; negative: the larger of LOVEPrecondRank and the training
	// solves' rank, the rule of model files written before the field).
	PredictPrecondRank int
	// Replicates, when set, says the training data are collapsed repeated inputs (gp.Collapse): row j is the mean
	// of Counts[j] targets, with noise σ²/n_j. The solver then sees the homoscedastic system SKS + σ²I of the
	// scaled kernel (gp.Replicates), S = diag(√n); the training data must have the replicates' rows.
	Replicates *gp.Replicates
}

// GPR is exact Gaussian-process regression with Gaussian noise (P outputs sharing one kernel, as gp.GPR) whose
// marginal likelihood, gradient and predictions reach K̂ = K + σ²I only through products (BBMM, Gardner et al.
// 2018): it trains by gradient steps on the stochastic estimate of ops.CGSolver (its Loss is the graph op
// ops.CGLoss) and predicts the mean from a cached α = K̂⁻¹(y − m(X)) solved to a tight tolerance and the variances
// by LOVE (Pleiss et al. 2018) or exactly. Memory is O(N·(D + P + probes + rank)) beyond the kernel matrix, which
// is kept only when it fits BlocksOptions.Memory. It is a gp.Predictor and a gp.DataHolder.
type GPR struct {
	Kernel gp.Kernel
	Mean   gp.MeanFunction // nil: zero
	Noise  *graph.Param    // σ², scalar

	cfg    Config
	scale  []float64 // S's diagonal √n of the replicates (nil: none)
	blocks *Blocks
	solver *ops.CGSolver
	data   gp.TrainingSet

	mu    sync.RWMutex // the cache, and the blocks' binding while predictions read it
	cache *predCache
	warns atomic.Int64 // prediction solves that stopped above their tolerance, LOVE caches that failed their check (beyond the budget)
}

// predCache is what predictions read: α [N,P] and either the LOVE cache Rᵀ [N,c] (ops.LOVECache; nil with
// ExactVariance) or K̂'s Cholesky factor, for the parameters key (their raw values, kernel's then the mean's then
// σ²'s).
type predCache struct {
	key   []float64
	alpha []float64
	love  []float64
	rank  int     // c
	iters int     // CG iterations of α's solve
	resid float64 // its relative residual (the direct solve's, when direct)
	// chol is K̂'s lower Cholesky factor [N,N] (row-major; its strict upper triangle holds K̂'s) when the cache is
	// direct: α and the predictive variances then come from it (directFits), with jitter added to K̂'s diagonal.
	// direct says why: directCGMissed or directLOVEExceeds.
	chol   []float64
	white  []float64 // L⁻¹(y − m(X)) [N,P] of a direct cache: its means are (L⁻¹k*)ᵀ(L⁻¹(y − m(X))) (cholPredict)
	direct string
	jitter float64
	// loveChecked and loveExceeded: the LOVE cache's check at training rows (checkLOVE).
	loveChecked, loveExceeded int
}

// Why a prediction cache is direct (predCache.direct, GPR.CacheDirect).
const (
	directCGMissed    = "α's CG solve missed the prediction tolerance"
	directLOVEExceeds = "LOVE's variances exceeded the noise bound at training rows"
)

// LOVECheckRows is the number of training rows (evenly spaced) at which Prepare checks the LOVE cache's latent
// variances against the bound no exact posterior variance exceeds there (checkLOVE).
const LOVECheckRows = 256

var (
	_ gp.Predictor  = (*GPR)(nil)
	_ gp.DataHolder = (*GPR)(nil)
	_ gp.Cached     = (*GPR)(nil)
)

// noiseName is the name of the noise variance's Param (gp.GPR's).
const noiseName = "likelihood.variance"

// NewGPR returns a CG-trained exact GP.
func NewGPR(c Config) (*GPR, error) {
	if c.Kernel == nil {
		return nil, fmt.Errorf("%w: gp/cg: nil Kernel", gp.ErrConfig)
	}
	if c.LOVERank < 0 || c.PredictTol < 0 || math.IsNaN(c.PredictTol) || math.IsInf(c.PredictTol, 0) {
		return nil, fmt.Errorf("%w: gp/cg: LOVE rank %d and prediction tolerance %v must be ≥ 0 and finite", gp.ErrConfig, c.LOVERank, c.PredictTol)
	}
	if c.LOVERank == 0 {
		c.LOVERank = DefaultLOVERank
	}
	if c.LOVEPrecondRank == 0 {
		c.LOVEPrecondRank = DefaultLOVEPrecondRank
	}
	if c.PredictTol == 0 {
		c.PredictTol = DefaultPredictTol
	}
	if c.PredictPrecondRank == 0 {
		c.PredictPrecondRank = DefaultPredictPrecondRank
	}
	solverCfg, err := c.Solver.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("%w: gp/cg: %w", gp.ErrConfig, err)
	}
	c.Solver = solverCfg
	c.Blocks = c.Blocks.withDefaults()
	nv := c.NoiseVariance
	if nv == 0 {
		nv = gp.DefaultNoiseVariance
	}
	noise, err := graph.NewParam(noiseName, []float64{nv}, graph.Positive{Floor: c.NoiseFloor})
	if err != nil {
		return nil, fmt.Errorf("gp/cg: %w", err)
	}
	b, err := NewBlocks(c.Kernel, c.Blocks)
	if err != nil {
		return nil, err
	}
	var op ops.KernelOperator = b
	if c.Operator != nil {
		if !slices.Equal(c.Operator.HyperSizes(), b.HyperSizes()) {
			return nil, fmt.Errorf("%w: gp/cg: the operator's hyperparameter sizes %v are not the kernel's %v", gp.ErrConfig, c.Operator.HyperSizes(), b.HyperSizes())
		}
		op = c.Operator
	}
	var scale []float64
	if r := c.Replicates; r != nil {
		if err := r.Check("gp/cg", len(r.Counts), len(r.Scatter)); err != nil {
			return nil, err
		}
		scale = r.Scales()
		op = &scaled{base: op, s: scale}
	}
	s, err := ops.NewCGSolver(op, c.Solver)
	if err != nil {
		return nil, err
	}
	m := &GPR{Kernel: c.Kernel, Mean: c.Mean, Noise: noise, cfg: c, scale: scale, blocks: b, solver: s}
	if (c.X == nil) != (c.Y == nil) {
		return nil, fmt.Errorf("%w: gp/cg: X and Y must be both set or both nil", gp.ErrConfig)
	}
	if err := m.SetTrainingData(c.X, c.Y); err != nil {
		return nil, err
	}
	return m, nil
}

// Config returns the model's configuration (defaults filled in; Kernel, Mean and data as constructed).
func (m *GPR) Config() Config { return m.cfg }

// Solver returns the model's CG solver (its statistics: Stats).
func (m *GPR) Solver() *ops.CGSolver { return m.solver }

// Blocks returns the model's kernel blocks.
func (m *GPR) Blocks() *Blocks { return m.blocks }

// Params returns the kernel's, the mean's and the noise parameters.
func (m *GPR) Params() []*graph.Param {
	ps := slices.Clone(m.Kernel.Params())
	if m.Mean != nil {
		ps = append(ps, m.Mean.Params()...)
	}
	return append(ps, m.Noise)
}

// stepKey memoises the graph's step input.
type stepKey struct{}

// Loss returns the estimate of −log p(y | X) (the whole data set: train with full batches), the ops.CGLoss op
// over the kernel's raw hyperparameters, σ², the residual y − m(x) and the graph's gp.StepInput, which keys the
// probes (train.Train fills it; other callers leave it 0 or set it).
func (m *GPR) Loss(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	if s := x.Shape(); len(s) != 2 || s[1] != m.Kernel.InputDim() {
		return g.Fail(&ops.ShapeError{Op: "gp/cg.GPR", Want: fmt.Sprintf("x [N,%d]", m.Kernel.InputDim()), Got: fmt.Sprint(s)})
	}
	if s := y.Shape(); len(s) != 2 {
		return g.Fail(&ops.ShapeError{Op: "gp/cg.GPR", Want: "y [N,P]", Got: fmt.Sprint(s)})
	}
	r := y
	if m.Mean != nil {
		r = g.Sub(y, m.Mean.Mean(x))
	}
	if m.scale != nil {
		r = g.MulCol(r, g.Const("gp/cg.replicates", m.scale, len(m.scale)))
	}
	raw := make([]*graph.Node, 0, len(m.Kernel.Params()))
	for _, p := range m.Kernel.Params() {
		raw = append(raw, g.RawParam(p))
	}
	step := g.Memo(stepKey{}, func() *graph.Node { return g.Input(gp.StepInput) })
	loss := g.CGLoss(m.solver, x, r, g.Param(m.Noise), step, raw...)
	if reps := m.cfg.Replicates; reps != nil {
		loss = g.Sub(loss, gp.ReplicatesTerm(g, reps, g.Param(m.Noise), y.Shape()[1]))
	}
	return loss
}

// TrainStatus describes the latest evaluation's solve for the training loop's progress line: CG iterations, the
// mean and largest relative residuals and the targets' one, and the count of solves stopped by the iteration cap.
func (m *GPR) TrainStatus() string {
	st := m.solver.Stats()
	if st.Evaluations == 0 {
		return ""
	}
	s := fmt.Sprintf("CG %d it, residual %.2g (largest %.2g, y %.2g)", st.Iters, st.Residual, st.MaxResidual, st.DataResidual)
	if st.NotConverged > 0 {
		s += fmt.Sprintf(", %d not converged", st.NotConverged)
	}
	if st.PrecondRaised > 0 {
		s += fmt.Sprintf(", preconditioner raised to rank %d", st.PrecondRank)
	}
	return s
}

// Describe says how the model solves: the blocks' mode, the preconditioner, the probes and the tolerance.
func (m *GPR) Describe() string {
	c := m.cfg.Solver
	pre := "no preconditioner"
	n := 0
	if x, _ := m.data.Data(); x != nil {
		n, _ = x.Dims()
	}
	if c.PrecondRank > 0 && (c.PrecondMinRows < 0 || n >= c.PrecondMinRows) {
		pre = fmt.Sprintf("pivoted-Cholesky preconditioner of rank %d", c.PrecondRank)
	}
	kept := "kernel matrix kept"
	switch op := m.cfg.Operator; {
	case op != nil: // the operator's own words, when it has some
		kept = "kernel products by its operator"
		if s, ok := op.(fmt.Stringer); ok {
			kept = s.String()
		}
	case !m.cfg.Blocks.Keeps(n):
		kept = fmt.Sprintf("kernel recomputed by %d-row blocks", m.cfg.Blocks.Block)
	}
	return fmt.Sprintf("CG tolerance %g (≤ %d iterations), %d %s probes, %d Lanczos steps, %s, %s", c.Tol, c.MaxIters, c.Probes, c.Probe, c.Lanczos, pre, kept)
}

// TrainingData returns the training data the model predicts from (DataHolder; nil, nil when unset).
func (m *GPR) TrainingData() (x, y *mat.Dense) { return m.data.Data() }

// SetTrainingData copies the training data x [N,D] and y [N,P] into the model (DataHolder); the prediction cache
// is dropped.
func (m *GPR) SetTrainingData(x, y *mat.Dense) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cache = nil
	m.solver.ResetWarmStart()
	if err := m.data.Set("gp/cg.GPR", x, y, m.Kernel.InputDim()); err != nil {
		return fmt.Errorf("gp/cg: %w", err)
	}
	if x != nil && m.cfg.Replicates != nil {
		n, _ := x.Dims()
		_, p := y.Dims()
		if err := m.cfg.Replicates.Check("gp/cg.GPR", n, p); err != nil {
			m.data.Set("gp/cg.GPR", nil, nil, 0)
			return err
		}
	}
	return nil
}

// InputDim returns the kernel's input dimension D.
func (m *GPR) InputDim() int {
	if m == nil || m.Kernel == nil {
		return 0
	}
	return m.Kernel.InputDim()
}

// OutputDim returns P, the width of the training targets (the mean function's without data).
func (m *GPR) OutputDim() int {
	if m == nil {
		return 0
	}
	return m.data.OutputDim(m.Mean)
}

// PredictiveDim returns P (a Gaussian likelihood).
func (m *GPR) PredictiveDim() int { return m.OutputDim() }

// NoiseVariance returns the current σ².
func (m *GPR) NoiseVariance() float64 { return m.Noise.Value()[0] }

// Observations returns the number of observations the training rows stand for with Config.Replicates (0 without:
// one per row; train.Observations).
func (m *GPR) Observations() int { return m.cfg.Replicates.Observations() }

// key returns the raw values of every parameter prediction reads.
func (m *GPR) key() []float64 {
	var k []float64
	for _, p := range m.Params() {
		k = append(k, p.Raw()...)
	}
	return k
}

// problem returns the solver's system for the training data at the current parameters.
func (m *GPR) problem() ops.CGProblem {
	x, _ := m.data.Data()
	n, d := x.Dims()
	kp := m.Kernel.Params()
	hyper := make([][]float64, len(kp))
	for i, p := range kp {
		hyper[i] = p.Raw()
	}
	return ops.CGProblem{X: x.RawMatrix().Data, N: n, D: d, Hyper: hyper, Noise: m.NoiseVariance()}
}

// meanAt returns m(x) [N,P] (nil without a mean function) through a forward graph.
func (m *GPR) meanAt(x *mat.Dense) ([]float64, error) {
	if m.Mean == nil {
		return nil, nil
	}
	n, d := x.Dims()
	g := graph.New(graph.Options{})
	xn := g.Input("x", n, d)
	prog, err := g.CompileForward(map[string]*graph.Node{"m": m.Mean.Mean(xn)})
	if err != nil {
		return nil, fmt.Errorf("gp/cg: mean function: %w", err)
	}
	copy(prog.InputData("x"), mat.DenseCopyOf(x).RawMatrix().Data)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("gp/cg: mean function: %w", err)
	}
	return append([]float64(nil), prog.Output("m")...), nil
}

// Prepare computes the prediction cache for the current parameters and training data (α solved to PredictTol,
// from the latest training solve; the LOVE cache unless ExactVariance) unless it is current. Predict calls it;
// call it after training to pay for it once. The cache is made direct, α and the predictive variances then
// coming from K̂'s Cholesky factorisation (CacheDirect), when the factor fits the memory budget (directFits) and
// either α's CG solve misses PredictTol (at its iteration cap, or with b − K̂α above it where the recurrence
// said it was met: ops.MBCGChecked) or the LOVE cache fails its check at training rows (LOVECheck). Where the
// factor does not fit, the capped solve or the failed LOVE cache is used and counted (PredictWarnings), with the
// residual reached (CacheStats); a Strict solver makes the capped solve an error.
func (m *GPR) Prepare() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.prepareLocked()
}

func (m *GPR) prepareLocked() error {
	x, y := m.data.Data()
	if x == nil {
		return gp.ErrNoTrainingData
	}
	key := m.key()
	if m.cache != nil && slices.Equal(m.cache.key, key) {
		pr := m.problem() // the blocks bound to the training data, for the predictions that follow (a no-op if they are)
		return m.blocks.Bind(pr.X, pr.N, pr.D, pr.Hyper)
	}
	n, p := y.Dims()
	r, err := m.centredTargets()
	if err != nil {
		return err
	}
	pr := m.problem()
	x0 := m.solver.WarmStart()
	if len(x0) != n*p {
		x0 = nil
	}
	alpha, res, err := m.solver.Solve(pr, r, p, x0, ops.CGOptions{Tol: m.cfg.PredictTol, MaxIters: m.cfg.Solver.MaxIters}, m.predictRank())
	if err != nil && res == nil {
		return fmt.Errorf("gp/cg: predictive mean's solve: %w", err)
	}
	c := &predCache{key: key, alpha: alpha, iters: res.Iters}
	c.resid, _ = res.MaxResidual()
	if err != nil && m.directFits(n) { // CG missed the tolerance: solve directly where the factor fits
		if derr := m.directCache(c, pr, r, p, directCGMissed); derr != nil {
			return fmt.Errorf("gp/cg: predictive mean's solve: CG: %w; directly: %w", err, derr)
		}
		err = nil
	}
	if err != nil {
		if m.cfg.Solver.Strict {
			return fmt.Errorf("gp/cg: predictive mean's solve: %w", err)
		}
		m.warns.Add(1)
	}
	if err := m.blocks.Bind(pr.X, pr.N, pr.D, pr.Hyper); err != nil { // predictions' cross-covariances (the solver may have another operator)
		return err
	}
	if c.chol == nil && !m.cfg.ExactVariance {
		if err := m.buildLOVE(c, pr); err != nil {
			return err
		}
		if c.loveChecked, c.loveExceeded, err = m.checkLOVE(c); err != nil {
			return fmt.Errorf("gp/cg: LOVE cache's check: %w", err)
		}
		if c.loveExceeded > 0 {
			if !m.directFits(n) {
				m.warns.Add(1)
			} else {
				if err := m.directCache(c, pr, r, p, directLOVEExceeds); err != nil {
					return fmt.Errorf("gp/cg: predictive variances, directly: %w", err)
				}
				c.love, c.rank = nil, 0
			}
		}
	}
	m.cache = c
	return nil
}

// centredTargets returns y − m(X) [N,P] of the training data, S(y − m(X)) with replicates.
func (m *GPR) centredTargets() ([]float64, error) {
	x, y := m.data.Data()
	_, p := y.Dims()
	r := append([]float64(nil), y.RawMatrix().Data...)
	mx, err := m.meanAt(x)
	if err != nil {
		return nil, err
	}
	for i, v := range mx {
		r[i] -= v
	}
	scaleRows(r, p, m.scale)
	return r, nil
}

// buildLOVE computes c's LOVE cache Rᵀ [N,c] for the system pr (ops.CGSolver.LOVE).
func (m *GPR) buildLOVE(c *predCache, pr ops.CGProblem) error {
	r, rank, err := m.solver.LOVE(pr, m.cfg.LOVERank, max(m.cfg.LOVEPrecondRank, 0), 0)
	if err != nil {
		return fmt.Errorf("gp/cg: LOVE cache: %w", err)
	}
	c.love, c.rank = make([]float64, pr.N*rank), rank
	ops.CovTranspose(r, rank, pr.N, nil, c.love)
	return nil
}

// checkLOVE checks the LOVE cache c at LOVECheckRows evenly spaced training rows x_i (all when fewer), where no
// exact posterior variance of f exceeds b_i = σ_i²k_ii/(k_ii + σ_i²), σ_i² = σ²/n_i with replicates: conditioning
// on y_i alone already brings f_i's variance to b_i, and conditioning on more data only lowers it (R&W 2006, eq.
// 2.26). LOVE's Galerkin approximation only overestimates the exact variance, so a LOVE variance above b_i is wrong
// by at least its excess. It returns the rows checked and those whose LOVE variance exceeds 2·b_i: an error of at
// least the noise variance there. Prepare takes the direct factorisation (or counts a warning) when any row does:
// on keggdirected's collapsed fit (30 Adam steps) LOVE exceeded it at 8 of 256 rows, and its test log-likelihood
// was 0.662 where the exact variances give 0.672; on a nearly noiseless fit (bike, σ² ≈ 5e-5 beside a signal
// variance of 7e7) LOVE at rank 300 overestimated the latent variances at test rows by four orders of magnitude.
// The blocks must be bound to the training data.
func (m *GPR) checkLOVE(c *predCache) (checked, exceeded int, err error) {
	x, _ := m.data.Data()
	n, d := x.Dims()
	ns := min(n, LOVECheckRows)
	xd := make([]float64, ns*d)
	for k := 0; k < ns; k++ {
		copy(xd[k*d:(k+1)*d], x.RawRowView(k*n/ns))
	}
	out := make([]float64, ns*c.rank)
	love := c.love
	if m.scale != nil {
		love = append([]float64(nil), love...)
		scaleRows(love, c.rank, m.scale)
	}
	if err := m.blocks.CrossMul(xd, ns, love, c.rank, out, nil); err != nil {
		return 0, 0, err
	}
	kii := make([]float64, ns)
	if err := m.blocks.TestDiag(xd, ns, kii); err != nil {
		return 0, 0, err
	}
	v := append([]float64(nil), kii...)
	subtractSquares(v, out, c.rank, 0)
	noise := m.NoiseVariance()
	for k := range v {
		s2 := noise
		if m.scale != nil {
			s2 /= m.cfg.Replicates.Counts[k*n/ns]
		}
		if v[k] > 2*s2*kii[k]/(kii[k]+s2) {
			exceeded++
		}
	}
	return ns, exceeded, nil
}

// directFits reports whether a direct cache fits the memory budget: K̂'s Cholesky factor (n² values, computed in
// place and kept while the cache is current), beside K when the blocks keep it. A cluster's products
// (Config.Operator) never solve directly: the matrix is spread over the workers so that no machine holds it.
func (m *GPR) directFits(n int) bool {
	if m.cfg.Operator != nil || m.cfg.Blocks.Memory <= 0 {
		return false
	}
	need := int64(n) * int64(n) * 8
	if m.blocks.Kept() || m.cfg.Blocks.Keeps(n) {
		need *= 2
	}
	return need <= m.cfg.Blocks.Memory
}

// directCache factorises K̂ = K + σ²I in place (ops.CholeskyLowerInPlace, with its jitter retries), solves K̂α = r
// [n,p] by the factor and makes c direct for why: the factor (which the predictive variances then use), the jitter,
// and α with its largest relative residual ‖r − K̂α‖/‖r‖ over the columns (K̂ from the factor's untouched upper
// triangle). A direct cache predicts as the Cholesky GP (gp.GPR) does (cholPredict), also when a CG solve met its
// tolerance (why is directLOVEExceeds): on bike's fit (condition number near 1e16) CG's recurrence reported a
// relative residual below 1e-6 where the true one was 2.0e-3, and its α predicted the test rows with standardised
// RMSE 0.0108, the direct cache 0.0105 and gp.GPR 0.0103.
func (m *GPR) directCache(c *predCache, pr ops.CGProblem, r []float64, p int, why string) error {
	n := pr.N
	if err := m.blocks.Bind(pr.X, pr.N, pr.D, pr.Hyper); err != nil {
		return err
	}
	a := make([]float64, n*n)
	if err := m.blocks.Dense(a); err != nil {
		return err
	}
	for i, si := range m.scale { // SKS
		for j, sj := range m.scale {
			a[i*n+j] *= si * sj
		}
	}
	diag := make([]float64, n) // K̂'s diagonal, which the factor overwrites
	for i := range diag {
		a[i*n+i] += pr.Noise
		diag[i] = a[i*n+i]
	}
	info, err := ops.CholeskyLowerInPlace(a, n, ops.JitterPolicy{})
	if err != nil {
		return err
	}
	white, alpha := make([]float64, n*p), make([]float64, n*p)
	ops.TriSolveTo(white, a, r, n, p, false, false)    // L⁻¹r
	ops.TriSolveTo(alpha, a, white, n, p, false, true) // L⁻ᵀL⁻¹r
	// α's largest relative residual: K̂α from the upper triangle, whose diagonal now holds L's, plus (K̂_ii − L_ii)α_i.
	ka := make([]float64, n*p)
	blas64.Symm(blas.Left, 1, blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: a}, blas64.General{Rows: n, Cols: p, Stride: p, Data: alpha}, 0,
		blas64.General{Rows: n, Cols: p, Stride: p, Data: ka})
	num, den := make([]float64, p), make([]float64, p)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			e := r[i*p+j] - ka[i*p+j] - (diag[i]-a[i*n+i])*alpha[i*p+j]
			num[j] += e * e
			den[j] += r[i*p+j] * r[i*p+j]
		}
	}
	resid := 0.0
	for j := range num {
		if den[j] > 0 {
			resid = max(resid, math.Sqrt(num[j]/den[j]))
		}
	}
	c.alpha, c.resid, c.white, c.chol, c.direct, c.jitter = alpha, resid, white, a, why, info.Jitter
	return nil
}

// predictRank is the preconditioner's rank of the prediction solves: PredictPrecondRank, or the LOVE cache's or
// the training solves' rank when larger (a strong preconditioner matters at a tight tolerance).
func (m *GPR) predictRank() int {
	r := max(m.cfg.PredictPrecondRank, m.cfg.LOVEPrecondRank, m.cfg.Solver.PrecondRank)
	if r <= 0 {
		return -1
	}
	return r
}

// CacheStats reports the prediction cache's α solve (iterations, relative residual) and the LOVE cache's rank
// (the pivoted-Cholesky directions and the Lanczos steps; 0: none).
func (m *GPR) CacheStats() (iters int, residual float64, loveRank int, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.cache == nil {
		return 0, 0, 0, false
	}
	return m.cache.iters, m.cache.resid, m.cache.rank, true
}

// CacheDirect reports why the prediction cache's α and predictive variances come from a Cholesky factorisation of
// K̂ ("" when they come from CG and LOVE): α's CG solve missed the prediction tolerance, or LOVE's variances failed
// their check at training rows (LOVECheck), and the factor fitted the memory budget. jitter is what the
// factorisation added to K̂'s diagonal.
func (m *GPR) CacheDirect() (why string, jitter float64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.cache == nil {
		return "", 0
	}
	return m.cache.direct, m.cache.jitter
}

// LOVECheck reports the prediction cache's check of its LOVE variances (checkLOVE): the training rows checked
// and those where LOVE's latent variance exceeded twice the bound σ²k_ii/(k_ii + σ²) of the exact one (0, 0
// when no LOVE cache was built). Any row exceeding makes the cache direct where it fits the memory
// budget, a counted warning (PredictWarnings) where it does not.
func (m *GPR) LOVECheck() (checked, exceeded int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.cache == nil {
		return 0, 0
	}
	return m.cache.loveChecked, m.cache.loveExceeded
}

// PredictWarnings returns the number of prediction solves that stopped above their tolerance and of LOVE caches
// that failed their check where the direct factorisation did not fit the memory budget (LOVECheck).
func (m *GPR) PredictWarnings() int { return int(m.warns.Load()) }

// ensure makes the cache current, the blocks bound to the training data, and returns with the read lock held
// (release it with m.mu.RUnlock).
func (m *GPR) ensure() error {
	for {
		if err := m.Prepare(); err != nil {
			return err
		}
		m.mu.RLock()
		if m.cache != nil && slices.Equal(m.cache.key, m.key()) {
			return nil
		}
		m.mu.RUnlock()
	}
}
