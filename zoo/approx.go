package zoo

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// buildApprox builds gpr's model for a non-Gaussian likelihood (c.Inference; gp/approx): the exact GP with kernel
// kern, a constant prior mean (for counts it starts at the log of the training rows' mean count, the rate's
// scale; otherwise at 0) and fam's likelihood, holding the training rows it predicts from.
func buildApprox(tr *datasets.Dataset, c CustomConfig, fam gp.LikelihoodFamily, kern gp.Kernel) (*customBuild, error) {
	if tr.P() != 1 {
		return nil, fmt.Errorf("%w: gpr with --inference takes one target column, got %d", ErrBadCustom, tr.P())
	}
	lik, _, err := newLikelihood(fam, 1, tr.NumClasses, 0, rand.New(rand.NewPCG(c.Seed, 0x50f7)))
	if err != nil {
		return nil, err
	}
	inf, err := approx.ParseInference(c.Inference)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	if sl, ok := lik.(approx.SoftmaxLink); ok { // several classes: R&W §3.5
		if inf != approx.Laplace {
			return nil, fmt.Errorf("%w: --likelihood %s takes --inference laplace (multi-class EP is not implemented)", ErrBadCustom, fam.Name)
		}
		if cn := sl.SoftmaxClasses() * tr.N(); cn > ops.MaxSoftmaxLaplaceSize {
			return nil, fmt.Errorf("%w: gpr with --likelihood %s on %d training rows of %d classes: the multi-class Laplace approximation's dense matrices take classes × rows ≤ %d (use svgp)",
				ErrBadCustom, fam.Name, tr.N(), sl.SoftmaxClasses(), ops.MaxSoftmaxLaplaceSize)
		}
		model, err := approx.NewMulticlass(approx.MulticlassConfig{Kernel: kern, Likelihood: sl, X: tr.X, Y: tr.Y})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
		}
		return &customBuild{model: model, describe: fullBatch(c, fmt.Sprintf("exact GP, multi-class Laplace approximation (%d classes)", sl.SoftmaxClasses()))}, nil
	}
	m0 := 0.0
	if fam.RawTargets {
		m0 = math.Log(max(mat.Sum(tr.Y)/float64(tr.N()), 0.1))
	}
	mean, err := gp.NewConstantMean("mean", []float64{m0})
	if err != nil {
		return nil, err
	}
	model, err := approx.New(approx.Config{Kernel: kern, Mean: mean, Likelihood: lik, Inference: inf, X: tr.X, Y: tr.Y})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	what := "Laplace approximation"
	if inf == approx.EP {
		what = "EP (parallel sweeps, adaptive damping)"
	}
	return &customBuild{model: model, describe: fullBatch(c, "exact GP, "+what)}, nil
}

// trainApproxRestarts fits an approximated gpr by L-BFGS from c.Restarts starts — the first is first (built by
// fit), start r's kernel variance and length-scales scaled by approxStarts[r] — and returns the build and the
// training result of the best final objective (the first on ties). A start whose approximation fails (EP not
// converging at its hyperparameters, say) is skipped; all failing is the first one's error.
func trainApproxRestarts(tr *datasets.Dataset, std *datasets.Standardizer, c CustomConfig, fam gp.LikelihoodFamily, rng *rand.Rand,
	first *customBuild, y *mat.Dense) (*customBuild, *train.Result, error) {
	var (
		best     *customBuild
		bestRes  *train.Result
		bestAt   int
		firstErr error
		failed   int
		seconds  float64
		steps    int
	)
	for r := 0; r < max(c.Restarts, 1); r++ {
		b := first
		if r > 0 {
			cr := c
			f := approxStarts[r%len(approxStarts)]
			cr.KernelVariance, cr.KernelLengthscale = orOne(c.KernelVariance)*f[0], orOne(c.KernelLengthscale)*f[1]
			var err error
			if b, err = buildCustom(tr, std, cr, fam, rng); err != nil {
				return nil, nil, err
			}
			if _, err := gp.AssignPriors(b.model.Params(), c.Priors); err != nil { // MAP from every start
				return nil, nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
			}
		}
		res, err := train.TrainLBFGS(b.model, tr.X, y, train.LBFGSConfig{Iters: c.Iters, Stop: c.Stop, Logger: c.Logger, Progress: c.Progress})
		if res != nil {
			seconds += res.Seconds
			steps += res.Steps
		}
		if errors.Is(err, train.ErrInterrupted) {
			return nil, nil, err // no further starts
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			failed++
			continue
		}
		if bestRes == nil || res.FinalLoss() < bestRes.FinalLoss() {
			best, bestRes, bestAt = b, res, r
		}
	}
	if bestRes == nil {
		return nil, nil, fmt.Errorf("every start failed: %w", firstErr)
	}
	var stats ops.ApproxStatsSnapshot
	if st, ok := best.model.(interface {
		Stats() ops.ApproxStatsSnapshot
	}); ok { // approx.GP, approx.Multiclass
		stats = st.Stats()
	}
	unit := "Newton iterations"
	if c.Inference == string(approx.EP) {
		unit = "EP sweeps"
	}
	best.describe += fmt.Sprintf(", %d L-BFGS starts (the best: %d", max(c.Restarts, 1), bestAt+1)
	if failed > 0 {
		best.describe += fmt.Sprintf("; %d failed: %v", failed, shortErr(firstErr))
	}
	best.describe += fmt.Sprintf("), %s per evaluation: %.1f on average, %d at most", unit,
		float64(stats.Iters)/math.Max(float64(stats.Calls), 1), stats.MaxIters)
	// The result reports the chosen fit's iterations, and the time of every start (TrainSeconds sums them, as
	// the CO₂ entries' restarts do).
	out := *bestRes
	out.Seconds = seconds
	if steps > 0 {
		out.SecondsPerIter = seconds / float64(steps)
	}
	return best, &out, nil
}

// shortErr names an error's kind briefly: the approximation's non-convergence or its message.
func shortErr(err error) string {
	if errors.Is(err, ops.ErrNotConverged) {
		return "not converged"
	}
	return err.Error()
}
