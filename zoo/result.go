package zoo

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
)

// EvalRecord is one evaluation during training (Result.Evals).
type EvalRecord struct {
	Step    int                `json:"step"`
	Seconds float64            `json:"seconds"`
	Metrics map[string]float64 `json:"metrics"`
}

// Result is the outcome of one run of an entry. Its JSON keys are stable: later releases add keys, never rename.
//
// StopReason is train.StopReason: "iterations" (a fixed step count), "converged" (the convergence criterion, or
// L-BFGS's tolerances), "iteration cap" (MaxIters reached first), "no progress" (L-BFGS's line search); it is
// absent for entries that train otherwise. MaxIters is the cap of a run that stops when it converges (gpzoo
// train's default) or of L-BFGS.
//
// Entries without a test evaluation (ringnorm/odvgp-illustration, which reports training curves) have NTest 0,
// nil TestRMSE and TestAccuracy, and test_ll null in the JSON (TestLL is 0 in Go and meaningless).
type Result struct {
	Entry          string   `json:"entry"`
	Dataset        string   `json:"dataset"`
	Model          string   `json:"model"`
	Split          int      `json:"split"`
	Seed           uint64   `json:"seed"`
	NTrain         int      `json:"n_train"`
	NTest          int      `json:"n_test"`
	Iters          int      `json:"iters"`                 // the steps (L-BFGS iterations) taken
	StopReason     string   `json:"stop_reason,omitempty"` // why training ended (see above)
	MaxIters       int      `json:"max_iters,omitempty"`   // the cap of a run that may stop early (absent: a fixed count)
	TrainSeconds   float64  `json:"train_seconds"`
	SecondsPerIter float64  `json:"seconds_per_iter"`
	TestRMSE       *float64 `json:"test_rmse"` // regression, original units; null for classification
	// TestRMSEStandardised is TestRMSE divided by the training targets' standard deviation (a model of one
	// standardised target trained by gpzoo train's path; absent otherwise): the unit Wang et al. 2019 and others
	// report RMSE in.
	TestRMSEStandardised *float64 `json:"test_rmse_standardised,omitempty"`
	TestLL               float64  `json:"test_ll"`       // mean log predictive density per test point, original units; null when n_test is 0
	TestAccuracy         *float64 `json:"test_accuracy"` // classification; null for regression
	// Outputs is P for a model of several target columns (or with missing targets; absent otherwise): TestRMSE and
	// TestLL are then over the TestCells observed target cells of the test rows (missing ones are not scored), the
	// LL per cell, TestRMSEPerOutput gives each output's RMSE in its own units and TestCellsPerOutput the number
	// of cells it is over (an output with no scored cell has RMSE 0 over 0 cells: read the count).
	Outputs            int       `json:"outputs,omitempty"`
	TestCells          int       `json:"test_cells,omitempty"`
	TestRMSEPerOutput  []float64 `json:"test_rmse_per_output,omitempty"`
	TestCellsPerOutput []int     `json:"test_cells_per_output,omitempty"`
	// ELBOPerPoint is the training objective per training point in standardised units: the ELBO for
	// variational models, the log marginal likelihood for the exact GP (whose bound is tight). ObjectiveKind says
	// how it was obtained: "final" (a full-batch fit: the objective at the final parameters, evaluated afresh on
	// the whole training set) or "smoothed" (minibatch training: the mean of the last steps' minibatch estimates,
	// each unbiased, which smooths their noise).
	ELBOPerPoint  float64 `json:"elbo_per_point"`
	ObjectiveKind string  `json:"objective_kind,omitempty"`
	Build         string  `json:"build"` // "purego" or "openblas"
	// BLAS names the level-3 BLAS kernel that ran (ops.BLAS): "avx512", "avx2" or "generic" in the purego
	// build, "openblas" in the openblas build.
	BLAS       string `json:"blas"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// Extra, descriptive fields (not part of the stable key set).
	DataSource string `json:"data_source"`
	Optimizer  string `json:"optimizer"`
	// Kernel is the kernel expression of a TrainCustom run in canonical form (gp/grammar: "SE", "MATERN52",
	// "PER+SE"; every layer's kernel for a deep GP); absent for the zoo's entries.
	Kernel          string  `json:"kernel,omitempty"`
	CholeskyRetries int64   `json:"cholesky_retries"`
	Published       string  `json:"published,omitempty"`
	BuildSeconds    float64 `json:"build_seconds"`
	// Deep GPs: TestLL is the log density of the S-sample predictive mixture (TestLLKind says so and gives S,
	// TestSamples); TestLLMomentMatched is the moment-matched Gaussian's (null for other models).
	TestLLKind          string   `json:"test_ll_kind,omitempty"`
	TestSamples         int      `json:"test_samples,omitempty"`
	TestLLMomentMatched *float64 `json:"test_ll_moment_matched,omitempty"`
	// Curves summarises the training curves of entries with WritesCurves (nil and absent from the JSON
	// otherwise). For them Iters is per method, TrainSeconds the sum over the methods, SecondsPerIter the mean
	// per step of one method and ELBOPerPoint Curves.BestELBO per training point.
	Curves *Curves `json:"curves,omitempty"`
	// ModelFile is the file the trained model was saved to ("" and absent from the JSON when it was not saved).
	ModelFile string `json:"model_file,omitempty"`
	// TestECE is the expected calibration error of a classifier's test predictions (ReliabilityBins equal-width
	// bins of the predicted class's probability); absent for regression.
	TestECE *float64 `json:"test_ece,omitempty"`
	// Machine, VCS and Date record where, from which commit and when (UTC, RFC 3339) the run was made (absent from
	// results written before they existed).
	Machine *Machine `json:"machine,omitempty"`
	VCS     *VCS     `json:"vcs,omitempty"`
	Date    string   `json:"date,omitempty"`
	// Table identifies a run of a table's row (gpzoo table run; absent otherwise): the table, the row, the
	// protocol it ran and the compute it took.
	Table *TableRun `json:"table,omitempty"`
	// Cluster holds the numbers of a run trained on a cluster (ClusterConfig; absent otherwise).
	Cluster *ClusterStats `json:"cluster,omitempty"`
	// Exact holds an exact GP's solver and, by conjugate gradients, its solves (gpr; absent otherwise).
	Exact *ExactStats `json:"exact,omitempty"`
	// ADVGP holds the distributed-training numbers (and studies) of ADVGP entries.
	ADVGP *ADVGPStats `json:"advgp,omitempty"`
	// Layers are a deep GP's per-layer diagnostics at the end of training (dgp.Diagnose on up to DiagnoseRows
	// training rows with DiagnoseSamples samples each: KL per layer, hyperparameters, the spread of the samples);
	// absent for other models.
	Layers []dgp.LayerDiagnostics `json:"layers,omitempty"`
	// Evals are the evaluations of --eval-every (Options.EvalEvery): the step, the training seconds and the test
	// metrics, and for a deep GP each layer's diagnostics (layerℓ.kl_per_point, .noise_sd, .shift_rms,
	// .output_sd, .ls_median); absent without evaluations.
	Evals []EvalRecord `json:"evals,omitempty"`
	// Priors lists the priors set on the Params ("Param ~ prior"; absent without): the fit was then maximum a
	// posteriori, and ELBOPerPoint includes the log prior.
	Priors []string `json:"priors,omitempty"`
	// MCMC holds the diagnostics of a NUTS run over the hyperparameters (CustomConfig.MCMC; absent otherwise): the
	// test metrics are then the posterior predictive's (the mixture over the kept draws).
	MCMC *bayes.Diagnostics `json:"mcmc,omitempty"`
	// What WritePlots draws (not in the JSON): the loss and the seconds at every training step, and for
	// classifiers each test point's probability of the predicted class and whether the prediction was right.
	losses, times []float64
	evals         []train.Eval
	confidence    []float64
	correct       []bool
}

// MarshalJSON encodes r with test_ll null when r has no test evaluation (NTest is 0).
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // without this method
	if r.NTest > 0 {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		TestLL *float64 `json:"test_ll"`
	}{plain: plain(r)})
}

func newResult(e *Entry, o Options) *Result {
	return &Result{Entry: e.Name, Dataset: e.Dataset, Model: e.Model, Split: o.Split, Seed: o.Seed,
		Build: ops.Build, BLAS: ops.BLAS(), GOMAXPROCS: runtime.GOMAXPROCS(0), Published: e.Published}
}

// WriteJSON writes r as one indented JSON object.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// SaveJSON writes r to path (created or truncated).
func (r *Result) SaveJSON(path string) error {
	return saveJSON(path, r.WriteJSON)
}

// Summary returns a short human-readable report.
func (r *Result) Summary() string {
	build := r.Build
	if r.BLAS != "" { // results written before the key existed have none
		build += ", BLAS " + r.BLAS
	}
	s := fmt.Sprintf("%s  split %d  seed %d  (%s, GOMAXPROCS=%d)\n", r.Entry, r.Split, r.Seed, build, r.GOMAXPROCS)
	s += fmt.Sprintf("  data: %s  n_train=%d n_test=%d\n", r.DataSource, r.NTrain, r.NTest)
	if r.Kernel != "" {
		s += fmt.Sprintf("  kernel: %s (ARD)\n", r.Kernel)
	}
	kind := ""
	switch r.ObjectiveKind {
	case "final":
		kind = " (final)"
	case "smoothed":
		kind = " (mean of the last minibatch estimates)"
	case "estimate":
		kind = " (the last step's stochastic estimate)"
	}
	if r.MCMC != nil && r.Iters == 0 {
		s += fmt.Sprintf("  train: %s in %.2fs, no MAP fit (the chains start from the initial values)\n", r.Optimizer, r.TrainSeconds)
	} else {
		s += fmt.Sprintf("  train: %d iters (%s) in %.2fs (%.4fs/iter), objective/N = %.4f%s\n", r.Iters, r.Optimizer, r.TrainSeconds, r.SecondsPerIter, r.ELBOPerPoint, kind)
	}
	if r.Exact != nil {
		s += r.Exact.summary()
	}
	if line := r.StopLine(); line != "" {
		s += "  " + line + "\n"
	}
	if len(r.Priors) > 0 {
		s += "  priors: " + strings.Join(r.Priors, ", ") + "\n"
	}
	if r.MCMC != nil {
		s += r.MCMC.Report()
	}
	if r.TestRMSE != nil {
		s += fmt.Sprintf("  test RMSE = %.5g   test LL = %.5g\n", *r.TestRMSE, r.TestLL)
		s += r.outputsLine()
	}
	if r.TestAccuracy != nil {
		s += fmt.Sprintf("  test accuracy = %.4f   test LL = %.4f", *r.TestAccuracy, r.TestLL)
		if r.TestECE != nil {
			s += fmt.Sprintf("   ECE = %.4f", *r.TestECE)
		}
		s += "\n"
	}
	if r.TestRMSE == nil && r.TestAccuracy == nil && r.NTest == 0 {
		s += "  no test metrics (n_test = 0)\n"
	}
	if c := r.Curves; c != nil {
		s += fmt.Sprintf("  curves: %s (method,iteration,elbo,seconds); best final ELBO %.6g, tolerance %g·|best|\n", c.File, c.BestELBO, c.Tol)
		s += fmt.Sprintf("    %-11s %14s %13s %10s %10s\n", "method", "final ELBO", "iters to tol", "s to tol", "seconds")
		for _, m := range c.Methods {
			it, st := "never", "-"
			if m.ItersToTol != nil {
				it, st = fmt.Sprint(*m.ItersToTol), fmt.Sprintf("%.2f", *m.SecondsToTol)
			}
			s += fmt.Sprintf("    %-11s %14.6g %13s %10s %10.2f\n", m.Method, m.FinalELBO, it, st, m.Seconds)
		}
	}
	if len(r.Layers) > 0 {
		s += "  layers (KL/N, noise sd, shift rms, output sd, length-scales min/median/max):\n"
		for _, d := range r.Layers {
			s += fmt.Sprintf("    %d: KL/N %.4f  noise %.4f  shift %.4f  out %.4f  %s\n", d.Layer, d.KLPerPoint, d.NoiseSD, d.ShiftRMS, d.OutputSD, hyperLine(d.Hyper))
		}
	}
	if c := r.Cluster; c != nil {
		s += fmt.Sprintf("  cluster: %d workers, τ=%d: %d updates (mean staleness %.2f), %.0f points/s, gradients per shard %v, refused %d stale, %d invalid and %d from unknown clients, dropped %d, recovered %d lost messages\n",
			c.Workers, c.Tau, c.Updates, c.MeanStaleness, c.PointsPerSecond, c.PerShard, c.Stale, c.Invalid, c.Unknown, c.Dropped, c.Recovered)
	}
	if a := r.ADVGP; a != nil {
		s += fmt.Sprintf("  advgp: %d workers, τ=%d: %d updates, %.0f points/s, gradients per shard %v, stale %d, dropped %d\n",
			a.Workers, a.Tau, a.Updates, a.PointsPerSecond, a.PerShard, a.Stale, a.Dropped)
		for _, rows := range [][]ADVGPStudyRun{a.Throughput, a.Delay} {
			for _, row := range rows {
				slow := ""
				if row.SlowDelay != "" {
					slow = ", worker 0 sleeps " + row.SlowDelay
				}
				s += fmt.Sprintf("    %d workers, τ=%-2d%s: %d updates in %.2fs, %.0f points/s, test RMSE %.4f\n",
					row.Workers, row.Tau, slow, row.Updates, row.Seconds, row.PointsPerSecond, row.TestRMSE)
			}
		}
	}
	if r.Published == "" { // a user's data (gpzoo train) or an entry without published numbers: nothing to set beside
		return s
	}
	return s + "  " + r.Compare() + "\n"
}

// StopLine says why training stopped and after how many steps, e.g. "stopped: converged after 1800 steps
// (cap 10000)" ("" when the run has no StopReason).
func (r *Result) StopLine() string {
	unit := "steps"
	if strings.HasPrefix(r.Optimizer, "lbfgs") {
		unit = "L-BFGS iterations"
	}
	limit := ""
	if r.MaxIters > 0 {
		limit = fmt.Sprintf(" (cap %d)", r.MaxIters)
	}
	switch train.StopReason(r.StopReason) {
	case "":
		return ""
	case train.StopIterations:
		return fmt.Sprintf("stopped: after the fixed %d %s (no convergence criterion)", r.Iters, unit)
	case train.StopConverged:
		return fmt.Sprintf("stopped: converged after %d %s%s", r.Iters, unit, limit)
	case train.StopIterationCap:
		return fmt.Sprintf("stopped: iteration cap reached after %d %s (not converged)", r.Iters, unit)
	case train.StopNoProgress:
		return fmt.Sprintf("stopped: no further progress after %d %s%s", r.Iters, unit, limit)
	}
	return fmt.Sprintf("stopped: %s after %d %s%s", r.StopReason, r.Iters, unit, limit)
}

// Line returns a one-line summary of r: its split, test metrics and training time.
func (r *Result) Line() string {
	s := fmt.Sprintf("%s split %d:", r.Entry, r.Split)
	if r.TestRMSE != nil {
		s += fmt.Sprintf(" test RMSE %.4f", *r.TestRMSE)
	}
	if r.TestAccuracy != nil {
		s += fmt.Sprintf(" test accuracy %.4f", *r.TestAccuracy)
	}
	if r.NTest > 0 {
		s += fmt.Sprintf(" test LL %.4f", r.TestLL)
	} else {
		s += " no test metrics"
	}
	return s + fmt.Sprintf(", %d iters in %.1fs", r.Iters, r.TrainSeconds)
}

// Compare returns one line setting r's test metrics beside the entry's published numbers, e.g.
// "ours (split 0): RMSE 2.071, test LL -2.13 | published: …" (a single split has no spread: run several with
// RunSplits for mean ± std).
func (r *Result) Compare() string {
	var parts []string
	if r.TestRMSE != nil {
		parts = append(parts, fmt.Sprintf("RMSE %.4g", *r.TestRMSE))
	}
	if r.NTest > 0 {
		parts = append(parts, fmt.Sprintf("test LL %.4g", r.TestLL))
	}
	if r.TestAccuracy != nil {
		parts = append(parts, fmt.Sprintf("accuracy %.4g", *r.TestAccuracy))
	}
	return metricsLine(fmt.Sprintf("ours (split %d)", r.Split), parts, r.Published)
}

// hyperLine summarises a layer's hyperparameters: length-scales as min/median/max, the others by name.
func hyperLine(h map[string][]float64) string {
	names := slices.Sorted(maps.Keys(h))
	var parts []string
	for _, n := range names {
		v := h[n]
		short := n[strings.LastIndex(n, ".")+1:]
		if strings.HasSuffix(n, ".white.variance") {
			short = "white"
		}
		if len(v) == 1 {
			parts = append(parts, fmt.Sprintf("%s %.3g", short, v[0]))
			continue
		}
		w := slices.Sorted(slices.Values(v))
		parts = append(parts, fmt.Sprintf("%s %.3g/%.3g/%.3g", short, w[0], w[len(w)/2], w[len(w)-1]))
	}
	return strings.Join(parts, "  ")
}
