package train

import (
	"fmt"
	"math"
)

// ConvergeConfig is Train's convergence criterion (Config.Converge): the losses of consecutive steps are averaged
// in windows of Window steps, and training stops at the end of a window when the best window mean has not
// improved by more than Tol (per training point) for Patience consecutive windows, and at least MinSteps steps
// have run; Config.Iters still caps the run. The window mean smooths the noise of minibatch estimates, and Tol
// over Patience windows asks for progress at a rate, not for any progress: a curve that still falls by Tol
// every Patience windows keeps training, a flat one (or one lost in its noise) stops.
//
// The criterion sees only the losses, so it is deterministic (the same losses stop at the same step, bit for
// bit) and a resumed run rebuilds its state from the losses its checkpoint holds: it stops at the step an
// uninterrupted run stops at.
//
// Scale: every gpzoo model's loss is a sum over the N training rows (a minibatch objective is scaled to N: the
// negative ELBO, the negative log marginal likelihood), so window means are divided by N, the rows of the x
// given to Train, and Tol is in nats per training point: the same Tol fits a data set of 300 rows and one of
// 300,000.
//
// Zero values mean the defaults (DefaultConverge); negative values are an error.
type ConvergeConfig struct {
	// Window is the number of steps averaged into one window mean (default 100).
	Window int
	// Patience is the number of consecutive windows without an improvement of more than Tol of the best window
	// mean after which training stops (default 10).
	Patience int
	// Tol is the least improvement of the best window mean, in nats per training point, that counts as progress
	// (default 0.01).
	Tol float64
	// MinSteps is the least number of steps before the criterion may stop training (default 0: none beyond the
	// (1+Patience)·Window steps the criterion needs to stop at all).
	MinSteps int
}

// DefaultConverge is the criterion ConvergeConfig's zero values stand for, and gpzoo train's default: stop when
// 1000 steps (10 windows of 100) have not improved the best 100-step mean of the objective by more than 0.01
// nats per training point, i.e. when the objective falls by less than about 0.001 nats per point per 100 steps.
// 0.01 nats per point is the resolution at which test log-likelihoods are compared; 100-step means put the noise
// of 1024-row minibatches (about 0.02 nats per point a step on kin8nm) at 0.002, well below it; and the 1000-step
// horizon is long enough for a slow but steady fall (yacht, boston) to count as progress. It was chosen on loss
// curves of 10,000 steps on the UCI regression sets of issue 31 (boston, kin8nm, naval, power, yacht, protein;
// SVGP and deep GP with gpzoo train's defaults): see the README's "Training length".
var DefaultConverge = ConvergeConfig{Window: 100, Patience: 10, Tol: 0.01}

// StopReason says why Train or TrainLBFGS ended (Result.StopReason).
type StopReason string

// The reasons a training run ends.
const (
	// StopIterations: the fixed number of steps (Config.Iters, no criterion) ran.
	StopIterations StopReason = "iterations"
	// StopConverged: the convergence criterion stopped training before the cap (Config.Converge), or L-BFGS met
	// its gradient or function tolerance.
	StopConverged StopReason = "converged"
	// StopIterationCap: the cap (Config.Iters) was reached before the criterion was met; L-BFGS's iteration limit.
	StopIterationCap StopReason = "iteration cap"
	// StopNoProgress: L-BFGS's line search could make no further progress (a normal end for a fit).
	StopNoProgress StopReason = "no progress"
	// StopInterrupted: Config.Stop fired (the error wraps ErrInterrupted).
	StopInterrupted StopReason = "interrupted"
	// StopError: an error ended training (a non-finite loss or gradient, a failed step, evaluation or save).
	StopError StopReason = "error"
)

// withDefaults returns c with zero fields set to DefaultConverge's, or an error for a negative or non-finite field.
func (c ConvergeConfig) withDefaults() (ConvergeConfig, error) {
	if c.Window < 0 || c.Patience < 0 || c.MinSteps < 0 || c.Tol < 0 || math.IsNaN(c.Tol) || math.IsInf(c.Tol, 0) {
		return c, fmt.Errorf("train: Converge %+v: want Window, Patience, MinSteps ≥ 0 and a finite Tol ≥ 0 (0: the default)", c)
	}
	if c.Window == 0 {
		c.Window = DefaultConverge.Window
	}
	if c.Patience == 0 {
		c.Patience = DefaultConverge.Patience
	}
	if c.Tol == 0 {
		c.Tol = DefaultConverge.Tol
	}
	return c, nil
}

// converger is the criterion's state: the window being filled and the best window mean so far. It is a function
// of the losses fed to it, in order.
type converger struct {
	cfg    ConvergeConfig // with defaults
	n      float64        // training points: window sums are divided by Window·n
	steps  int            // losses seen
	sum    float64        // of the current window's losses
	best   float64        // best window mean per point that counted as progress (+Inf before the first window)
	stale  int            // windows since best last improved by more than Tol
	done   bool           // the criterion is met
	window int            // windows completed
}

func newConverger(cfg ConvergeConfig, n int) *converger {
	return &converger{cfg: cfg, n: float64(n), best: math.Inf(1)}
}

// add feeds the loss of the next step and reports whether training should stop after it.
func (c *converger) add(loss float64) bool {
	c.steps++
	c.sum += loss
	if c.steps%c.cfg.Window != 0 {
		return c.done
	}
	mean := c.sum / float64(c.cfg.Window) / c.n
	c.sum = 0
	c.window++
	if mean < c.best-c.cfg.Tol {
		c.best, c.stale = mean, 0
	} else {
		c.stale++
	}
	if c.stale >= c.cfg.Patience && c.steps >= c.cfg.MinSteps {
		c.done = true
	}
	return c.done
}

// ConvergedAt replays the criterion cfg (zero fields: DefaultConverge's) on losses, the losses of consecutive
// steps of a run on n training points, and returns the number of steps after which Train would have stopped,
// or 0 if the criterion is not met within losses. It lets a criterion be tried offline on the Losses of one
// long run.
func ConvergedAt(cfg ConvergeConfig, losses []float64, n int) (int, error) {
	c, err := NewConvergence(cfg, n)
	if err != nil {
		return 0, err
	}
	for i, l := range losses {
		if c.Add(l) {
			return i + 1, nil
		}
	}
	return 0, nil
}

// Convergence is the criterion of a ConvergeConfig fed one loss at a time, for training loops outside Train
// (a cluster's parameter server stops by it as Train does).
type Convergence struct{ c *converger }

// NewConvergence returns the criterion cfg (zero fields: DefaultConverge's) over n training points.
func NewConvergence(cfg ConvergeConfig, n int) (*Convergence, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("train: NewConvergence: %d training points", n)
	}
	return &Convergence{newConverger(cfg, n)}, nil
}

// Add feeds the loss of the next step (on the whole data set's scale, as Train's Losses) and reports whether
// training should stop after it.
func (c *Convergence) Add(loss float64) bool { return c.c.add(loss) }
