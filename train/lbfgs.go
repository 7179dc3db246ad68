package train

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// LBFGSConfig configures TrainLBFGS. Zero values mean the defaults.
type LBFGSConfig struct {
	// Iters bounds the number of L-BFGS major iterations (required, > 0).
	Iters int
	// GradTol stops when the gradient's infinity norm falls below it; 0 means 1e-6.
	GradTol float64
	// Memory is the number of correction pairs kept; 0 means gonum's default (15).
	Memory int
	// Graph configures the graph (Cholesky jitter policy).
	Graph graph.Options
	// Stop, when closed (ctx.Done() of signal.NotifyContext for SIGINT/SIGTERM), ends the fit at the next
	// evaluation: TrainLBFGS then restores the Params to their values at the call and returns the partial Result
	// (StopInterrupted) with an error wrapping ErrInterrupted. As Config.Stop, it installs no signal handler.
	Stop <-chan struct{}
	// Logger receives a record every LogEvery major iterations and at the end (nil: none): the objective per
	// training row, evaluations so far and seconds, the units of Train's records.
	Logger *slog.Logger
	// LogEvery is the logging period in major iterations; 0 means 10.
	LogEvery int
	// Progress, if set, receives Train's one-line progress display (the major iteration of the cap, the
	// objective per training row, the evaluations so far), redrawn as Config.Progress is.
	Progress io.Writer
}

// TrainLBFGS fits m to the full data set (x [N,D], y [N,P]) with L-BFGS (gonum/optimize) over the raw values of
// the trainable Params, minimising Loss (m's loss, plus −log p(θ) of the Params with priors: a MAP fit). On success the Params hold the best point found and the Result's last loss (FinalLoss) is
// the loss there, evaluated after the search; on an error they hold their values at the call. Stop and Logger
// are as Train's: an interrupted fit returns an error wrapping ErrInterrupted.
func TrainLBFGS(m gp.Model, x, y *mat.Dense, cfg LBFGSConfig) (*Result, error) {
	if m == nil || x == nil || y == nil {
		return nil, errors.New("train: TrainLBFGS: nil model or data")
	}
	n, d := x.Dims()
	ny, p := y.Dims()
	if n != ny {
		return nil, &ops.ShapeError{Op: "train.TrainLBFGS", Want: "x and y with the same number of rows", Got: fmt.Sprintf("%d and %d", n, ny)}
	}
	if cfg.Iters <= 0 {
		return nil, fmt.Errorf("train: Iters must be positive, got %d", cfg.Iters)
	}
	if err := graph.CheckPriorSupport(m.Params()); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	t0 := time.Now()
	g := graph.New(cfg.Graph)
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	prog, err := g.Compile(Loss(m, xn, yn), nil)
	if err != nil {
		return nil, fmt.Errorf("train: building the loss: %w", err)
	}
	defer prog.Close()
	mat.NewDense(n, d, prog.InputData("x")).Copy(x)
	mat.NewDense(n, p, prog.InputData("y")).Copy(y)
	if err := setWholeBatch(prog, n); err != nil { // every row, in order, at step 0: a deterministic objective
		return nil, err
	}
	res := &Result{BuildSeconds: time.Since(t0).Seconds()}
	params := prog.Params()
	x0 := flattenRaw(params)
	good := graph.SnapshotRaw(params)
	var runErr error
	evals := 0
	// gonum asks for the objective and its gradient at a point by two calls (Func, then Grad); one run of the
	// program gives both, so eval runs it only when v differs from the point last run.
	var last []float64
	lastOK := false
	eval := func(v []float64) bool {
		if last != nil && slices.EqualFunc(v, last, sameBits) {
			return lastOK
		}
		last = append(last[:0], v...)
		evals++
		unflattenRaw(params, v)
		lastOK = false
		if err := prog.Run(); err != nil {
			runErr = err
			return false
		}
		if err := checkFinite(res.Steps, prog.Loss(), prog); err != nil {
			runErr = err
			return false
		}
		lastOK = true
		return true
	}
	problem := optimize.Problem{
		Func: func(v []float64) float64 {
			if !eval(v) {
				return math.Inf(1) // the line search backs off; runErr is reported if it never recovers
			}
			return prog.Loss()
		},
		Grad: func(grad, v []float64) {
			if !eval(v) {
				for i := range grad {
					grad[i] = math.NaN()
				}
				return
			}
			k := 0
			for _, q := range params {
				k += copy(grad[k:], prog.Grad(q))
			}
		},
	}
	logEvery := cfg.LogEvery
	if logEvery <= 0 {
		logEvery = 10
	}
	start := time.Now()
	drawn, every := math.Inf(-1), 0.0
	if _, ok := cfg.Progress.(*os.File); ok {
		every = progressEvery
	}
	draw := func(f float64, force bool) {
		if elapsed := time.Since(start).Seconds(); cfg.Progress != nil && (force || elapsed-drawn >= every) {
			progress(cfg.Progress, res.Steps, cfg.Iters, elapsed, -f/float64(observations(m, n)), nil, fmt.Sprintf("L-BFGS, %d evaluations", evals))
			drawn = elapsed
		}
	}
	record := func(loc *optimize.Location) {
		res.Losses = append(res.Losses, loc.F)
		res.Steps++
		draw(loc.F, false)
		if cfg.Logger != nil && res.Steps%logEvery == 0 {
			cfg.Logger.Info("train: L-BFGS", "iter", res.Steps, "iters", cfg.Iters, "objective_per_point", strconv.FormatFloat(-loc.F/float64(observations(m, n)), 'g', 5, 64),
				"evaluations", evals, "seconds", strconv.FormatFloat(time.Since(start).Seconds(), 'f', 2, 64))
		}
	}
	settings := &optimize.Settings{
		MajorIterations:   cfg.Iters,
		GradientThreshold: cfg.GradTol,
		Recorder:          &lbfgsRecorder{major: record, stop: cfg.Stop},
	}
	if settings.GradientThreshold == 0 {
		settings.GradientThreshold = 1e-6
	}
	out, err := optimize.Minimize(problem, x0, settings, &optimize.LBFGS{Store: cfg.Memory})
	res.Seconds, res.Evaluations = time.Since(start).Seconds(), evals
	if cfg.Progress != nil && res.Steps > 0 {
		draw(res.Losses[len(res.Losses)-1], true)
		fmt.Fprintln(cfg.Progress)
	}
	if res.Steps > 0 {
		res.SecondsPerIter = res.Seconds / float64(res.Steps)
	}
	if errors.Is(err, ErrInterrupted) {
		graph.RestoreRaw(params, good)
		res.StopReason = StopInterrupted
		return res, fmt.Errorf("train: L-BFGS stopped after %d of at most %d iterations: %w", res.Steps, cfg.Iters, ErrInterrupted)
	}
	if out == nil || math.IsInf(out.F, 0) || math.IsNaN(out.F) {
		graph.RestoreRaw(params, good)
		res.StopReason = StopError
		if runErr != nil {
			return res, fmt.Errorf("train: L-BFGS: %w", runErr)
		}
		return res, fmt.Errorf("train: L-BFGS: %v", err)
	}
	if !eval(out.X) { // the best point: usually the one last run, whose loss and gradients the program holds
		graph.RestoreRaw(params, good)
		res.StopReason = StopError
		return res, runErr
	}
	res.Losses = append(res.Losses, prog.Loss())
	res.Cholesky = prog.CholeskyStats()
	defer func() {
		if cfg.Logger != nil {
			cfg.Logger.Info("train: L-BFGS done", "iter", res.Steps, "objective_per_point", strconv.FormatFloat(-prog.Loss()/float64(observations(m, n)), 'g', 5, 64),
				"evaluations", evals, "seconds", strconv.FormatFloat(res.Seconds, 'f', 2, 64), "stop", string(res.StopReason))
		}
	}()
	// Stopping for the iteration limit or a stalled line search is a normal end for a fit, not an error.
	var st optimize.Status
	if out != nil {
		st = out.Status
	}
	if err != nil && st != optimize.IterationLimit && st != optimize.GradientThreshold && st != optimize.FunctionConvergence {
		if !errors.Is(err, optimize.ErrLinesearcherFailure) && !errors.Is(err, optimize.ErrNoProgress) {
			graph.RestoreRaw(params, good)
			res.StopReason = StopError
			return res, fmt.Errorf("train: L-BFGS: %w", err)
		}
	}
	switch st {
	case optimize.IterationLimit:
		res.StopReason = StopIterationCap
	case optimize.GradientThreshold, optimize.FunctionConvergence:
		res.StopReason = StopConverged
	default:
		res.StopReason = StopNoProgress
	}
	return res, nil
}

// lbfgsRecorder is gonum's Recorder of TrainLBFGS: major calls back at every major iteration, and every
// operation (each evaluation included) ends the search with ErrInterrupted once stop is closed.
type lbfgsRecorder struct {
	major func(loc *optimize.Location)
	stop  <-chan struct{}
}

func (r *lbfgsRecorder) Init() error { return nil }
func (r *lbfgsRecorder) Record(loc *optimize.Location, op optimize.Operation, _ *optimize.Stats) error {
	if op == optimize.MajorIteration {
		r.major(loc)
	}
	if stopped(r.stop) {
		return ErrInterrupted
	}
	return nil
}

func flattenRaw(ps []*graph.Param) []float64 {
	var v []float64
	for _, q := range ps {
		v = append(v, q.Raw()...)
	}
	return v
}

func unflattenRaw(ps []*graph.Param, v []float64) {
	k := 0
	for _, q := range ps {
		k += copy(q.Raw(), v[k:])
	}
}

// sameBits reports whether a and b are the same float64, bit for bit.
func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
