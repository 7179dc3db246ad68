package train

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Optimizer updates Params in place from their gradients (same order). step is 0-based.
type Optimizer interface {
	Step(step int, params []*graph.Param, grads [][]float64) error
}

// Hook acts after each forward/backward pass and before the Optimizer. A hook may update Params itself (a
// natural-gradient step on q(u), for example) and claim them, so the Optimizer leaves them alone.
type Hook interface {
	// Claims returns the Params this hook updates; the Optimizer skips them.
	Claims() []*graph.Param
	// AfterBackward is called once per step with the step's program (loss and gradients are current).
	AfterBackward(s *Step) error
}

// Step is what hooks see of the current step.
type Step struct {
	Index int // 0-based
	Loss  float64
	// Grads holds the loss's gradient of every Param it differentiates (nil for the others), as mutable slices:
	// a hook may edit them before the Optimizer reads them (BasisGrowth masks inactive bases).
	Grads Gradients
	// Program is the step's program (nil when the gradients were assembled elsewhere, as on a cluster's
	// parameter server: a hook that needs the batch's inputs then fails).
	Program *graph.Program
}

// Gradients is where a step's gradients come from: a compiled *graph.Program, or a parameter server's sum.
type Gradients interface {
	// Grad returns the gradient of p's raw value (nil when p is not differentiated).
	Grad(p *graph.Param) []float64
}

// GradMap is Gradients held in a map.
type GradMap map[*graph.Param][]float64

// Grad returns m[p].
func (m GradMap) Grad(p *graph.Param) []float64 { return m[p] }

// Updater applies one step's update as Train does: the hooks in order (a hook may update and claim Params, or
// edit the gradients), then the Optimizer on the Params no hook claims. A cluster's parameter server applies a
// model's optimisation through it exactly as single-process training does.
type Updater struct {
	optimizer Optimizer
	hooks     []Hook
	opt       []*graph.Param
	grads     [][]float64
}

// NewUpdater returns the Updater of params (the Params the loss differentiates) with optimizer (nil: Adam with
// its defaults) and hooks.
func NewUpdater(params []*graph.Param, optimizer Optimizer, hooks []Hook) *Updater {
	claimed := map[*graph.Param]bool{}
	for _, h := range hooks {
		for _, q := range h.Claims() {
			claimed[q] = true
		}
	}
	u := &Updater{optimizer: optimizer, hooks: hooks}
	if u.optimizer == nil {
		u.optimizer = &Adam{}
	}
	for _, q := range params {
		if !claimed[q] {
			u.opt = append(u.opt, q)
		}
	}
	u.grads = make([][]float64, len(u.opt))
	return u
}

// Optimizer returns the Updater's Optimizer; OptimizedParams the Params it updates (trainable, unclaimed).
func (u *Updater) Optimizer() Optimizer            { return u.optimizer }
func (u *Updater) OptimizedParams() []*graph.Param { return u.opt }

// Hooks returns the Updater's hooks.
func (u *Updater) Hooks() []Hook { return u.hooks }

// Apply runs the hooks on s, then the Optimizer on s's gradients of the unclaimed Params.
func (u *Updater) Apply(s *Step) error {
	for _, h := range u.hooks {
		if err := h.AfterBackward(s); err != nil {
			return fmt.Errorf("hook: %w", err)
		}
	}
	for i, q := range u.opt {
		u.grads[i] = s.Grads.Grad(q)
	}
	return u.optimizer.Step(s.Index, u.opt, u.grads)
}

// Config configures Train. Zero values mean the documented defaults.
type Config struct {
	// Iters is the number of steps (required, > 0): exactly Iters steps without Converge, at most Iters with it.
	Iters int
	// Converge, if set, stops training early when the smoothed loss has converged (ConvergeConfig), capped by
	// Iters; nil runs exactly Iters steps. Result.StopReason says which happened.
	Converge *ConvergeConfig
	// BatchSize is the fixed minibatch size; 0 means the whole data set every step.
	BatchSize int
	// Optimizer updates the trainable, unclaimed Params; nil means Adam with its defaults.
	Optimizer Optimizer
	// Hooks run after every backward pass, in order.
	Hooks []Hook
	// EvalEvery > 0 calls Eval after every EvalEvery steps and after the last one (the step Converge stopped at).
	EvalEvery int
	// Eval computes metrics (e.g. test RMSE) for the current parameters.
	Eval func(step int) (map[string]float64, error)
	// Logger receives structured progress records every LogEvery steps (nil: none).
	Logger *slog.Logger
	// LogEvery is the logging period in steps; 0 means Iters/10 (at least 1).
	LogEvery int
	// Progress, if set, receives a one-line progress display redrawn in place (for terminals). On a file (a
	// terminal) the line is redrawn at most every 0.1 s and at the last step; any other writer receives every
	// step's line.
	Progress io.Writer
	// Graph configures the training graph (Cholesky jitter policy).
	Graph graph.Options
	// Checkpoint, if set, saves checkpoints (and resumes from one): see CheckpointConfig and checkpoint.go.
	Checkpoint *CheckpointConfig
	// Stop, when closed (e.g. ctx.Done() of signal.NotifyContext for SIGINT/SIGTERM), makes Train finish the
	// current step, save a checkpoint if Checkpoint is set, and return the partial Result with an error
	// wrapping ErrInterrupted. Train checks it before every step and installs no signal handler itself.
	Stop <-chan struct{}
}

// StatusReporter is a model that describes the state of its latest loss evaluation in a few words (the CG exact
// GP of package gp/cg: its solve's iterations and residuals): Train appends it to the progress line and to the
// log records.
type StatusReporter interface {
	TrainStatus() string
}

// Observations is a model whose training rows stand for more observations than there are rows (an exact GP on
// collapsed repeated inputs: gp.Replicates): Train and TrainLBFGS report its objective per observation, and
// Train's convergence test scales by them.
type Observations interface {
	Observations() int
}

// observations returns the observations n training rows of m stand for (n unless m is Observations).
func observations(m any, n int) int {
	if o, ok := m.(Observations); ok && o.Observations() > 0 {
		return o.Observations()
	}
	return n
}

// Eval is one evaluation record.
type Eval struct {
	Step    int
	Seconds float64 // training seconds at the evaluation (time spent in evaluations excluded)
	Metrics map[string]float64
}

// Result summarises a training run.
type Result struct {
	Steps  int
	Losses []float64 // loss at every step (before that step's update)
	// Times are the training seconds at the end of every step (wall time since the first step; a resumed run
	// continues the interrupted run's clock). Unlike Losses they differ between runs.
	Times          []float64
	Seconds        float64 // wall time of the steps (graph building excluded)
	BuildSeconds   float64
	SecondsPerIter float64
	Evals          []Eval
	Cholesky       ops.CholeskyStatsSnapshot
	// Evaluations counts TrainLBFGS's runs of the objective and its gradient (one per point the line searches
	// try; 0 for Train, whose steps are one run each).
	Evaluations int
	// StopReason says why training ended: StopIterations (Iters steps, no criterion), StopConverged,
	// StopIterationCap (Iters steps with Converge), StopInterrupted or StopError (TrainLBFGS: StopConverged,
	// StopIterationCap, StopNoProgress or StopError).
	StopReason StopReason
}

// FinalLoss returns the last recorded loss (NaN if none).
func (r *Result) FinalLoss() float64 {
	if len(r.Losses) == 0 {
		return math.NaN()
	}
	return r.Losses[len(r.Losses)-1]
}

// Train fits m to (x [N,D], y [N,P]) with minibatches drawn from rng: it minimises Loss, m's loss plus −log p(θ)
// of the Params with priors (a MAP fit; a *graph.SupportError when a Param starts outside its prior's support).
// It returns the partial Result with the error when training stops early.
//
// With cfg.Checkpoint set it saves checkpoints; with cfg.Checkpoint.Resume it first restores the checkpoint
// (fresh model, rng and sources built from the same seeds are expected) and runs the remaining steps: the
// resumed Result's Steps and Losses, and the final Params, equal an uninterrupted run's bit for bit. Its
// Seconds, SecondsPerIter and Cholesky statistics cover only the steps run by this call. Checkpoint errors
// are *CheckpointError (wrapping ErrNoCheckpoint, ErrCheckpointCorrupt, ErrCheckpointTruncated,
// ErrCheckpointVersion, ErrCheckpointMismatch or ErrCheckpointConfig); a failed periodic save stops training.
//
// With cfg.Converge set, training stops at the end of the step after which the criterion is met (at most
// Iters steps); the criterion depends only on the losses, so a resumed run stops at the same step.
func Train(m gp.Model, x, y *mat.Dense, rng *rand.Rand, cfg Config) (*Result, error) {
	if m == nil || x == nil || y == nil || rng == nil {
		return nil, errors.New("train: Train: nil model, data or rng")
	}
	n, d := x.Dims()
	ny, p := y.Dims()
	if n != ny {
		return nil, &ops.ShapeError{Op: "train.Train", Want: "x and y with the same number of rows", Got: fmt.Sprintf("%d and %d", n, ny)}
	}
	if cfg.Iters <= 0 {
		return nil, fmt.Errorf("train: Iters must be positive, got %d", cfg.Iters)
	}
	if err := graph.CheckPriorSupport(m.Params()); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	var conv *converger
	if cfg.Converge != nil {
		cc, err := cfg.Converge.withDefaults()
		if err != nil {
			return nil, err
		}
		conv = newConverger(cc, observations(m, n))
	}
	batch := cfg.BatchSize
	if batch == 0 {
		batch = n
	}
	if batch < 1 || batch > n {
		return nil, fmt.Errorf("train: BatchSize %d outside 1..%d", cfg.BatchSize, n)
	}
	if ck := cfg.Checkpoint; ck != nil {
		if err := ck.validate(batch, n); err != nil {
			return nil, err
		}
		if !ck.Resume {
			if err := os.MkdirAll(ck.Dir, 0o755); err != nil {
				return nil, &CheckpointError{Path: filepath.Join(ck.Dir, CheckpointFile), Detail: "creating Dir", Err: err}
			}
		}
	}
	sampler, err := datasets.NewSampler(n, batch, rng)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	t0 := time.Now()
	g := graph.New(cfg.Graph)
	xn := g.Input("x", batch, d)
	yn := g.Input("y", batch, p)
	prog, err := g.Compile(Loss(m, xn, yn), nil)
	if err != nil {
		return nil, fmt.Errorf("train: building the loss: %w", err)
	}
	defer prog.Close()
	res := &Result{BuildSeconds: time.Since(t0).Seconds()}

	up := NewUpdater(prog.Params(), cfg.Optimizer, cfg.Hooks)
	optimizer, opt := up.Optimizer(), up.OptimizedParams()
	all := prog.Params()
	var ckpt *checkpointer
	first := 0
	if cfg.Checkpoint != nil {
		ckpt = &checkpointer{cfg: cfg.Checkpoint, path: filepath.Join(cfg.Checkpoint.Dir, CheckpointFile),
			iters: cfg.Iters, batch: batch, n: n, d: d, p: p, params: prog.AllParams(), optPs: opt, trained: all,
			opt: optimizer, hooks: cfg.Hooks, sampler: sampler}
		if conv != nil {
			ckpt.conv = &conv.cfg
		}
		if cfg.Checkpoint.Resume {
			// After NewSampler and the graph build (which may draw from the sources), so the restored states win.
			done, saved, err := ckpt.restore()
			if err != nil {
				return nil, err
			}
			first = done
			res.Steps, res.Losses, res.Evals, res.Times = saved.Steps, saved.Losses, saved.Evals, saved.Times
			if conv != nil { // the criterion's state is a function of the losses, which the checkpoint holds
				for _, l := range res.Losses {
					conv.add(l)
				}
			}
		}
	}
	good := graph.SnapshotRaw(all)
	logEvery := cfg.LogEvery
	if logEvery <= 0 {
		logEvery = max(1, cfg.Iters/10)
	}
	xb := mat.NewDense(batch, d, prog.InputData("x"))
	yb := mat.NewDense(batch, p, prog.InputData("y"))
	bin, err := BatchInputsOf(prog, batch)
	if err != nil {
		return nil, err
	}
	idx := make([]int, batch)
	for i := range idx {
		idx[i] = i // the whole data set, in order, when batch == n
	}
	start := time.Now()
	drawn := math.Inf(-1) // when the progress line was last drawn
	every := 0.0          // the least interval between two redraws
	if _, ok := cfg.Progress.(*os.File); ok {
		every = progressEvery
	}
	clock0 := 0.0 // the interrupted run's training seconds, when resuming
	if n := len(res.Times); n > 0 {
		clock0 = res.Times[n-1]
	}
	res.StopReason = StopIterations
	switch {
	case conv != nil && conv.done: // resumed from the checkpoint saved when the criterion stopped the run
		res.StopReason = StopConverged
	case conv != nil:
		res.StopReason = StopIterationCap
	}
	for step := first; step < cfg.Iters && res.StopReason != StopConverged; step++ {
		if stopped(cfg.Stop) {
			res.StopReason = StopInterrupted
			where := ""
			if ckpt != nil {
				if err := ckpt.save(step, res); err != nil {
					return res, fmt.Errorf("train: stopping after %d steps: %w", step, err)
				}
				where = " (checkpoint " + ckpt.path + ")"
			}
			if cfg.Progress != nil {
				fmt.Fprintln(cfg.Progress)
			}
			res.Seconds = time.Since(start).Seconds()
			return res, fmt.Errorf("train: stopped after %d of %d steps%s: %w", step, cfg.Iters, where, ErrInterrupted)
		}
		if batch == n {
			xb.Copy(x)
			yb.Copy(y)
		} else {
			idx = sampler.Next(idx)
			datasets.GatherRows(xb, x, idx)
			datasets.GatherRows(yb, y, idx)
		}
		bin.Set(step, idx)
		if err := prog.Run(); err != nil {
			graph.RestoreRaw(all, good)
			res.StopReason = StopError
			return res, fmt.Errorf("train: step %d: %w", step, err)
		}
		loss := prog.Loss()
		if err := checkFinite(step, loss, prog); err != nil {
			graph.RestoreRaw(all, good)
			res.StopReason = StopError
			return res, err
		}
		graph.SnapshotRawInto(good, all)
		res.Losses = append(res.Losses, loss)
		if err := up.Apply(&Step{Index: step, Loss: loss, Grads: prog, Program: prog}); err != nil {
			graph.RestoreRaw(all, good)
			res.StopReason = StopError
			return res, fmt.Errorf("train: step %d: %w", step, err)
		}
		res.Steps = step + 1
		converged := conv != nil && conv.add(loss)
		last := step+1 == cfg.Iters || converged
		elapsed := time.Since(start).Seconds()
		res.Times = append(res.Times, clock0+elapsed)
		status := ""
		if r, ok := m.(StatusReporter); ok {
			status = r.TrainStatus()
		}
		if cfg.Progress != nil && (last || elapsed-drawn >= every) {
			progress(cfg.Progress, step+1, cfg.Iters, elapsed, -loss/float64(observations(m, n)), conv, status)
			drawn = elapsed
		}
		if cfg.Logger != nil && ((step+1)%logEvery == 0 || last) {
			args := []any{"step", step + 1, "iters", cfg.Iters, "objective_per_point", strconv.FormatFloat(-loss/float64(observations(m, n)), 'g', 5, 64), "seconds", strconv.FormatFloat(elapsed, 'f', 2, 64)}
			if status != "" {
				args = append(args, "status", status)
			}
			cfg.Logger.Info("train", args...)
		}
		if cfg.Eval != nil && cfg.EvalEvery > 0 && ((step+1)%cfg.EvalEvery == 0 || last) {
			t0 := time.Now()
			mets, err := cfg.Eval(step + 1)
			if err != nil {
				res.StopReason = StopError
				return res, fmt.Errorf("train: evaluation after step %d: %w", step+1, err)
			}
			res.Evals = append(res.Evals, Eval{Step: step + 1, Seconds: clock0 + elapsed, Metrics: mets})
			start = start.Add(time.Since(t0)) // evaluations do not count as training time
		}
		if ckpt != nil && ((cfg.Checkpoint.Every > 0 && (step+1)%cfg.Checkpoint.Every == 0) || last) {
			if err := ckpt.save(step+1, res); err != nil {
				res.StopReason = StopError
				return res, fmt.Errorf("train: after step %d: %w", step+1, err)
			}
		}
		if converged {
			res.StopReason = StopConverged
			if cfg.Logger != nil {
				cfg.Logger.Info("train: converged", "step", step+1, "iters", cfg.Iters)
			}
			break
		}
	}
	if cfg.Progress != nil {
		fmt.Fprintln(cfg.Progress)
	}
	res.Seconds = time.Since(start).Seconds()
	if ran := res.Steps - first; ran > 0 {
		res.SecondsPerIter = res.Seconds / float64(ran)
	}
	res.Cholesky = prog.CholeskyStats()
	return res, nil
}

// BatchInputs are a program's optional gp.RowsInput and gp.StepInput storage (nil when its model declares
// none): the global indices of the batch's rows and the step, by which a model keys per-row noise (a deep GP).
// Train fills them, and so do a cluster's workers.
type BatchInputs struct{ rows, step []float64 }

// BatchInputsOf finds prog's batch inputs for a batch of b rows (a *ops.ShapeError for inputs of other sizes).
func BatchInputsOf(prog *graph.Program, b int) (BatchInputs, error) {
	in := BatchInputs{rows: prog.InputData(gp.RowsInput), step: prog.InputData(gp.StepInput)}
	if in.rows != nil && len(in.rows) != b || in.step != nil && len(in.step) != 1 {
		return in, &ops.ShapeError{Op: "train", Want: fmt.Sprintf("model inputs %q [%d] and %q a scalar", gp.RowsInput, b, gp.StepInput),
			Got: fmt.Sprintf("%d and %d values", len(in.rows), len(in.step))}
	}
	return in, nil
}

// Set writes the step and the batch's global row indices idx (len b) into the inputs the program has.
func (in BatchInputs) Set(step int, idx []int) {
	for i, r := range idx[:len(in.rows)] {
		in.rows[i] = float64(r)
	}
	if in.step != nil {
		in.step[0] = float64(step)
	}
}

// stopped reports whether stop is closed (never for a nil channel).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

func checkFinite(step int, loss float64, prog *graph.Program) error {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return &NonFiniteError{Step: step, Index: -1, Value: loss}
	}
	for _, q := range prog.Params() {
		for j, v := range prog.Grad(q) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &NonFiniteError{Step: step, Param: q.Name(), Index: j, Value: v}
			}
		}
	}
	return nil
}

// progressEvery is the least interval, in seconds, between two redraws of the progress line on a file.
const progressEvery = 0.1

// progress redraws the one-line progress display of a terminal: the step of the cap, the rate, the time left if
// training runs to the cap, the objective per training point (the summary's unit: the ELBO, or the log marginal
// likelihood, per point) and, with a convergence criterion, how far it has got: the windows since the best
// window mean last improved by more than the tolerance, of the patience that stops training; then the model's
// status (StatusReporter), if it has one.
func progress(w io.Writer, step, iters int, elapsed, perPoint float64, conv *converger, status string) {
	rate := float64(step) / math.Max(elapsed, 1e-9)
	left := time.Duration(float64(iters-step) / math.Max(rate, 1e-9) * float64(time.Second)).Round(time.Second)
	line := fmt.Sprintf("\rstep %d/%d  %.1f steps/s  %v left at the cap  objective/N %.5g", step, iters, rate, left, perPoint)
	if conv != nil {
		line += fmt.Sprintf("  converging: %d/%d windows of %d steps without a gain of %g/N", conv.stale, conv.cfg.Patience, conv.cfg.Window, conv.cfg.Tol)
	}
	if status != "" {
		line += "  " + status
	}
	fmt.Fprint(w, line+"\x1b[K") // erase what a longer previous line left
}

// setWholeBatch fills prog's batch inputs, if any, for the whole data set of n rows in order at step 0.
func setWholeBatch(prog *graph.Program, n int) error {
	in, err := BatchInputsOf(prog, n)
	if err != nil {
		return err
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	in.Set(0, idx)
	return nil
}
