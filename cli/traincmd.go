package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/gpzoo/gpzoo/ops"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/plots"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

const trainUsage = `gpzoo train: train a model on your own CSV file.

Usage:
  gpzoo train --csv FILE --target COLUMN [flags]
  gpzoo train --csv FILE --targets A,B,... [--lmc L] [flags]
  gpzoo train --dataset NAME [--split K] [--data DIR] [flags]

The CSV needs a header row; fields are separated by commas, semicolons or tabs (detected from the header and
named in the first line printed). Every used column must be numeric (categorical columns are refused, by name).
Inputs (and a real-valued target, not counts or labels) are standardised on the training rows; a random test
fraction is held out and scored; the model is saved (--save) for gpzoo predict.

The Adam-trained families (svgp, decoupled, hybrid, orth, orthnat, dgp) train until the training objective has
converged: the loss is averaged over windows of %[4]d steps, and training stops when the best window mean has
not improved by more than %[5]g nats per training point for %[6]d windows in a row, or after %[7]d steps at
the latest. --max-iters N sets that cap; --iters N instead runs exactly N steps. The summary says why training
stopped and after how many steps.

Flags:
  --csv FILE          the data (required, or --dataset, or --rows)
  --rows FILE         with --workers: a row file (.gpzr, gpzoo synth --out X.gpzr) or CSV too large for memory:
                      one streaming pass standardises the training rows (a row is held out by a hash of its
                      index), the first 20000 training rows place the inducing inputs, the first 20000 test rows
                      are scored, and each worker reads only its shard
  --target COLUMN     the column to predict (required with --csv, or --targets)
  --targets A,B,...   several real-valued columns to predict: a model with one output per column, each column
                      standardised on its own (independent latent GPs sharing the kernel and Z, or --lmc). An
                      empty cell in a target column is a missing target: that output is unobserved on that row,
                      left out of the likelihood (%[10]s) while the row informs the other outputs; the
                      test metrics are over the observed cells. gpzoo predict writes mean_A, variance_A, std_A, ...
  --lmc L             with several targets: L latent GPs mixed into the outputs by a learnt matrix W (a linear
                      model of coregionalisation: correlated outputs; svgp, decoupled, hybrid, orth, orthnat,
                      and a coupled dgp's last layer;
                      W starts from the targets' principal directions; default: independent outputs)
  --features A,B,...  the input columns (default: every other column)
  --dataset NAME      instead of --csv: a benchmark data set (below), trained on the training rows of split
                      --split K of its protocol and scored on that split's test rows (the UCI sets of
                      uci-regression-dropout: the 20 standard splits, protein 5); --test-fraction does not apply
  --split K           the split of --dataset (default 0)
  --data DIR          the benchmark data directory of --dataset (default $%[9]s)
  --model FAMILY      %[1]s (default svgp)
  --kernel EXPR       the kernel of every layer: one of the kernels below (matern52) or an expression of them
                      with + and * and parentheses (se+per*lin; case-insensitive, * binds tighter than +);
                      a kernel followed by [i,j,...] acts on those input columns only (se[0]*coregion[1]: a
                      task column, left unstandardised);
                      ARD: one length-scale per input, one variance per input for linear (default se, SE-ARD);
                      a dgp's inner layers add a small white-noise term
  --likelihood L      one of the likelihoods below (default: gaussian; bernoulli for 2 classes, robustmax
                      for more); a classification likelihood implies --classify. With --model gpr, a likelihood
                      other than gaussian (bernoulli, bernoulli-logit, poisson, studentt; softmax for several
                      classes) makes an exact GP whose posterior is approximated (--inference)
  --inference A       gpr with a non-Gaussian likelihood: laplace (the Laplace approximation: a Gaussian at the
                      posterior's mode) or ep (expectation propagation: the more accurate, Kuss & Rasmussen 2005);
                      default ep for two classes, laplace otherwise (softmax: laplace only, R&W §3.5; C·N at
                      most %[17]d). (These are approximate inference methods,
                      not likelihoods: the likelihood "example-laplace" of examples/customlikelihood is the
                      Laplace distribution.) docs/laplace-ep.md says when to use which
  --restarts R        gpr with --inference: L-BFGS starts from R initial kernel settings, the best kept
                      (default %[11]d)
  --classify          the target holds integer class labels
  --inducing M        inducing inputs per layer (default 100)
  --mean-bases K      extra mean bases of decoupled, hybrid, orth, orthnat (default 2M)
  --layers W1,W2,...  hidden-layer widths of a dgp (default one layer of width min(D, 10))
  --layer-family F    coupled or decoupled layers of a dgp (default coupled)
  --iters N           exactly N training steps, no convergence criterion (gpr and sgpr: at most N L-BFGS
                      iterations, default 200)
  --max-iters N       train until converged, at most N steps (the default, with N = %[7]d; not with --iters;
                      not for gpr and sgpr)
  --max-train-rows N  train on at most N training rows, drawn without replacement by --seed's generator
                      (after the held-out split; the test rows are kept)
  --batch B           minibatch size (default min(N, 1024))
  --lr R              Adam learning rate (default 0.01)
  --test-fraction F   share of rows held out and scored (default 0.1; 0: none)
  --seed S            seed of the split, initialisation and minibatches (default 1)
  --natgrad           natural-gradient steps on q(u) (svgp, orth; a dgp's coupled last layer)
  --solver S          gpr's solver: auto (default), cholesky or cg. auto takes Cholesky while its fit takes at
                      most --memory (about 14·8·N² bytes: up to 6,192 training rows with the default), conjugate
                      gradients beyond (BBMM: docs/exact-gp-at-scale.md). A CG fit starts from hyperparameters
                      fitted by L-BFGS and Cholesky on --subset random rows, then takes --iters Adam steps (default
                      %[14]d, --lr default %[15]g) on every row; it predicts means from a solve to a tight tolerance
                      and variances by LOVE, or both by K̂'s Cholesky factorisation within --memory where the solve
                      or LOVE's check at training rows fails
  --memory SIZE       gpr's memory budget (default 4GiB; units B, KiB, MiB, GiB, KB, MB, GB): the Cholesky fit's
                      when choosing the solver, and the kernel matrix's a CG fit keeps whole (8·N² bytes; beyond
                      it the kernel is recomputed by blocks at every product, in O(N) memory)
  --precond-rank K    CG: rank of the pivoted-Cholesky preconditioner (default 100, from 2000 rows; 0: none)
  --max-precond-rank K
                      CG: a training solve stopped by the iteration cap doubles the preconditioner's rank and runs
                      again, up to K (default 1000; 0: never, the capped solve stays a counted warning)
  --probes T          CG: probe vectors of the log-determinant and trace estimates (default 10)
  --cg-tol TOL        CG: relative residual of the training solves (default 1, GPyTorch's)
  --subset N          CG: inputs of the L-BFGS + Cholesky start, distinct, with their repeats (default %[16]d; 0: none)
  --variances V       CG: how predictive variances are computed: love (default: a LOVE cache of %[18]d Lanczos
                      vectors beside %[19]d pivoted-Cholesky directions, checked at training rows) or exact (CG
                      solves to the prediction tolerance for every block of predicted rows, at each prediction)
  --love-rank K       CG: Lanczos vectors of the LOVE cache (default %[18]d)
  --save FILE.gpz     where to save the model, replacing FILE if it exists (default: the CSV's name with .gpz,
                      which is never replaced: train refuses to start when it exists, unless --force)
  --force             replace the default model file if it exists
  --out FILE.json     also write the metrics as JSON
  --plots DIR         draw the training curve, the reliability diagram (classifiers) and, for one input
                      column and one complete target, the predictive mean ± 2σ with the data, as PNG and SVG
  --checkpoint DIR    checkpoint training in DIR (at the end, every --checkpoint-every K steps, on SIGINT/SIGTERM);
                      --resume continues from it and ends exactly as an uninterrupted run would
  --quiet             no progress output
  --workers K         train on a parameter server and K worker processes over NATS (the families that are sums
                      over rows; gpzoo cluster help): each worker takes --batch B rows of its shard per gradient;
                      gpr trains by conjugate gradients, the K workers computing its kernel products
  --tau T             with --workers: delay bound τ (default 0: synchronous)
  --nats URL          with --workers: an external NATS server (default: an embedded one on loopback), reached
                      with the security flags of gpzoo cluster (--creds, --nkey, --token-file, --tls-ca, --tls-cert,
                      --tls-key; beyond loopback always over TLS)
  --run NAME          with --workers: the run's name on the NATS server (default: a fresh one)

Priors and MCMC (docs/priors-and-mcmc.md):
  --prior SEL=PRIOR   a prior on the parameters SEL selects, e.g. --prior lengthscale=lognormal(0,1)
                      --prior noise=gamma(2,0.5); repeatable, a later one overriding an earlier one. SEL is
                      a parameter name or its last components (lengthscales, variance, noise = likelihood.variance,
                      layer1.lengthscales, per.period; * matches one component); the fit is then MAP (the loss
                      gains −log p(θ)). A malformed prior is refused before the data are read
  --mcmc nuts         after the fit, sample the hyperparameters' posterior with NUTS (gpr, sgpr with Z fixed;
                      gpr with a non-Gaussian --likelihood: over the --inference marginal if given, else jointly
                      with the latent values, GPMC); every sampled
                      parameter needs a --prior. The model file then predicts the mixture over the draws
  --mcmc-samples S    draws per chain after warmup (default 1000)
  --mcmc-warmup W     warmup (adaptation) iterations per chain (default 1000)
  --chains C          chains, run in parallel (default 4)
  --mcmc-keep K       draws the model file keeps for prediction (default %[12]d)
  --target-accept A   NUTS's target acceptance statistic in (0, 1) (default 0.8; raise it against divergences)
  --max-treedepth D   NUTS's maximum tree depth (default 10)
  --mcmc-draws FILE   also write every draw of the hyperparameters (constrained units) as CSV

Priors (every registered prior family; SEL=NAME(ARGS)):
%[13]s
Kernels (every registered kernel family; per, lin are short for periodic, linear):
%[2]s
Likelihoods (every registered likelihood family):
%[3]s
Benchmark data sets (--dataset; gpzoo data list shows which are present in DIR):
%[8]s
`

func trainCmd(args []string, stdout, stderr io.Writer) error {
	return trainCmdWith(args, nil, stdout, stderr)
}

// trainCmdWith is `gpzoo train`; onCluster (non-nil for `gpzoo cluster local|serve --csv`) completes a cluster
// run's configuration: how its workers start and where its NATS server is. Without it, --workers K starts K
// worker processes of this program (`gpzoo cluster work`) on the embedded NATS server.
func trainCmdWith(args []string, onCluster func(c *zoo.CustomConfig) (cleanup func(), err error), stdout, stderr io.Writer) error {
	fs := newFlagSet("train", stderr)
	fs.Usage = func() {
		cc := train.DefaultConverge
		fmt.Fprintf(stderr, trainUsage, strings.Join(zoo.Families, ", "), kernelHelp(), likelihoodHelp(),
			cc.Window, cc.Tol, cc.Patience, zoo.DefaultMaxIters, wrapList(zoo.DataSets(), "  ", 110), datasets.EnvDataDir,
			strings.Join(missingTargetLikelihoods(), ", "), zoo.DefaultApproxRestarts, bayes.DefaultKeep, priorHelp(),
			zoo.DefaultCGIters, zoo.DefaultCGLR, zoo.DefaultSubset, ops.MaxSoftmaxLaplaceSize, zoo.DefaultLOVERank, zoo.DefaultLOVEPrecondRank)
	}
	csvPath := fs.String("csv", "", "CSV file")
	rowsPath := fs.String("rows", "", "row file (.gpzr) or CSV its workers read by shard")
	target := fs.String("target", "", "target column")
	targetList := fs.String("targets", "", "target columns")
	lmc := fs.Int("lmc", 0, "latent GPs of a linear model of coregionalisation")
	features := fs.String("features", "", "input columns")
	family := fs.String("model", "svgp", "model family")
	lik := fs.String("likelihood", "", "likelihood")
	inference := fs.String("inference", "", "approximate inference of gpr with a non-Gaussian likelihood: laplace or ep")
	restarts := fs.Int("restarts", 0, "L-BFGS starts of gpr with --inference")
	kernel := fs.String("kernel", "", "kernel expression")
	classify := fs.Bool("classify", false, "classification target")
	inducing := fs.Int("inducing", 0, "inducing inputs")
	meanBases := fs.Int("mean-bases", 0, "extra mean bases")
	hidden := fs.String("layers", "", "hidden widths")
	layerFamily := fs.String("layer-family", "", "dgp layer family")
	iters := fs.Int("iters", 0, "steps")
	maxIters := fs.Int("max-iters", 0, "cap on the steps of a run that stops when converged")
	maxRows := fs.Int("max-train-rows", 0, "subsample the training rows")
	dataset := fs.String("dataset", "", "benchmark data set")
	split := fs.Int("split", 0, "split of the benchmark data set")
	dataDir := fs.String("data", datasets.DefaultDir(), "benchmark data directory")
	batch := fs.Int("batch", 0, "minibatch size")
	lr := fs.Float64("lr", 0, "learning rate")
	testFrac := fs.Float64("test-fraction", 0.1, "held-out share")
	seed := fs.Uint64("seed", 1, "seed")
	natgrad := fs.Bool("natgrad", false, "natural gradients")
	save := fs.String("save", "", "model file")
	force := fs.Bool("force", false, "replace the default model file")
	out := fs.String("out", "", "JSON result")
	plotDir := fs.String("plots", "", "directory for the figures")
	ckDir := fs.String("checkpoint", "", "checkpoint directory")
	ckEvery := fs.Int("checkpoint-every", 0, "checkpoint period in steps")
	resume := fs.Bool("resume", false, "resume from the checkpoint")
	quiet := fs.Bool("quiet", false, "no progress")
	workers := fs.Int("workers", 0, "cluster workers")
	tau := fs.Int("tau", 0, "cluster: delay bound")
	natsURL := fs.String("nats", "", "cluster: external NATS server")
	natsRun := fs.String("run", "", "cluster: run name")
	security := cluster.SecurityFlags(fs)
	var priorArgs []string
	fs.Func("prior", "a prior SELECTOR=NAME(ARGS) (repeatable)", func(v string) error { priorArgs = append(priorArgs, v); return nil })
	mc := mcmcFlags(fs)
	exact := exactFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("train: unexpected arguments %q (see gpzoo train --help)", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	targets := splitList(*targetList)
	if set["targets"] {
		if set["target"] {
			return errors.New("train: --target COLUMN (one output) and --targets A,B,... (several) exclude each other")
		}
		if len(targets) == 0 {
			return errors.New("train: --targets: want a comma-separated list of target columns")
		}
		if *classify {
			return errors.New("train: --targets are real-valued outputs: --classify takes one --target of class labels")
		}
		*target = strings.Join(targets, ",") // for checkSource: a target is named
	}
	if set["lmc"] && *lmc < 1 {
		return fmt.Errorf("train: --lmc %d: want at least 1 latent GP", *lmc)
	}
	if *rowsPath != "" {
		if err := checkRows(set, *rowsPath, *target, targets); err != nil {
			return err
		}
	} else if err := checkSource(set, *csvPath, *target, *dataset, *split); err != nil {
		return err
	}
	if err := checkTrainFlags(set, *family, *iters, *inducing, *meanBases, *batch, *ckEvery, *lr, *testFrac); err != nil {
		return err
	}
	if err := checkInference(set, *family, *inference, *restarts); err != nil {
		return err
	}
	if err := checkLength(set, *family, *maxIters, *maxRows); err != nil {
		return err
	}
	priors, err := parsePriors(priorArgs) // before any data are read
	if err != nil {
		return err
	}
	mcmcCfg, err := mc.config(set, *family)
	if err != nil {
		return err
	}
	exactOpts, err := exact(set, *family)
	if err != nil {
		return err
	}
	if (set["tau"] || set["nats"] || set["run"]) && !set["workers"] {
		return errors.New("train: --tau, --nats and --run are for a cluster run: add --workers K")
	}
	if set["workers"] && (*workers < 1 || *tau < 0) {
		return fmt.Errorf("train: --workers %d --tau %d: want K ≥ 1 workers and τ ≥ 0", *workers, *tau)
	}
	if set["workers"] && !zoo.Clusterable(*family) {
		return fmt.Errorf("train: --workers: %w (--model %s)", zoo.ErrNotRowSum, *family)
	}
	*lik = strings.ToLower(strings.TrimSpace(*lik))
	likFam, known := gp.LookupLikelihood(*lik)
	if *lik != "" && !known {
		return fmt.Errorf("train: --likelihood %q: want one of %s (see gpzoo train --help)", *lik, strings.Join(zoo.LikelihoodNames(), ", "))
	}
	kexpr, err := zoo.ParseKernel(*kernel)
	if err != nil {
		return fmt.Errorf("train: --kernel %q: %w (see gpzoo train --help)", *kernel, err)
	}
	if *resume && *ckDir == "" {
		return errors.New("train: --resume needs --checkpoint DIR (the folder of the checkpoint to continue from)")
	}
	if *save != "" && *csvPath != "" && sameFile(*save, *csvPath) {
		return fmt.Errorf("train: --save %s is the data file --csv %s: choose another model file", *save, *csvPath)
	}
	if *save != "" {
		if err := modelfile.CheckSavePath(*save); err != nil {
			return fmt.Errorf("train: --save: %w", err)
		}
	}
	if likFam.Classes {
		*classify = true
	}
	// The default model file is derived from the CSV's name, so a second run on the same file (another --model,
	// say) would silently replace the first model: refuse before training, unless asked to (--save, --force).
	savePath := *save
	if savePath == "" {
		savePath = strings.TrimSuffix(filepath.Base(*csvPath), filepath.Ext(*csvPath)) + ".gpz"
		if *rowsPath != "" {
			savePath = strings.TrimSuffix(filepath.Base(*rowsPath), filepath.Ext(*rowsPath)) + ".gpz"
		}
		if *dataset != "" {
			savePath = fmt.Sprintf("%s-split%d.gpz", *dataset, *split)
		}
		if err := refuseExisting(savePath, *force); err != nil {
			return err
		}
	}
	if *testFrac <= 0 {
		*testFrac = -1 // CustomConfig: negative means none, 0 the default
	}
	widths, err := parseInts(*hidden)
	if err != nil {
		return fmt.Errorf("train: --layers: %w", err)
	}
	c := zoo.CustomConfig{Family: *family, Likelihood: *lik, Kernel: kexpr.String(), Inducing: *inducing, MeanBases: *meanBases, Hidden: widths,
		LayerFamily: *layerFamily, Iters: *iters, MaxIters: *maxIters, MaxTrainRows: *maxRows, BatchSize: *batch, LR: *lr,
		TestFraction: *testFrac, Seed: *seed, NatGrad: *natgrad, CheckpointDir: *ckDir, CheckpointEvery: *ckEvery, Resume: *resume, LMC: *lmc,
		Inference: *inference, Restarts: *restarts, Priors: priors, MCMC: mcmcCfg,
		Exact: exactOpts}
	// SIGINT/SIGTERM end training after the current step (checkpointing it with --checkpoint); a second quits.
	ctx, stop := interruptContext()
	defer stop()
	c.Stop = ctx.Done()
	sec, err := security() // checked whenever given, used with --nats (the embedded server on loopback needs none)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if set["workers"] {
		c.Cluster = &zoo.ClusterConfig{Workers: *workers, Tau: *tau, URL: *natsURL, Run: *natsRun}
		if *natsURL != "" {
			c.Cluster.Security = sec
		}
	}
	if onCluster != nil {
		cleanup, err := onCluster(&c)
		if err != nil {
			return err
		}
		defer cleanup()
	} else if c.Cluster != nil {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c.Cluster.Spawn = cluster.Command(exe, "cluster", "work")
	}
	if !*quiet {
		// A terminal gets one live progress line; a log file or pipe gets log/slog lines.
		if isTerminal(stderr) {
			c.Progress = stderr
		} else {
			c.Logger = slog.New(slog.NewTextHandler(stderr, nil))
		}
	}
	var (
		run  *zoo.Custom
		data *datasets.Dataset // the CSV's rows (for the 1-D plot)
	)
	switch {
	case *rowsPath != "":
		src := datasets.RowSource{Path: *rowsPath, Features: splitList(*features)}
		if *target != "" {
			src.Targets = []string{*target}
		}
		fmt.Fprintf(stdout, "gpzoo train --rows %s: each of %d workers reads only its shard; model %s, kernel %s\n", *rowsPath, *workers, *family, kexpr)
		if run, err = zoo.TrainRows(src, c, zoo.RowsConfig{}); err != nil {
			return err
		}
	case *dataset != "":
		fmt.Fprintf(stdout, "gpzoo train --dataset %s --split %d (data %s): model %s, kernel %s\n", *dataset, *split, *dataDir, *family, kexpr)
		if run, err = zoo.TrainSplit(*dataset, *dataDir, *split, c); err != nil {
			return err
		}
	default:
		opts := datasets.TableOptions{Target: *target, Features: splitList(*features), Classify: *classify}
		if targets != nil {
			opts.Target, opts.Targets = "", targets
		}
		tbl, err := datasets.LoadTable(*csvPath, opts)
		if err != nil {
			return err
		}
		tbl.Data.Name = filepath.Base(*csvPath)
		c.Target, data = tbl.Target, tbl.Data
		kind := "regression"
		if likFam.RawTargets {
			kind = "regression, " + likFam.Name + ": not standardised"
		}
		if tbl.Data.NumClasses > 0 {
			kind = fmt.Sprintf("classification, %d classes", tbl.Data.NumClasses)
		}
		what := fmt.Sprintf("target %q", *target)
		if targets != nil {
			what = fmt.Sprintf("targets %s", quoteList(tbl.Targets))
			kind = fmt.Sprintf("%d outputs", len(tbl.Targets))
			if len(tbl.Targets) == 1 {
				kind = "1 output"
			}
			if *lmc > 0 {
				kind += fmt.Sprintf(", LMC of %d latent GPs", *lmc)
			}
			if k := tbl.Data.MissingTargets(); k > 0 {
				kind += fmt.Sprintf("; %d of %d target cells empty: unobserved, left out of the likelihood", k, tbl.Data.N()*tbl.Data.P())
			}
		}
		fmt.Fprintf(stdout, "gpzoo train %s: %d rows, %d features, %s (%s), %s-separated, model %s, kernel %s\n", *csvPath, tbl.Data.N(),
			tbl.Data.D(), what, kind, datasets.DelimiterName(tbl.Delimiter), *family, kexpr)
		if run, err = zoo.TrainCustom(tbl.Data, c); err != nil {
			if errors.Is(err, train.ErrInterrupted) && *ckDir != "" {
				fmt.Fprintf(stdout, "interrupted: checkpoint saved in %s; continue with the same command and --resume\n", *ckDir)
			}
			return err
		}
		if targets == nil {
			run.File.Meta["target"] = tbl.Target
		} else { // gpzoo predict and serve name the columns mean_<target>, ... (modelfile.File.OutputNames)
			names, _ := json.Marshal(tbl.Targets)
			run.File.Meta["targets"] = string(names)
		}
		if len(tbl.Labels) > 0 {
			labels, _ := json.Marshal(tbl.Labels)
			run.File.Meta["labels"] = string(labels)
		}
	}
	f := run.File
	if *save == "" { // checked again: the file may have appeared while training
		if err := refuseExisting(savePath, *force); err != nil {
			return err
		}
	}
	if err := modelfile.SaveFile(savePath, f); err != nil {
		return err
	}
	if *mc.draws != "" && run.MCMC != nil {
		if err := writeDraws(*mc.draws, run.MCMC); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  wrote the draws to %s\n", *mc.draws)
	}
	run.Result.ModelFile = savePath
	fmt.Fprint(stdout, run.Result.Summary())
	fmt.Fprintf(stdout, "  saved the model to %s (gpzoo predict --model %s --input X.csv --out Y.csv)\n", savePath, savePath)
	if *plotDir != "" {
		files, err := run.Result.WritePlots(*plotDir)
		if err != nil {
			return err
		}
		if data != nil && data.D() == 1 && data.NumClasses == 0 && data.P() == 1 && data.Observed == nil {
			more, err := plotPredictive1D(*plotDir, f, data)
			if err != nil {
				return err
			}
			files = append(files, more...)
		}
		fmt.Fprintf(stdout, "  plots: %s\n", strings.Join(files, " "))
	}
	if *out != "" {
		if err := run.Result.SaveJSON(*out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  wrote %s\n", *out)
	}
	return nil
}

// checkRows checks the flags of a run on a file its workers read by shard (--rows): it needs --workers, takes
// one --target (a CSV's; a row file's targets are in its header) and excludes --csv, --dataset and the flags of
// an in-memory table.
func checkRows(set map[string]bool, path, target string, targets []string) error {
	switch {
	case !set["workers"]:
		return errors.New("train: --rows FILE trains on workers that read only their shard: add --workers K")
	case set["csv"] || set["dataset"]:
		return errors.New("train: --rows, --csv and --dataset exclude each other")
	case targets != nil || set["classify"] || set["lmc"] || set["max-train-rows"]:
		return errors.New("train: --rows: one real-valued target (--targets, --classify, --lmc and --max-train-rows are for --csv)")
	case datasets.SourceFormat(path) == datasets.FormatCSV && target == "":
		return errors.New("train: --rows FILE.csv needs --target COLUMN (a row file's targets are in its header)")
	}
	return nil
}

// checkTrainFlags refuses flag values train cannot honour, naming the flag: counts below 1 where a count is
// needed (a flag left unset keeps its default), a learning rate outside (0, 1], a test fraction outside [0, 1),
// and Adam's flags given to the L-BFGS families (gpr, sgpr), where they would be silently ignored.
func checkTrainFlags(set map[string]bool, family string, iters, inducing, meanBases, batch, ckEvery int, lr, testFrac float64) error {
	for _, c := range []struct {
		name string
		v    int
	}{{"iters", iters}, {"inducing", inducing}, {"mean-bases", meanBases}, {"batch", batch}, {"checkpoint-every", ckEvery}} {
		if set[c.name] && c.v < 1 {
			return fmt.Errorf("train: --%s %d: want a count of at least 1", c.name, c.v)
		}
	}
	if set["lr"] && !(lr > 0 && lr <= 1) {
		return fmt.Errorf("train: --lr %g: want a learning rate in (0, 1] (Adam moves every raw parameter by up to lr a step; 0.001–0.1 is usual)", lr)
	}
	if !(testFrac >= 0 && testFrac < 1) {
		return fmt.Errorf("train: --test-fraction %g: want a share in [0, 1) (0: no held-out rows)", testFrac)
	}
	if f := strings.ToLower(family); f == "gpr" || f == "sgpr" {
		for _, name := range []string{"lr", "batch", "natgrad", "checkpoint", "checkpoint-every", "resume", "layers", "layer-family", "mean-bases"} {
			if !set[name] || f == "gpr" && slices.Contains(cgFlags, name) {
				continue // gpr by CG trains with Adam (exactFlags refuses them with --solver cholesky)
			}
			return fmt.Errorf("train: --%s does not apply to --model %s (full-batch L-BFGS on the exact objective; gpr by CG takes --lr and checkpoints)", name, family)
		}
	}
	return nil
}

// checkInference refuses --inference and --restarts where they do not apply, naming the flag, before any data
// are read: an approximation is for --model gpr (whether the likelihood needs one is checked with the data's
// target), laplace or ep; restarts need a count ≥ 1.
func checkInference(set map[string]bool, family, inference string, restarts int) error {
	if set["inference"] {
		if f := strings.ToLower(family); f != "gpr" {
			return fmt.Errorf("train: --inference %s approximates an exact GP's posterior: use it with --model gpr (not %s)", inference, family)
		}
		if i := strings.ToLower(inference); i != "laplace" && i != "ep" {
			return fmt.Errorf("train: --inference %q: want laplace or ep", inference)
		}
	}
	if set["restarts"] {
		if restarts < 1 {
			return fmt.Errorf("train: --restarts %d: want a count of at least 1", restarts)
		}
		if strings.ToLower(family) != "gpr" {
			return fmt.Errorf("train: --restarts is for --model gpr with a non-Gaussian likelihood (--inference)")
		}
	}
	return nil
}

// cgFlags are the flags of Adam training that gpr takes when it trains by conjugate gradients.
var cgFlags = []string{"lr", "checkpoint", "checkpoint-every", "resume"}

// rankOption returns the option of a rank flag: its value, −1 when set to 0 (what zero means), 0 (the default)
// when unset, an error when negative.
func rankOption(set map[string]bool, name string, v int, zero string) (int, error) {
	switch {
	case v < 0:
		return 0, fmt.Errorf("train: --%s %d: want a rank ≥ 0 (0: %s)", name, v, zero)
	case set[name] && v == 0:
		return -1, nil
	}
	return v, nil
}

// exactFlags declares gpr's solver flags on fs and returns their check, which makes them a zoo.ExactOptions (an
// error for a family other than gpr, or a value out of range).
func exactFlags(fs *flag.FlagSet) func(set map[string]bool, family string) (zoo.ExactOptions, error) {
	solver := fs.String("solver", "auto", "gpr: auto, cholesky or cg")
	memory := fs.String("memory", "", "gpr: memory budget (4GiB)")
	rank := fs.Int("precond-rank", 0, "gpr CG: preconditioner rank")
	maxRank := fs.Int("max-precond-rank", 0, "gpr CG: largest raised preconditioner rank")
	probes := fs.Int("probes", 0, "gpr CG: probe vectors")
	tol := fs.Float64("cg-tol", 0, "gpr CG: training tolerance")
	subset := fs.Int("subset", 0, "gpr CG: rows of the subset start")
	variances := fs.String("variances", "love", "gpr CG: love or exact")
	loveRank := fs.Int("love-rank", 0, "gpr CG: Lanczos vectors of the LOVE cache")
	return func(set map[string]bool, family string) (zoo.ExactOptions, error) {
		var o zoo.ExactOptions
		names := []string{"solver", "memory", "precond-rank", "max-precond-rank", "probes", "cg-tol", "subset", "variances", "love-rank"}
		if !strings.EqualFold(family, "gpr") {
			for _, n := range names {
				if set[n] {
					return o, fmt.Errorf("train: --%s is for --model gpr (the exact GP's solver), not %s", n, family)
				}
			}
			return o, nil
		}
		switch o.Solver = strings.ToLower(*solver); o.Solver {
		case "auto", "cholesky", "cg":
		default:
			return o, fmt.Errorf("train: --solver %q: want auto, cholesky or cg", *solver)
		}
		if o.Solver == "cholesky" {
			for _, n := range append(names[2:], cgFlags...) {
				if set[n] {
					return o, fmt.Errorf("train: --%s is for the CG solver (Adam steps), not --solver cholesky (L-BFGS)", n)
				}
			}
		}
		if set["memory"] {
			b, err := parseBytes(*memory)
			if err != nil || b < 1 {
				return o, fmt.Errorf("train: --memory %q: want a size such as 4GiB or 512MiB", *memory)
			}
			o.Memory = b
		}
		var err error
		if o.PrecondRank, err = rankOption(set, "precond-rank", *rank, "no preconditioner"); err != nil {
			return o, err
		}
		if o.MaxPrecondRank, err = rankOption(set, "max-precond-rank", *maxRank, "never raised"); err != nil {
			return o, err
		}
		if set["probes"] && *probes < 1 {
			return o, fmt.Errorf("train: --probes %d: want at least 1 probe vector", *probes)
		}
		o.Probes = *probes
		if set["cg-tol"] && !(*tol > 0 && !math.IsInf(*tol, 0)) {
			return o, fmt.Errorf("train: --cg-tol %g: want a positive relative residual", *tol)
		}
		o.CGTol = *tol
		switch {
		case set["subset"] && *subset < 0:
			return o, fmt.Errorf("train: --subset %d: want a number of rows ≥ 0 (0: no subset start)", *subset)
		case set["subset"] && *subset == 0:
			o.Subset = -1
		case set["subset"] && *subset < 2:
			return o, fmt.Errorf("train: --subset %d: want at least 2 rows (0: none)", *subset)
		default:
			o.Subset = *subset
		}
		switch strings.ToLower(*variances) {
		case "love":
		case "exact":
			o.ExactVariance = true
		default:
			return o, fmt.Errorf("train: --variances %q: want love or exact", *variances)
		}
		switch {
		case set["love-rank"] && o.ExactVariance:
			return o, errors.New("train: --love-rank sets the LOVE cache, which --variances exact does not build")
		case set["love-rank"] && *loveRank < 1:
			return o, fmt.Errorf("train: --love-rank %d: want at least 1 Lanczos vector", *loveRank)
		}
		o.LOVERank = *loveRank
		return o, nil
	}
}

// parseBytes parses a size: an integer number of bytes, or a number followed by B, KiB, MiB, GiB, KB, MB or GB.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := 1.0
	for _, u := range units { // the longer suffixes first: "GB" before "B"
		if strings.HasSuffix(strings.ToUpper(s), strings.ToUpper(u.suffix)) {
			s, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q", s)
	}
	return int64(v * mult), nil
}

// checkSource checks that exactly one data source is named: --csv FILE with --target COLUMN, or --dataset NAME
// (with --split K ≥ 0 and --data DIR; --csv's flags --target, --features and --test-fraction do not apply).
func checkSource(set map[string]bool, csvPath, target, dataset string, split int) error {
	switch {
	case csvPath != "" && dataset != "":
		return errors.New("train: --csv and --dataset exclude each other: train on your CSV or on a benchmark data set")
	case dataset != "":
		for _, name := range []string{"target", "targets", "features", "test-fraction", "classify"} {
			if set[name] {
				return fmt.Errorf("train: --%s does not apply to --dataset (a benchmark set has its target and its test split)", name)
			}
		}
		if split < 0 {
			return fmt.Errorf("train: --split %d: want a split index ≥ 0", split)
		}
		return nil
	case set["split"] || set["data"]:
		return errors.New("train: --split and --data select a split of a benchmark data set: use them with --dataset NAME")
	case csvPath == "" || target == "":
		return errors.New("train: --csv FILE and --target COLUMN (or --targets A,B,...) are required, or --dataset NAME (see gpzoo train --help)")
	}
	return nil
}

// checkLength checks the training-length flags: --max-iters (a cap on a run that stops when converged; not for
// gpr and sgpr, whose L-BFGS takes --iters) excludes --iters (exactly N steps), and --max-train-rows needs at
// least 2 rows.
func checkLength(set map[string]bool, family string, maxIters, maxRows int) error {
	if set["max-iters"] {
		if set["iters"] {
			return errors.New("train: --iters N (exactly N steps) and --max-iters N (at most N, stopping when converged) exclude each other")
		}
		if maxIters < 1 {
			return fmt.Errorf("train: --max-iters %d: want a count of at least 1", maxIters)
		}
		if f := strings.ToLower(family); f == "gpr" || f == "sgpr" {
			return fmt.Errorf("train: --max-iters does not apply to --model %s (L-BFGS stops when it converges, within --iters iterations)", family)
		}
	}
	if set["max-train-rows"] && maxRows < 2 {
		return fmt.Errorf("train: --max-train-rows %d: want at least 2 rows", maxRows)
	}
	return nil
}

// wrapList joins items with ", " into lines of at most width characters, each starting with indent.
func wrapList(items []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for i, it := range items {
		sep := ", "
		if i == len(items)-1 {
			sep = ""
		}
		if len(line) > len(indent) && len(line)+len(it)+len(sep) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		line += it + sep
	}
	return b.String() + line
}

// kernelHelp lists the registered kernel families, one a line with its Doc, for train's help.
func kernelHelp() string {
	var b strings.Builder
	for _, f := range gp.KernelFamilies() {
		fmt.Fprintf(&b, "  %-18s  %s\n", f.Name, f.Doc)
	}
	return b.String()
}

// missingTargetLikelihoods names the registered likelihood families that leave missing targets out
// (gp.LikelihoodFamily.MissingTargets).
func missingTargetLikelihoods() []string {
	var names []string
	for _, f := range gp.LikelihoodFamilies() {
		if f.MissingTargets {
			names = append(names, f.Name)
		}
	}
	return names
}

// likelihoodHelp lists the registered likelihood families, one a line with its Doc, for train's help.
func likelihoodHelp() string {
	var b strings.Builder
	for _, f := range gp.LikelihoodFamilies() {
		fmt.Fprintf(&b, "  %-18s  %s\n", f.Name, f.Doc)
	}
	return b.String()
}

// sameFile reports whether paths a and b name one existing file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// refuseExisting returns an error naming path when something exists there and force is not set.
func refuseExisting(path string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("train: %s exists (the default model file for this data): pass --save FILE to write another file, or --force to replace it", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("train: checking the default model file: %w", err)
	}
	return nil
}

// quoteList quotes names and joins them with ", ".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// splitList splits a comma-separated list, dropping empty items (nil for "").
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseInts parses a comma-separated list of positive integers (nil for "").
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// plotPredictive1D draws the predictive mean ± 2σ of a one-input regression model over the range of its data,
// with the data (inducing inputs are not drawn).
func plotPredictive1D(dir string, f *modelfile.File, d *datasets.Dataset) ([]string, error) {
	const points = 200
	lo, hi := mat.Min(d.X), mat.Max(d.X)
	pad := 0.05 * (hi - lo)
	grid := mat.NewDense(points, 1, nil)
	for i := 0; i < points; i++ {
		grid.Set(i, 0, lo-pad+(hi-lo+2*pad)*float64(i)/(points-1))
	}
	p, err := f.Predict(grid, modelfile.PredictOptions{})
	if err != nil {
		return nil, err
	}
	sd := make([]float64, points)
	for i := range sd {
		sd[i] = math.Sqrt(p.Var.At(i, 0))
	}
	return zoo.DrawBoth(dir, "predictive", func(path string) error {
		return plots.Predictive1D(path, d.Name+": predictive mean ± 2σ", mat.Col(nil, 0, grid), mat.Col(nil, 0, p.Mean), sd,
			mat.Col(nil, 0, d.X), mat.Col(nil, 0, d.Y), nil)
	})
}
