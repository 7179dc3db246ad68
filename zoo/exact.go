package zoo

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// The exact GP (family gpr) by Cholesky or by conjugate gradients (package gp/cg), chosen by the number of
// training rows and a memory budget (cg.ChooseSolver).

// ExactOptions configures the exact GP's solver. Zero values mean the defaults.
type ExactOptions struct {
	// Solver is "auto" (the default: Cholesky while its fit takes at most Memory, conjugate gradients beyond),
	// "cholesky" or "cg".
	Solver string
	// Memory is the budget in bytes (default cg.DefaultMemory): of the Cholesky fit when choosing the solver, and
	// of the kernel matrix a CG fit keeps whole (beyond it the kernel is recomputed by blocks at every product).
	Memory int64
	// PrecondRank, Probes and CGTol are the CG training solves' pivoted-Cholesky rank (default
	// ops.DefaultPrecondRank = 100; negative: none), probe vectors (default 10) and tolerance (default 1): the
	// defaults of ops.CGConfig, GPyTorch's but for the rank.
	PrecondRank, Probes int
	CGTol               float64
	// MaxPrecondRank bounds the rank a capped training solve raises the preconditioner to (default
	// ops.DefaultMaxPrecondRank = 1000; negative: never raised, a capped solve stays a counted warning).
	MaxPrecondRank int
	// Subset is the number of rows of a CG fit's start (Wang et al. 2019): hyperparameters fitted by L-BFGS on
	// the Cholesky exact GP of at most Subset rows drawn at random (default DefaultSubset; negative: none, Adam
	// starts from the initial values), in at most SubsetIters L-BFGS iterations (default DefaultSubsetIters).
	Subset, SubsetIters int
	// LOVERank is the Lanczos rank of the CG model's variance cache (default cg.DefaultLOVERank).
	LOVERank int
	// ExactVariance computes a CG model's predictive variances by CG solves at each prediction instead of by its
	// LOVE cache (cg.Config.ExactVariance; the model file keeps the choice).
	ExactVariance bool

	solver, reason string        // resolved by resolveExact
	collapsed      *gp.Collapsed // the training rows' repeated inputs collapsed (collapseExact; nil: none repeat)
}

// Defaults of a CG fit.
const (
	DefaultSubset      = 4000
	DefaultSubsetIters = 100
	// DefaultCGIters is the number of Adam steps of a CG fit on all rows (after its subset start), and DefaultCGLR
	// their learning rate: as Wang et al. 2019, full-data steps refine the subset's hyperparameters. 30 (10
	// before): on keggdirected the estimate per row still rose from step 10 to step 30 (1.029 to 1.040) and the
	// test RMSE fell below SGPR's (docs/exact-gp-at-scale.md, "The number of Adam steps").
	DefaultCGIters = 30
	DefaultCGLR    = 0.1
	// DefaultLOVERank and DefaultLOVEPrecondRank are the CG model's variance cache's Lanczos vectors and
	// pivoted-Cholesky directions (gp/cg's defaults).
	DefaultLOVERank        = cg.DefaultLOVERank
	DefaultLOVEPrecondRank = cg.DefaultLOVEPrecondRank
)

// ExactStats are the numbers of an exact GP's fit (Result.Exact).
type ExactStats struct {
	Solver string `json:"solver"`           // "cholesky" or "cg"
	Reason string `json:"reason,omitempty"` // why (cg.ChooseSolver)
	// Rows and Distinct: the training rows and their distinct inputs, when some input repeats (the fit then runs
	// on the distinct inputs, exactly: gp.Replicates).
	Rows     int `json:"rows,omitempty"`
	Distinct int `json:"distinct_inputs,omitempty"`
	// A CG fit: its settings, how the kernel products ran, the subset start and the last training solve.
	Products       string  `json:"products,omitempty"`
	SubsetRows     int     `json:"subset_rows,omitempty"`
	SubsetIters    int     `json:"subset_iters,omitempty"`
	SubsetSeconds  float64 `json:"subset_seconds,omitempty"`
	CGIters        int     `json:"cg_iters,omitempty"`
	CGResidual     float64 `json:"cg_residual,omitempty"`
	CGNotConverged int     `json:"cg_not_converged,omitempty"`
	// PrecondRaised counts the raises of the training solves' preconditioner rank (ops.CGConfig.MaxPrecondRank)
	// and PrecondRank is the rank it ended at, when raised.
	PrecondRaised int `json:"precond_raised,omitempty"`
	PrecondRank   int `json:"precond_rank,omitempty"`
	// ProductsResent counts the products tasks sent to the workers again (a task or its answer lost in transit).
	ProductsResent int `json:"products_resent,omitempty"`
	// ProductsRejoined counts the products workers started again that took over their rows (RejoinWait).
	ProductsRejoined int `json:"products_rejoined,omitempty"`
	// The prediction cache: α's solve (iterations, relative residual), the LOVE rank, the seconds they took and
	// the prediction solves stopped by their cap.
	CacheIters    int     `json:"cache_iters,omitempty"`
	CacheResidual float64 `json:"cache_residual,omitempty"`
	// CacheDirect says why α and the predictive variances come from K̂'s Cholesky factorisation (within the memory
	// budget; gp/cg.GPR.CacheDirect): α's CG solve missed the prediction tolerance, or LOVE's variances failed
	// their check at training rows. CacheJitter is what the factorisation added to K̂'s diagonal.
	CacheDirect string  `json:"cache_direct,omitempty"`
	CacheJitter float64 `json:"cache_jitter,omitempty"`
	// LOVEChecked and LOVEExceeded: the training rows where the LOVE cache was checked and those where its latent
	// variance exceeded twice the bound of the exact one (gp/cg.GPR.LOVECheck).
	LOVEChecked   int     `json:"love_checked,omitempty"`
	LOVEExceeded  int     `json:"love_exceeded,omitempty"`
	LOVERank      int     `json:"love_rank,omitempty"`
	ExactVariance bool    `json:"exact_variance,omitempty"` // variances by CG solves at each prediction (ExactOptions.ExactVariance)
	CacheSeconds  float64 `json:"cache_seconds,omitempty"`
	// NoiseVariance is a CG fit's noise variance at the end (in the standardised targets' units where the fit
	// standardises them): with the CG iterations, what says how hard K̂ became to solve.
	NoiseVariance   float64 `json:"noise_variance,omitempty"`
	PredictWarnings int     `json:"predict_warnings,omitempty"`
}

func (o ExactOptions) check() error {
	switch strings.ToLower(o.Solver) {
	case "", cg.SolverAuto, cg.SolverCholesky, cg.SolverCG:
	default:
		return fmt.Errorf("%w: exact-GP solver %q (want auto, cholesky or cg)", ErrBadCustom, o.Solver)
	}
	if o.Memory < 0 || o.Probes < 0 || o.SubsetIters < 0 || o.LOVERank < 0 || o.CGTol < 0 || math.IsNaN(o.CGTol) || math.IsInf(o.CGTol, 0) {
		return fmt.Errorf("%w: exact-GP memory %d, probes %d, subset iterations %d, LOVE rank %d and CG tolerance %g must be ≥ 0 and finite", ErrBadCustom, o.Memory, o.Probes, o.SubsetIters, o.LOVERank, o.CGTol)
	}
	return nil
}

// collapseExact returns gpr's training set with its repeated inputs collapsed (gp.Collapse: one row per distinct
// input at the mean of its targets, c.Exact.collapsed keeping the counts and scatters): the exact GP with the
// Gaussian likelihood is the same on them (gp.Replicates), and its solves are those of the distinct inputs
// (keggdirected: 43,945 training rows, 14,575 distinct inputs). tr is returned unchanged where no input repeats,
// for other likelihoods (Laplace, EP: their sites are per row), with missing targets, and with MCMC (its
// posterior draws are models built without the replicates).
func collapseExact(tr *datasets.Dataset, c CustomConfig) (*datasets.Dataset, CustomConfig, error) {
	if c.Likelihood != "gaussian" || c.Inference != "" || c.MCMC != nil || tr.Observed != nil {
		return tr, c, nil
	}
	col, repeats, err := gp.Collapse(tr.X, tr.Y)
	if err != nil || !repeats {
		return tr, c, err
	}
	c.Exact.collapsed = col
	return &datasets.Dataset{Name: tr.Name, X: col.X, Y: col.Y, FeatureNames: tr.FeatureNames}, c, nil
}

// resolveExact chooses gpr's solver for n training rows and fills the defaults that depend on it: Cholesky fits
// by L-BFGS (200 iterations) unless asked for Adam, as before; CG fits take DefaultCGIters Adam steps at
// DefaultCGLR (L-BFGS is refused: its line search needs an exact objective).
func (c CustomConfig) resolveExact(n int) (CustomConfig, error) {
	asked := strings.ToLower(c.Exact.Solver)
	if c.Cluster != nil { // on workers, the exact GP runs by CG, the workers computing its kernel products
		if c.Cluster.Tau != 0 {
			return c, fmt.Errorf("%w: gpr on workers: τ = %d is for the asynchronous gradients of the families that are sums over rows; the kernel products are synchronous", ErrBadCustom, c.Cluster.Tau)
		}
		switch asked {
		case "", cg.SolverAuto:
			asked = cg.SolverCG
		case cg.SolverCholesky:
			return c, fmt.Errorf("%w: gpr on %d workers trains by conjugate gradients (their kernel products are what the workers share): not with the Cholesky solver", ErrBadCustom, c.Cluster.Workers)
		}
	}
	solver, reason, err := cg.ChooseSolver(asked, n, c.Exact.Memory)
	if err != nil {
		return c, fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	if c.Cluster != nil {
		reason = fmt.Sprintf("its kernel products on %d workers", c.Cluster.Workers)
	}
	if col := c.Exact.collapsed; col != nil {
		reason = fmt.Sprintf("%d training rows at %d distinct inputs, collapsed exactly; %s", col.N, n, reason)
	}
	c.Exact.solver, c.Exact.reason = solver, reason
	switch solver {
	case cg.SolverCholesky:
		if unused := c.cgOnly(); len(unused) > 0 { // auto chose Cholesky: say so rather than drop them silently
			c.Exact.reason += "; unused by Cholesky: " + strings.Join(unused, ", ")
		}
		if c.Optimizer == "" {
			c.Optimizer = "lbfgs"
		}
		if c.Iters <= 0 && c.MaxIters <= 0 {
			c.Iters = 200
		}
	case cg.SolverCG:
		switch c.Optimizer {
		case "":
			c.Optimizer = "adam"
		case "lbfgs":
			return c, fmt.Errorf("%w: gpr by conjugate gradients (%s) trains with adam: its objective is a stochastic estimate, which L-BFGS's line search cannot use", ErrBadCustom, reason)
		}
		if c.Iters <= 0 && c.MaxIters <= 0 {
			c.Iters = DefaultCGIters
		}
		if c.LR <= 0 {
			c.LR = DefaultCGLR
		}
	}
	if c.LR <= 0 {
		c.LR = 0.01
	}
	if c.Optimizer == "lbfgs" && c.MaxIters > 0 {
		return c, fmt.Errorf("%w: MaxIters is for Adam training; gpr's L-BFGS stops when it converges, within Iters iterations", ErrBadCustom)
	}
	if c.Optimizer == "lbfgs" && (c.CheckpointDir != "" || c.Resume) {
		return c, fmt.Errorf("%w: checkpoints are for Adam training, not gpr's L-BFGS (use --optimizer adam)", ErrBadCustom)
	}
	return c, nil
}

// cgOnly names the settings c gives that only a CG fit uses (its Adam rate, its solves', its variances), by
// gpzoo train's flag.
func (c CustomConfig) cgOnly() []string {
	var out []string
	e := c.Exact
	for _, s := range []struct {
		name string
		set  bool
	}{{"--lr", c.LR > 0}, {"--precond-rank", e.PrecondRank != 0}, {"--max-precond-rank", e.MaxPrecondRank != 0}, {"--probes", e.Probes != 0}, {"--cg-tol", e.CGTol != 0},
		{"--subset", e.Subset != 0 || e.SubsetIters != 0}, {"--love-rank", e.LOVERank != 0}, {"--variances exact", e.ExactVariance}} {
		if s.set {
			out = append(out, s.name)
		}
	}
	return out
}

// buildExact builds gpr's model on tr: gp.GPR (Cholesky), or cg.GPR with its subset start as the build's
// pretrain step.
func buildExact(tr *datasets.Dataset, c CustomConfig, kern gp.Kernel) (*customBuild, error) {
	e := c.Exact
	var reps *gp.Replicates
	stats := &ExactStats{Solver: e.solver, Reason: e.reason}
	if e.collapsed != nil {
		reps = e.collapsed.Replicates()
		stats.Rows, stats.Distinct = e.collapsed.N, tr.N()
	}
	if e.solver != cg.SolverCG {
		model, err := gp.NewGPR(gp.GPRConfig{Kernel: kern, NoiseVariance: c.NoiseVariance, X: tr.X, Y: tr.Y, Replicates: reps}) // it predicts from them
		if err != nil {
			return nil, err
		}
		return &customBuild{model: model, describe: fullBatch(c, "exact GP by Cholesky"), exact: stats}, nil
	}
	var (
		prod        *cluster.Products
		stopWorkers func() error
	)
	if cc := c.Cluster; cc != nil {
		var err error
		prod, stopWorkers, err = cluster.LocalProducts(cluster.LocalProductsConfig{
			Products: cluster.ProductsConfig{Run: cc.Run, Workers: cc.Workers, Kernel: kern, X: tr.X, Blocks: cg.BlocksOptions{Memory: -1},
				RejoinWait: cc.RejoinWait},
			URL: cc.URL, Security: cc.Security, Embedded: cc.Embedded, Identities: cc.Identities, Spawn: cc.Spawn})
		if err != nil {
			return nil, fmt.Errorf("zoo: the exact GP's products workers: %w", err)
		}
		stopAll := stopWorkers
		stopWorkers = func() error {
			stats.ProductsResent, stats.ProductsRejoined = prod.Resent(), prod.Rejoined()
			return stopAll()
		}
	}
	cfg := cg.Config{Kernel: kern, NoiseVariance: c.NoiseVariance, X: tr.X, Y: tr.Y, LOVERank: e.LOVERank, ExactVariance: e.ExactVariance, Replicates: reps,
		Solver: ops.CGConfig{Tol: e.CGTol, Probes: e.Probes, PrecondRank: e.PrecondRank, MaxPrecondRank: e.MaxPrecondRank, Seed: c.Seed},
		Blocks: cg.BlocksOptions{Memory: e.Memory}}
	if prod != nil { // the workers compute the products; the model's own blocks, only predictions' cross-covariances
		cfg.Operator, cfg.Blocks.Memory = prod, -1
	}
	model, err := cg.NewGPR(cfg)
	if err != nil {
		if stopWorkers != nil {
			stopWorkers()
		}
		return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	n := tr.N()
	switch {
	case prod != nil:
		stats.Products = prod.String()
	case model.Config().Blocks.Keeps(n):
		stats.Products = fmt.Sprintf("kernel matrix kept (%.0f MiB)", float64(n)*float64(n)*8/(1<<20))
	default:
		stats.Products = fmt.Sprintf("kernel recomputed by %d-row blocks at every product (K would take %.0f MiB)", model.Config().Blocks.Block, float64(n)*float64(n)*8/(1<<20))
	}
	b := &customBuild{model: model, exact: stats, describe: fmt.Sprintf("adam(%g), full batch, exact GP by conjugate gradients (%s)", c.LR, model.Describe()),
		hooks: []train.Hook{warmStart{model.Solver()}}, stopWorkers: stopWorkers}
	subset := e.Subset
	if subset == 0 {
		subset = DefaultSubset
	}
	if subset > 0 && n > subset {
		rows := "random rows (distinct inputs first)"
		if reps != nil {
			rows = "random distinct inputs with their replicates"
		}
		b.describe += fmt.Sprintf(", started from lbfgs by Cholesky on %d %s", subset, rows)
		if !c.Resume { // resumed, the checkpoint's Params replace what the start would fit: it ran before the checkpoint
			b.pretrain = func() error { return subsetStart(tr, c, model, subset, stats) }
		}
	}
	return b, nil
}

// warmStart carries a CG fit's solver state through Train's checkpoints, the targets' latest solution K̂⁻¹r (the
// warm start) and the preconditioner's rank as the evaluations raised it, so that a resumed fit starts its next
// solve from where the interrupted one would have, and ends as an uninterrupted fit does: a train.Hook that
// updates nothing, and train.Stateful.
type warmStart struct{ s *ops.CGSolver }

// solverState is warmStart's state: the warm start (none before the first evaluation) and the raised rank (0: the
// configured one). Checkpoints written before the rank hold the warm start alone.
type solverState struct {
	Warm []float64
	Rank int
}

func (warmStart) Claims() []*graph.Param          { return nil }
func (warmStart) AfterBackward(*train.Step) error { return nil }

// MarshalState encodes the solver's state.
func (w warmStart) MarshalState([]*graph.Param) ([]byte, error) {
	return train.EncodeState("the CG solver's state", solverState{Warm: w.s.WarmStart(), Rank: w.s.RaisedRank()})
}

// UnmarshalState restores the solver's state from MarshalState's bytes (or an older checkpoint's warm start).
func (w warmStart) UnmarshalState(_ []*graph.Param, data []byte) error {
	var st solverState
	if err := train.DecodeState("the CG solver's state", data, &st); err != nil {
		if train.DecodeState("the CG warm start", data, &st.Warm) != nil {
			return err
		}
	}
	if err := ops.CheckFinite("the CG warm start", st.Warm, 1); err != nil {
		return err
	}
	if st.Rank < 0 {
		return fmt.Errorf("zoo: the CG solver's state: preconditioner rank %d", st.Rank)
	}
	w.s.SetWarmStart(st.Warm)
	w.s.SetRaisedRank(st.Rank)
	return nil
}

// subsetStart fits the kernel's hyperparameters and the noise by L-BFGS on the Cholesky exact GP of subset rows
// of tr drawn without replacement (a generator of its own stream, seeded by c.Seed), rows of distinct inputs
// first (distinctFirst), sharing the CG model's kernel, then gives the CG model the fitted noise (Wang et al.
// 2019, §5: a subset's hyperparameters start the full-data fit). Where tr collapses repeated inputs, its rows are
// the distinct inputs and the subset's fit takes their replicates (gp.Replicates): the exact likelihood of every
// training row at the subset's inputs, their targets' scatter included.
func subsetStart(tr *datasets.Dataset, c CustomConfig, m *cg.GPR, subset int, stats *ExactStats) error {
	t0 := time.Now()
	idx := distinctFirst(tr.X, rand.New(rand.NewPCG(c.Seed, 0x5b5e7)).Perm(tr.N()), subset)
	slices.Sort(idx)
	var (
		sub  = &datasets.Dataset{}
		reps *gp.Replicates
		err  error
	)
	if col := c.Exact.collapsed; col != nil {
		sub.X, sub.Y, reps, err = col.Rows(idx)
	} else {
		sub, err = tr.Subset(idx)
	}
	if err != nil {
		return err
	}
	g, err := gp.NewGPR(gp.GPRConfig{Kernel: m.Kernel, NoiseVariance: m.NoiseVariance(), Replicates: reps})
	if err != nil {
		return err
	}
	iters := c.Exact.SubsetIters
	if iters == 0 {
		iters = DefaultSubsetIters
	}
	res, err := train.TrainLBFGS(g, sub.X, sub.Y, train.LBFGSConfig{Iters: iters, Stop: c.Stop, Logger: c.Logger, Progress: c.Progress})
	if err != nil {
		return fmt.Errorf("zoo: the exact GP's subset start (%d rows): %w", subset, err)
	}
	if err := m.Noise.SetRaw(g.Noise.Raw()); err != nil {
		return err
	}
	stats.SubsetRows, stats.SubsetIters, stats.SubsetSeconds = subset, res.Steps, time.Since(t0).Seconds()
	return nil
}

// distinctFirst returns k rows of x in the order perm visits them, keeping a row only if no kept row has the
// same input (bit for bit, gp.AppendInputKey), then, if fewer than k inputs are distinct, the rows it passed
// over in the same order. Where every input is distinct it is perm[:k]. A repeated input adds to a subset's fit
// only what its targets say about the noise: keggdirected's 43,945 training rows hold 14,575 distinct inputs,
// one of them 3,800 times, so 4,000 random rows hold about 2,100 distinct inputs where 4,000 distinct ones tell
// the start twice as much about the function (docs/exact-gp-at-scale.md, "keggdirected").
func distinctFirst(x *mat.Dense, perm []int, k int) []int {
	_, d := x.Dims()
	seen := make(map[string]struct{}, k)
	key := make([]byte, 0, 8*d)
	idx := make([]int, 0, k)
	var skipped []int
	for _, i := range perm {
		if len(idx) == k {
			break
		}
		key = gp.AppendInputKey(key[:0], x.RawRowView(i))
		if _, dup := seen[string(key)]; dup {
			skipped = append(skipped, i)
			continue
		}
		seen[string(key)] = struct{}{}
		idx = append(idx, i)
	}
	return append(idx, skipped[:min(k-len(idx), len(skipped))]...)
}

// finishExact fills the CG fit's statistics after training and computes its prediction cache (timed). Closing
// stop ends the cache's solves within one kernel product, with an error wrapping train.ErrInterrupted (a
// checkpointed fit resumes after its last step and builds the cache again).
func finishExact(b *customBuild, stop <-chan struct{}) error {
	m, ok := b.model.(*cg.GPR)
	if !ok {
		return nil
	}
	st := m.Solver().Stats()
	b.exact.CGIters, b.exact.CGResidual, b.exact.CGNotConverged = st.Iters, st.Residual, st.NotConverged
	if st.PrecondRaised > 0 {
		b.exact.PrecondRaised, b.exact.PrecondRank = st.PrecondRaised, st.PrecondRank
	}
	t0 := time.Now()
	m.Solver().SetStop(stop)
	err := m.Prepare()
	m.Solver().SetStop(nil)
	if errors.Is(err, ops.ErrStopped) {
		return fmt.Errorf("zoo: the exact GP's prediction cache, after %.0fs: %w", time.Since(t0).Seconds(), train.ErrInterrupted)
	}
	if err != nil {
		return fmt.Errorf("zoo: the exact GP's prediction cache: %w", err)
	}
	b.exact.CacheSeconds = time.Since(t0).Seconds()
	b.exact.CacheIters, b.exact.CacheResidual, b.exact.LOVERank, _ = m.CacheStats()
	b.exact.ExactVariance = m.Config().ExactVariance && b.exact.LOVERank == 0
	b.exact.CacheDirect, b.exact.CacheJitter = m.CacheDirect()
	b.exact.LOVEChecked, b.exact.LOVEExceeded = m.LOVECheck()
	b.exact.PredictWarnings = m.PredictWarnings()
	b.exact.NoiseVariance = m.NoiseVariance()
	return nil
}

// exactSummary is Summary's line of an exact GP's fit.
func (e *ExactStats) summary() string {
	s := fmt.Sprintf("  exact GP: %s (%s)", e.Solver, e.Reason)
	if e.Solver != cg.SolverCG {
		return s + "\n"
	}
	s += fmt.Sprintf("\n    %s", e.Products)
	if e.ProductsResent > 0 {
		s += fmt.Sprintf(" (%d tasks sent again: they or their answers were lost in transit)", e.ProductsResent)
	}
	if e.ProductsRejoined > 0 {
		s += fmt.Sprintf(" (%d workers started again took over their rows)", e.ProductsRejoined)
	}
	if e.SubsetRows > 0 {
		s += fmt.Sprintf("; subset start: %d L-BFGS iterations on %d rows in %.1fs", e.SubsetIters, e.SubsetRows, e.SubsetSeconds)
	}
	s += fmt.Sprintf("\n    last training solve: %d CG iterations, mean relative residual %.2g", e.CGIters, e.CGResidual)
	if e.CGNotConverged > 0 {
		s += fmt.Sprintf(" (%d solves stopped by the iteration cap above the tolerance)", e.CGNotConverged)
	}
	if e.PrecondRaised > 0 {
		s += fmt.Sprintf("; the preconditioner's rank raised %d times, to %d, after solves stopped by the cap", e.PrecondRaised, e.PrecondRank)
	}
	if e.CacheDirect != "" {
		s += fmt.Sprintf("\n    prediction cache: α and variances by K̂'s Cholesky factorisation (α's relative residual %.2g", e.CacheResidual)
		if e.CacheJitter > 0 {
			s += fmt.Sprintf(", jitter %.2g", e.CacheJitter)
		}
		s += fmt.Sprintf("): %s", e.CacheDirect)
		if e.LOVEExceeded > 0 {
			s += fmt.Sprintf(" (twice the bound at %d of %d)", e.LOVEExceeded, e.LOVEChecked)
		}
		s += fmt.Sprintf(", %.1fs", e.CacheSeconds)
	} else {
		s += fmt.Sprintf("\n    prediction cache: α in %d CG iterations (relative residual %.2g), ", e.CacheIters, e.CacheResidual)
		if e.ExactVariance {
			s += "variances by CG solves at each prediction"
		} else {
			s += fmt.Sprintf("LOVE rank %d", e.LOVERank)
		}
		s += fmt.Sprintf(", %.1fs", e.CacheSeconds)
		if e.LOVEExceeded > 0 {
			s += fmt.Sprintf("; LOVE's variances exceeded twice the noise bound at %d of %d training rows (overestimates; --variances exact computes them by CG solves)", e.LOVEExceeded, e.LOVEChecked)
		}
	}
	if e.PredictWarnings > 0 {
		s += fmt.Sprintf(" (%d prediction warnings: solves stopped above their tolerance, or LOVE failing its check)", e.PredictWarnings)
	}
	return s + "\n"
}
