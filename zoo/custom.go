package zoo

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
)

// Families are the model families TrainCustom builds from a name: the exact GP, SGPR, the coupled SVGP, the
// decoupled-basis layers (DECOUPLED, HYBRID, ORTH, ORTHNAT) and the deep GP.
var Families = []string{"gpr", "sgpr", "svgp", "decoupled", "hybrid", "orth", "orthnat", "dgp"}

// ErrBadCustom marks an invalid CustomConfig (unknown family or likelihood, a likelihood that does not fit the
// target).
var ErrBadCustom = errors.New("zoo: invalid model configuration")

// CustomConfig configures TrainCustom. Zero values mean the documented defaults.
type CustomConfig struct {
	// Family is one of Families (default "svgp").
	Family string
	// Likelihood names a registered likelihood family (gp.LikelihoodFamilies; "" = by the target: gaussian, or
	// bernoulli/robustmax for classes). A family with RawTargets (poisson) trains on the targets in their own
	// units, and its CheckTarget refuses values it cannot model before training.
	Likelihood string
	// Target names the target column in error messages (default "target column j").
	Target string
	// LMC > 0 mixes LMC latent GPs (one layer block sharing the kernel and Z) into the P target columns' outputs by a
	// learnt W [P, LMC] (layers.LMC; svgp, decoupled, hybrid, orth, orthnat; a coupled dgp's last layer); 0: P independent latent GPs sharing
	// the kernel and Z (multioutput.go). Missing targets (Dataset.Observed) are left out of the likelihood.
	LMC int
	// Kernel is the kernel of every layer (ParseKernel: a registered kernel name or an expression of gp/grammar
	// such as "se+per*lin"; "" = DefaultKernel, SE-ARD). Length-scales are ARD; a deep GP's inner layers add
	// their White term to it. withDefaults stores it in canonical form.
	Kernel string
	// Inducing is M, the (covariance) inducing inputs per layer (default min(100, N)); MeanBases the extra mean
	// bases |γ| (hybrid, orth, orthnat) or |α| (decoupled), default 2·Inducing.
	Inducing, MeanBases int
	// Hidden are the hidden-layer widths of a deep GP (default one layer of width min(D, 10)); LayerFamily is its
	// layers' family: "coupled" (default) or "decoupled" (Havasi et al.'s μ_GPcent + S-form).
	Hidden      []int
	LayerFamily string
	// Iters is an exact number of training steps (Adam) or the L-BFGS iterations' bound (gpr and sgpr, default
	// 200). MaxIters caps Adam training that stops when the convergence criterion Converge is met (train.Config's
	// Converge; nil: train.DefaultConverge). Given neither, the Adam-trained families (svgp, decoupled, hybrid,
	// orth, orthnat, dgp) converge with the cap DefaultMaxIters; Iters and MaxIters exclude each other, and
	// L-BFGS takes no MaxIters. BatchSize (default min(N, 1024); full batch for gpr and sgpr) and LR (Adam,
	// default 0.01).
	Iters, MaxIters, BatchSize int
	Converge                   *train.ConvergeConfig
	LR                         float64
	// Optimizer is "lbfgs" (full batch; gpr and sgpr only, their default) or "adam" (the other families'
	// default; gpr and sgpr then take full-batch Adam steps).
	Optimizer string
	// Inference approximates gpr's posterior under a non-Gaussian likelihood (gp/approx): "laplace" (the Laplace
	// approximation) or "ep" (expectation propagation). "" with such a likelihood means ep for class labels (the
	// more accurate: Kuss & Rasmussen 2005) and laplace otherwise (counts, the Student-t's robust regression);
	// the Gaussian likelihood and the other families take none.
	Inference string
	// Restarts is the number of L-BFGS starts of an approximated gpr (Inference), from the initial kernel
	// hyperparameters scaled as approxStarts says; the fit with the best training objective is kept (default
	// DefaultApproxRestarts).
	Restarts int
	// NoiseVariance is the initial noise variance of a Gaussian likelihood (0: the model's default, 0.1 on
	// standardised targets); KernelVariance and KernelLengthscale initialise the kernel's variance and every
	// length-scale (0: 1).
	NoiseVariance, KernelVariance, KernelLengthscale float64
	// KMeansIters bounds the Lloyd iterations that choose the inducing inputs (and mean bases) of sgpr and the
	// single-layer variational families (default DefaultKMeansIters for sgpr, ODVGPKMeansIters for the others).
	KMeansIters int
	// EvalEvery > 0 scores the held-out rows every EvalEvery Adam steps (Options.EvalEvery).
	EvalEvery int
	// stream offsets the random streams of a deep GP's noise and of the scoring (a zoo entry's split).
	stream uint64
	// TestFraction is the held-out share of the rows (default 0.1; negative: none).
	TestFraction float64
	// MaxTrainRows > 0 subsamples the training rows (after the held-out split) to at most MaxTrainRows, drawn
	// without replacement by a generator seeded by Seed (its own stream: the other random draws do not change).
	MaxTrainRows int
	// Seed seeds the split, the inducing inputs, the minibatches and the deep GP's noise.
	Seed uint64
	// Samples (S) and TestSamples of a deep GP (defaults 1 and dgp.DefaultTestSamples).
	Samples, TestSamples int
	// NatGrad trains q(u) by natural gradients (svgp, orth; a dgp's coupled last layer).
	NatGrad bool
	// CheckpointDir, CheckpointEvery, Resume and Stop as in Options (Adam-trained families).
	CheckpointDir   string
	CheckpointEvery int
	Resume          bool
	Stop            <-chan struct{}
	// Logger and Progress as in Options.
	Logger   *slog.Logger
	Progress io.Writer
	// Cluster, if set, trains on a parameter server and workers over NATS (ClusterConfig; the families that
	// are sums over rows, with Adam).
	Cluster *ClusterConfig
	// Priors set priors on the model's Params (gp.AssignPriors: `gpzoo train --prior SELECTOR=PRIOR`, in order, a
	// later rule overriding an earlier one): the fit is then maximum a posteriori (train.Loss).
	Priors []gp.PriorRule
	// MCMC, if set, samples the posterior of a gpr or sgpr model's hyperparameters with NUTS after the fit (a gpr
	// with a non-Gaussian likelihood: GPMC, its latent values too), and the model file holds the posterior
	// predictive (MCMCConfig).
	MCMC *MCMCConfig
	// Exact configures gpr's solver: Cholesky, or conjugate gradients on many rows (ExactOptions, exact.go). With
	// the CG solver the defaults of Optimizer, Iters and LR are adam, DefaultCGIters and DefaultCGLR.
	Exact ExactOptions
	// rows, when > 0, is the number of training rows the model is scaled to while fit sees only a sample of
	// them (TrainRows: the workers read their shards of a file; the sample places the inducing inputs).
	rows int
}

// trainRows is the number of training rows: c.rows, or tr's.
func (c CustomConfig) trainRows(tr *datasets.Dataset) int {
	if c.rows > 0 {
		return c.rows
	}
	return tr.N()
}

// Custom is the outcome of TrainCustom: the metrics and the model file (saved by the caller, if wanted).
type Custom struct {
	Result *Result
	File   *modelfile.File
	// MCMC is the NUTS run of CustomConfig.MCMC (nil without): its chains and diagnostics; File's model is its
	// Posterior.
	MCMC *bayes.Result
}

// TrainCustom trains a model of family c.Family on d (a user's data set: d.NumClasses > 0 for classification,
// with labels 0..K−1): it holds out c.TestFraction of the rows at random (seeded), standardises the inputs (and a
// regression target) on the training rows, and hands them to fit, the training path the zoo's entries of the
// same families take. Errors wrap ErrBadCustom for configurations that do not fit the data.
func TrainCustom(d *datasets.Dataset, c CustomConfig) (*Custom, error) {
	return trainCustom(d, c, rand.NewPCG(c.Seed, 0xc5f))
}

// trainCustom is TrainCustom drawing its random numbers (the split, then fit's) from src.
func trainCustom(d *datasets.Dataset, c CustomConfig, src *rand.PCG) (*Custom, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("zoo: %w", err)
	}
	c, err := c.withDefaults(d)
	if err != nil {
		return nil, err
	}
	fam, _ := gp.LookupLikelihood(c.Likelihood) // withDefaults checked it
	if err := checkTargets(d, fam, c.Target); err != nil {
		return nil, err
	}
	if err := checkOutputs(d, c, fam); err != nil {
		return nil, err
	}
	if d.N() < 2 {
		return nil, fmt.Errorf("%w: %s has %d data row(s): training needs at least 2", ErrBadCustom, d.Name, d.N())
	}
	rng := rand.New(src)
	trRaw, teRaw := d, (*datasets.Dataset)(nil) // teRaw stays in original units: it is scored as a user's file would be
	if c.TestFraction > 0 {
		trIdx, teIdx, err := datasets.RandomSplit(d.N(), c.TestFraction, rng)
		if err != nil {
			return nil, fmt.Errorf("zoo: %w", err)
		}
		if trRaw, err = d.Subset(trIdx); err != nil {
			return nil, err
		}
		if teRaw, err = d.Subset(teIdx); err != nil {
			return nil, err
		}
	}
	if trRaw, err = subsampleRows(trRaw, c.MaxTrainRows, c.Seed); err != nil {
		return nil, err
	}
	// Class labels and a family's raw targets (counts) stay in their units: the standardizer saved in the model
	// file then has target mean 0 and deviation 1, so predictions come back in those units.
	std, err := datasets.FitStandardizer(trRaw, d.NumClasses == 0 && !fam.RawTargets)
	if err != nil {
		return nil, fmt.Errorf("zoo: %w", err)
	}
	if _, err := keepCategorical(c, trRaw.X, std, d.X); err != nil { // task columns stay category indices
		return nil, err
	}
	tr, err := std.Apply(trRaw)
	if err != nil {
		return nil, err
	}
	res := &Result{Entry: "custom/" + c.Family, Dataset: d.Name, Model: c.Family, Seed: c.Seed, NTrain: tr.N(),
		NTest: teRaw.N(), DataSource: d.Name, Build: ops.Build, BLAS: ops.BLAS(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	meta := map[string]string{"data": d.Name}
	if len(d.FeatureNames) > 0 {
		names, _ := json.Marshal(d.FeatureNames)
		meta["features"] = string(names)
	}
	return fit(tr, teRaw, std, c, src, res, meta)
}

// fit is the one training path of the families in Families, for gpzoo train (TrainCustom) and the zoo's entries
// of those families (runConfigured) alike: on tr (standardised by std; std nil: in their own units) it builds
// c.Family's model (c has its defaults: withDefaults), trains it (random draws from src: inducing inputs,
// minibatches), fills res (the training statistics; the final objective of a full-batch fit, the smoothed one of
// a minibatch fit), makes the model file (meta, plus the configuration's) and scores te (original units; nil:
// none) through it.
func fit(tr, te *datasets.Dataset, std *datasets.Standardizer, c CustomConfig, src *rand.PCG, res *Result, meta map[string]string) (*Custom, error) {
	fam, ok := gp.LookupLikelihood(c.Likelihood)
	if !ok {
		return nil, fmt.Errorf("%w: unknown likelihood %q", ErrBadCustom, c.Likelihood)
	}
	rng := rand.New(src)
	rows := c.trainRows(tr) // the training rows, also when gpr collapses their repeated inputs
	if c.Family == "gpr" {
		var err error
		if tr, c, err = collapseExact(tr, c); err != nil {
			return nil, err
		}
		if c, err = c.resolveExact(tr.N()); err != nil {
			return nil, err
		}
	}
	if c.Family == "gpr" || c.Family == "sgpr" {
		c.BatchSize = 0 // their objectives take the whole training set
	} else if c.BatchSize <= 0 {
		c.BatchSize = min(c.trainRows(tr), 1024)
	} else {
		c.BatchSize = min(c.BatchSize, c.trainRows(tr))
	}
	res.Kernel = c.Kernel
	b, err := buildCustom(tr, std, c, fam, rng)
	if err != nil {
		return nil, err
	}
	if c.Cluster != nil && ClusterProducts(c.Family) && b.stopWorkers == nil {
		return nil, fmt.Errorf("%w: gpr trains on workers with the Gaussian likelihood, by conjugate gradients (not likelihood %s, inference %s)", ErrNotRowSum, c.Likelihood, c.Inference)
	}
	stopWorkers := func() error { return nil }
	if b.stopWorkers != nil { // once, after the prediction cache (finishExact), or on an error
		stopWorkers = sync.OnceValue(b.stopWorkers)
		defer stopWorkers()
	}
	res.Optimizer = b.describe
	assigned, err := gp.AssignPriors(b.model.Params(), c.Priors)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	for _, a := range assigned {
		res.Priors = append(res.Priors, a.Param+" ~ "+a.Prior)
	}
	if b.pretrain != nil {
		if err := b.pretrain(); err != nil {
			return nil, err
		}
	}
	var tres *train.Result
	ytr := trainTargets(tr) // [y | mask] with missing targets
	// On a cluster: the families that are sums over rows, trained by Adam; gpr by CG, its workers computing the
	// kernel products (resolveExact, buildExact).
	if c.Cluster != nil && !ClusterProducts(c.Family) && (c.Optimizer == "lbfgs" || !ClusterFamily(c.Family)) {
		return nil, fmt.Errorf("%w (family %s, optimizer %s)", ErrNotRowSum, c.Family, c.Optimizer)
	}
	_, gpmc := b.model.(gp.LatentHolder)
	if c.MCMC != nil { // before the MAP fit: the sampler's requirements
		if err := checkSampled(b.model, c); err != nil {
			return nil, err
		}
	}
	switch {
	case c.MCMC != nil && gpmc: // GPMC samples from its initial values: no MAP fit of its latent values
		tres = &train.Result{}
	case c.Optimizer == "lbfgs" && c.Inference != "":
		var best *customBuild
		if best, tres, err = trainApproxRestarts(tr, std, c, fam, rng, b, ytr); err == nil {
			b, res.Optimizer = best, best.describe
		}
	case c.Optimizer == "lbfgs":
		tres, err = train.TrainLBFGS(b.model, tr.X, ytr, train.LBFGSConfig{Iters: c.Iters, Stop: c.Stop, Logger: c.Logger, Progress: c.Progress})
		res.MaxIters = c.Iters // L-BFGS stops early when it converges
	default:
		iters, conv := c.Iters, (*train.ConvergeConfig)(nil)
		if c.MaxIters > 0 {
			cc := train.DefaultConverge
			if c.Converge != nil {
				cc = *c.Converge
			}
			iters, conv, res.MaxIters = c.MaxIters, &cc, c.MaxIters
		}
		cfg := train.Config{Iters: iters, Converge: conv, BatchSize: c.BatchSize, Hooks: b.hooks, Optimizer: &train.Adam{LR: c.LR},
			Logger: c.Logger, Progress: c.Progress, Stop: c.Stop,
			Checkpoint: checkpointConfig(c.CheckpointDir, c.CheckpointEvery, c.Resume, append([]*rand.PCG{src}, b.sources...))}
		if c.EvalEvery > 0 && te != nil {
			f := newModelFile(b.model, std, nil)
			eval := evalFunc(func(r *Result) error {
				if b.score != nil && !severalOutputs(te) {
					return b.score(r, EvalSamples, te, rand.New(rand.NewPCG(c.Seed, c.stream+0xe7a1)))
				}
				return scoreCustom(r, f, te, c, fam)
			})
			cfg.EvalEvery, cfg.Eval = c.EvalEvery, eval
			if b.diagnose != nil {
				cfg.Eval = func(step int) (map[string]float64, error) {
					m, err := eval(step)
					if err != nil {
						return nil, err
					}
					ds, err := b.diagnose()
					if err != nil {
						return nil, err
					}
					layerMetrics(ds, m)
					return m, nil
				}
			}
		}
		if c.Cluster != nil && ClusterFamily(c.Family) { // ClusterProducts: the workers compute the products (buildExact)
			tres, err = trainCluster(b.model, tr.X, ytr, c, cfg, res)
		} else {
			tres, err = train.Train(b.model, tr.X, ytr, rng, cfg)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", res.Entry, err)
	}
	if len(tres.Losses) > 0 {
		fillTraining(res, tres, rows)
	}
	if b.exact != nil {
		if err := finishExact(b, c.Stop); err != nil {
			return nil, err
		}
		if err := stopWorkers(); err != nil {
			return nil, fmt.Errorf("zoo: %s: %w", res.Entry, err)
		}
		res.Exact = b.exact
	}
	switch { // a full-batch fit reports its final objective
	case len(tres.Losses) == 0: // no fit (GPMC before NUTS)
	case c.Optimizer == "lbfgs": // TrainLBFGS's last loss is the model's at its final parameters: no second pass
		setFinal(res, tres.FinalLoss(), rows)
	case c.Exact.solver == cg.SolverCG: // another estimate would cost a step: the last step's stands
		res.ELBOPerPoint, res.ObjectiveKind = -tres.FinalLoss()/float64(rows), "estimate"
	case c.rows > 0: // tr is a sample: the smoothed objective stands
	case c.BatchSize <= 0 || c.BatchSize >= tr.N(): // Adam's last loss precedes its last step: evaluate afresh
		if err := fillFinal(res, b.model, tr.X, ytr, rows); err != nil {
			return nil, fmt.Errorf("zoo: %s: %w", res.Entry, err)
		}
	}
	if b.diagnose != nil {
		if res.Layers, err = b.diagnose(); err != nil {
			return nil, fmt.Errorf("zoo: %s: layer diagnostics: %w", res.Entry, err)
		}
	}
	var fileModel modelfile.Model = b.model
	var sampled *bayes.Result
	if c.MCMC != nil { // the model file holds the posterior predictive
		if sampled, err = sampleCustom(b.model, tr.X, ytr, c, res); err != nil {
			return nil, err
		}
		fileModel = sampled.Posterior
		res.Optimizer += fmt.Sprintf(", then NUTS (%d chains × %d draws, %d kept)", res.MCMC.Chains, res.MCMC.Samples, res.MCMC.Kept)
	}
	f := newModelFile(fileModel, std, map[string]string{
		"family": c.Family, "likelihood": c.Likelihood, "kernel": c.Kernel, "seed": fmt.Sprint(c.Seed),
		"test_samples": fmt.Sprint(c.TestSamples), "optimizer": res.Optimizer})
	if res.MCMC != nil {
		f.Meta["mcmc"] = mcmcMeta(res.MCMC)
	}
	maps.Copy(f.Meta, meta)
	if c.Inference != "" {
		f.Meta["inference"] = c.Inference
	}
	switch {
	case te == nil:
	case b.score != nil && !severalOutputs(te): // several outputs: scored cell by cell through the model file
		if err := b.score(res, c.TestSamples, te, rand.New(rand.NewPCG(c.Seed, c.stream+0x7e57))); err != nil {
			return nil, fmt.Errorf("zoo: scoring the held-out rows: %w", err)
		}
	default:
		if err := scoreCustom(res, f, te, c, fam); err != nil {
			return nil, err
		}
	}
	if res.TestRMSE != nil && std != nil && len(std.YStd) == 1 && std.YStd[0] > 0 {
		v := *res.TestRMSE / std.YStd[0]
		res.TestRMSEStandardised = &v
	}
	return &Custom{Result: res, File: f, MCMC: sampled}, nil
}

func (c CustomConfig) withDefaults(d *datasets.Dataset) (CustomConfig, error) {
	if c.Family == "" {
		c.Family = "svgp"
	}
	c.Family = strings.ToLower(c.Family)
	if !slices.Contains(Families, c.Family) {
		return c, fmt.Errorf("%w: unknown family %q (want one of %s)", ErrBadCustom, c.Family, strings.Join(Families, ", "))
	}
	k, err := ParseKernel(c.Kernel)
	if err != nil {
		return c, fmt.Errorf("%w: kernel: %w", ErrBadCustom, err)
	}
	c.Kernel = k.String()
	classify := d.NumClasses > 0
	if c.Likelihood = strings.ToLower(c.Likelihood); c.Likelihood == "" {
		c.Likelihood = defaultLikelihood(d.NumClasses)
	}
	fam, ok := gp.LookupLikelihood(c.Likelihood)
	if !ok {
		return c, fmt.Errorf("%w: unknown likelihood %q (want one of %s)", ErrBadCustom, c.Likelihood, strings.Join(LikelihoodNames(), ", "))
	}
	if fam.Classes != classify {
		kind := "a regression target"
		if classify {
			kind = fmt.Sprintf("a target with %d classes", d.NumClasses)
		}
		return c, fmt.Errorf("%w: likelihood %s does not fit %s", ErrBadCustom, c.Likelihood, kind)
	}
	if err := c.inferenceDefaults(fam); err != nil {
		return c, err
	}
	if (c.Family == "gpr" && c.MCMC == nil && c.Inference == "" || c.Family == "sgpr") && !isGaussian(fam) {
		return c, fmt.Errorf("%w: %s needs the gaussian likelihood (got %s): use gpr with --inference laplace or ep (or --mcmc nuts), or svgp, for other likelihoods", ErrBadCustom, c.Family, c.Likelihood)
	}
	if c.MCMC != nil {
		if err := c.MCMC.check(c); err != nil {
			return c, err
		}
	}
	if c.Resume && c.CheckpointDir == "" {
		return c, fmt.Errorf("%w: resuming needs the checkpoint directory", ErrBadCustom)
	}
	if err := c.Exact.check(); err != nil {
		return c, err
	}
	if c.Family != "gpr" && c.Exact != (ExactOptions{}) {
		return c, fmt.Errorf("%w: the exact GP's solver options are for gpr, not %s", ErrBadCustom, c.Family)
	}
	switch c.Optimizer = strings.ToLower(c.Optimizer); c.Optimizer {
	case "":
		c.Optimizer = "adam"
		switch c.Family {
		case "sgpr":
			c.Optimizer = "lbfgs"
		case "gpr":
			c.Optimizer = "" // by its solver, chosen on the training rows (resolveExact)
		}
	case "adam":
	case "lbfgs":
		if c.Family != "gpr" && c.Family != "sgpr" {
			return c, fmt.Errorf("%w: %s trains with adam, not lbfgs", ErrBadCustom, c.Family)
		}
	default:
		return c, fmt.Errorf("%w: unknown optimizer %q (want lbfgs or adam)", ErrBadCustom, c.Optimizer)
	}
	if c.Optimizer == "lbfgs" && (c.CheckpointDir != "" || c.Resume) {
		return c, fmt.Errorf("%w: checkpoints are for Adam training, not %s's L-BFGS (use --optimizer adam)", ErrBadCustom, c.Family)
	}
	if c.KMeansIters <= 0 {
		c.KMeansIters = ODVGPKMeansIters
		if c.Family == "sgpr" || c.Family == "dgp" {
			c.KMeansIters = DefaultKMeansIters
		}
	}
	for _, v := range []float64{c.NoiseVariance, c.KernelVariance, c.KernelLengthscale} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return c, fmt.Errorf("%w: initial variance or length-scale %g (want > 0; 0 means the default)", ErrBadCustom, v)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Inducing", c.Inducing}, {"MeanBases", c.MeanBases}, {"Iters", c.Iters}, {"MaxIters", c.MaxIters}, {"BatchSize", c.BatchSize},
		{"Samples", c.Samples}, {"TestSamples", c.TestSamples}, {"CheckpointEvery", c.CheckpointEvery}, {"MaxTrainRows", c.MaxTrainRows}} {
		if f.v < 0 {
			return c, fmt.Errorf("%w: %s %d is negative (0 means the default)", ErrBadCustom, f.name, f.v)
		}
	}
	if c.LR < 0 || math.IsNaN(c.LR) || math.IsInf(c.LR, 0) {
		return c, fmt.Errorf("%w: learning rate %g (want > 0; 0 means the default)", ErrBadCustom, c.LR)
	}
	if c.Inducing <= 0 {
		c.Inducing = 100
	}
	if c.MeanBases <= 0 {
		c.MeanBases = 2 * c.Inducing
	}
	if c.LayerFamily == "" {
		c.LayerFamily = "coupled"
	}
	if c.LayerFamily != "coupled" && c.LayerFamily != "decoupled" {
		return c, fmt.Errorf("%w: layer family %q (want coupled or decoupled)", ErrBadCustom, c.LayerFamily)
	}
	if c.Hidden == nil {
		c.Hidden = []int{min(d.D(), 10)}
	}
	if c.LMC < 0 {
		return c, fmt.Errorf("%w: LMC %d latent GPs (want ≥ 1; 0: independent outputs)", ErrBadCustom, c.LMC)
	}
	for _, w := range c.Hidden {
		if w < 1 {
			return c, fmt.Errorf("%w: hidden width %d", ErrBadCustom, w)
		}
	}
	if c.Iters > 0 && c.MaxIters > 0 {
		return c, fmt.Errorf("%w: Iters %d (exactly that many steps) and MaxIters %d (a cap on training that stops when converged) exclude each other", ErrBadCustom, c.Iters, c.MaxIters)
	}
	if c.MaxIters > 0 && c.Optimizer == "lbfgs" {
		return c, fmt.Errorf("%w: MaxIters is for Adam training; %s's L-BFGS stops when it converges, within Iters iterations", ErrBadCustom, c.Family)
	}
	if c.Iters <= 0 && c.MaxIters <= 0 {
		switch c.Family {
		case "sgpr":
			c.Iters = 200
		case "gpr": // by its solver (resolveExact)
		default:
			c.MaxIters = DefaultMaxIters
		}
	}
	if c.Converge != nil && c.MaxIters == 0 {
		return c, fmt.Errorf("%w: a convergence criterion needs MaxIters (Iters %d runs exactly that many steps)", ErrBadCustom, c.Iters)
	}
	if c.Converge != nil {
		if _, err := train.ConvergedAt(*c.Converge, nil, 1); err != nil {
			return c, fmt.Errorf("%w: %w", ErrBadCustom, err)
		}
	}
	if c.MaxTrainRows == 1 {
		return c, fmt.Errorf("%w: MaxTrainRows 1: training needs at least 2 rows", ErrBadCustom)
	}
	if c.LR <= 0 && c.Family != "gpr" { // gpr's by its solver (resolveExact)
		c.LR = 0.01
	}
	if c.TestFraction == 0 {
		c.TestFraction = 0.1
	}
	if c.TestFraction >= 1 {
		return c, fmt.Errorf("%w: test fraction %g (want < 1)", ErrBadCustom, c.TestFraction)
	}
	if c.Samples <= 0 {
		c.Samples = 1
	}
	if c.TestSamples <= 0 {
		c.TestSamples = dgp.DefaultTestSamples
	}
	return c, nil
}

// DefaultApproxRestarts is the number of L-BFGS starts of an approximated gpr (CustomConfig.Restarts).
const DefaultApproxRestarts = 3

// inferenceDefaults checks and completes c.Inference and c.Restarts for the likelihood family fam: an
// approximation only for gpr with a likelihood other than the Gaussian, which then needs one (ep for class
// labels, laplace otherwise, when c leaves it empty).
func (c *CustomConfig) inferenceDefaults(fam gp.LikelihoodFamily) error {
	c.Inference = strings.ToLower(c.Inference)
	if c.Restarts < 0 {
		return fmt.Errorf("%w: Restarts %d is negative (0 means the default)", ErrBadCustom, c.Restarts)
	}
	switch {
	case c.Family != "gpr" && c.Inference != "":
		return fmt.Errorf("%w: --inference %s approximates an exact GP (--model gpr), not %s", ErrBadCustom, c.Inference, c.Family)
	case c.Family != "gpr" || isGaussian(fam):
		if c.Inference != "" {
			return fmt.Errorf("%w: --inference %s: the gaussian likelihood's exact GP needs no approximation", ErrBadCustom, c.Inference)
		}
		if c.Restarts > 1 {
			return fmt.Errorf("%w: Restarts %d: restarts are for gpr with a non-Gaussian likelihood (--inference)", ErrBadCustom, c.Restarts)
		}
		return nil
	case c.Inference == "" && c.MCMC != nil:
		return nil // GPMC: NUTS jointly over the hyperparameters and the whitened latent values
	case c.Inference == "" && fam.Classes && fam.Kind != likelihoods.KindSoftmax:
		c.Inference = string(approx.EP)
	case c.Inference == "":
		c.Inference = string(approx.Laplace)
	}
	if _, err := approx.ParseInference(c.Inference); err != nil {
		return fmt.Errorf("%w: --inference %q: want laplace or ep", ErrBadCustom, c.Inference)
	}
	if c.Restarts == 0 {
		c.Restarts = DefaultApproxRestarts
	}
	return nil
}

// approxStarts are the factors by which restart r (mod their number) scales the initial kernel variance and
// length-scales of an approximated gpr: the given values, a larger variance, and shorter then longer
// length-scales (a non-Gaussian likelihood's marginal likelihood has several modes: a wiggly function that
// explains every label, a smooth one that calls some of them noise).
var approxStarts = [][2]float64{{1, 1}, {4, 0.5}, {1, 2}, {0.25, 1}}

// customBuild is a model ready to train.
type customBuild struct {
	model    modelfile.Model
	hooks    []train.Hook
	describe string
	sources  []*rand.PCG // the model's own random sources (deep-GP noise, Monte-Carlo likelihood), for checkpoints
	// score, when set (a deep GP), scores held-out rows in original units with s propagated samples drawn from
	// rng: the mixture's log density, the moment-matched Gaussian's beside it (scoreDGP).
	score func(res *Result, s int, te *datasets.Dataset, rng *rand.Rand) error
	// pretrain, when set, runs before training (a CG exact GP's subset start); exact holds an exact GP's
	// statistics (gpr).
	pretrain func() error
	exact    *ExactStats
	// stopWorkers, when set, ends the workers of the build's kernel products (a CG exact GP on a cluster) and
	// returns their first error.
	stopWorkers func() error
	// diagnose, when set (a deep GP), returns the per-layer diagnostics at (up to DiagnoseRows of) the training
	// rows (dgp.Diagnose).
	diagnose func() ([]dgp.LayerDiagnostics, error)
}

// DiagnoseRows and DiagnoseSamples size the per-layer diagnostics of a deep GP (Result.Layers, and each
// evaluation of EvalEvery): a seeded subset of at most DiagnoseRows training rows, DiagnoseSamples samples each.
const (
	DiagnoseRows    = 2000
	DiagnoseSamples = 10
)

// layerMetrics flattens per-layer diagnostics into evaluation metrics: layerℓ.kl_per_point, .noise_sd,
// .shift_rms, .output_sd and .ls_median (the median of the layer's length-scales, when it has some).
func layerMetrics(ds []dgp.LayerDiagnostics, into map[string]float64) {
	for _, d := range ds {
		p := fmt.Sprintf("layer%d.", d.Layer)
		into[p+"kl_per_point"], into[p+"noise_sd"], into[p+"shift_rms"], into[p+"output_sd"] = d.KLPerPoint, d.NoiseSD, d.ShiftRMS, d.OutputSD
		var ls []float64
		for name, v := range d.Hyper {
			if strings.HasSuffix(name, ".lengthscales") {
				ls = append(ls, v...)
			}
		}
		if len(ls) > 0 {
			slices.Sort(ls)
			into[p+"ls_median"] = ls[len(ls)/2]
		}
	}
}

func buildCustom(tr *datasets.Dataset, std *datasets.Standardizer, c CustomConfig, fam gp.LikelihoodFamily, rng *rand.Rand) (*customBuild, error) {
	dim := tr.D()
	expr, err := ParseKernel(c.Kernel)
	if err != nil {
		return nil, fmt.Errorf("%w: kernel: %w", ErrBadCustom, err)
	}
	kern, err := newKernel(expr, "", dim, c.KernelVariance, c.KernelLengthscale, rawRows(tr.X))
	if err != nil {
		return nil, err
	}
	// Kernels that start from the data (the spectral mixture: its targets' periodogram) do so here, on the
	// standardised training set (a deep GP's layers build their own kernels, at their defaults).
	if c.Family != "dgp" {
		if err := gp.InitKernelFromData(kern, tr.X, tr.Y, rng); err != nil {
			return nil, fmt.Errorf("%w: kernel %s: initialisation from the data: %w", ErrBadCustom, c.Kernel, err)
		}
	}
	if cats := gp.CategoricalInputs(kern); len(cats) > 0 && c.Family == "dgp" {
		return nil, fmt.Errorf("%w: kernel %s reads input column %d as task indices, but a deep GP's inner layers use the same kernel on real-valued hidden outputs: use svgp, sgpr or gpr (or --targets with an LMC for correlated outputs)", ErrBadCustom, c.Kernel, cats[0].Column)
	}
	ignores := ignoresInputs(kern)
	if ignores && c.Family == "dgp" {
		return nil, fmt.Errorf("%w: kernel %s ignores its inputs, so a deep GP's inner layers would not affect its output: use a kernel that reads them (e.g. se+%s)", ErrBadCustom, c.Kernel, strings.ToLower(c.Kernel))
	}
	b, err := buildFamily(tr, std, c, fam, rng, kern, expr)
	if err != nil {
		return nil, err
	}
	if c.Family != "dgp" { // inducing inputs on a task column hold task indices (a deep GP's inner layers have none)
		if err := snapInducing(b.model.Params(), gp.CategoricalInputs(kern), dim); err != nil {
			return nil, err
		}
	}
	if ignores && fixInducing(b.model.Params()) {
		b.describe += ", inducing inputs fixed (the kernel ignores the inputs)"
	}
	return b, nil
}

// buildFamily builds c.Family's model with kernel kern (a deep GP: a kernel of expr in every layer).
func buildFamily(tr *datasets.Dataset, std *datasets.Standardizer, c CustomConfig, fam gp.LikelihoodFamily, rng *rand.Rand, kern gp.Kernel, expr *grammar.Expr) (*customBuild, error) {
	n := c.trainRows(tr)
	m := min(c.Inducing, tr.N())
	switch c.Family {
	case "gpr":
		approxOrSampled := c.Inference != "" || !isGaussian(fam) || c.MCMC != nil
		if approxOrSampled && c.Exact.solver == cg.SolverCG {
			return nil, fmt.Errorf("%w: gpr on %d training rows takes the CG solver (%s); Laplace, EP, GPMC and NUTS run on the Cholesky solver only (raise --memory, or use svgp)", ErrBadCustom, n, c.Exact.reason)
		}
		if c.Inference != "" {
			return buildApprox(tr, c, fam, kern)
		}
		if !isGaussian(fam) { // with MCMC and no --inference: GPMC
			return newGPMC(tr, c, fam, kern, rand.New(rand.NewPCG(c.Seed, 0x50f7)))
		}
		return buildExact(tr, c, kern)
	case "sgpr":
		z, err := gp.KMeans(tr.X, m, c.KMeansIters, rng)
		if err != nil {
			return nil, err
		}
		model, err := models.NewSGPR(models.SGPRConfig{Kernel: kern, NoiseVariance: c.NoiseVariance, Z: z, X: tr.X, Y: tr.Y}) // it predicts from them
		if err != nil {
			return nil, err
		}
		return &customBuild{model: model, describe: fullBatch(c, fmt.Sprintf("M=%d", m))}, nil
	}
	mcSrc := rand.NewPCG(c.Seed, 0x50f7)
	lik, latent, err := newLikelihood(fam, tr.P(), tr.NumClasses, cmp.Or(c.NoiseVariance, models.DefaultNoiseVariance), rand.New(mcSrc))
	if err != nil {
		return nil, err
	}
	if lik, err = maskMissing(lik, tr); err != nil { // missing targets: left out of the expected log density
		return nil, err
	}
	conjugate := isGaussian(fam)
	b := &customBuild{}
	if drawsMonteCarlo(lik) {
		b.sources = append(b.sources, mcSrc)
	}
	if c.Family == "dgp" {
		sp := dgpSpec{family: c.LayerFamily, kernel: expr, kernelVar: c.KernelVariance, kernelLS: c.KernelLengthscale}
		if c.LMC > 0 { // the last layer: c.LMC latent GPs mixed into the outputs
			if c.LayerFamily == "decoupled" {
				return nil, fmt.Errorf("%w: an LMC as a deep GP's last layer takes coupled layers (--layer-family coupled)", ErrBadCustom)
			}
			sp.lastWidth = c.LMC
			sp.lastMix = func(block gp.Layer) (gp.Layer, error) { return mixOutputs(block, c, latent, tr, rng) }
		}
		ls, err := dgp.Build(tr.X, dgp.BuildConfig{Widths: c.Hidden, OutputDim: latent,
			NewLayer: dgpFactory(sp, m, c.MeanBases, m), KMeansIters: c.KMeansIters, Rand: rng})
		if err != nil {
			return nil, err
		}
		noiseSrc := rand.NewPCG(c.Seed, c.stream+0xe95)
		model, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: n, Samples: c.Samples, Rand: rand.New(noiseSrc)})
		if err != nil {
			return nil, err
		}
		b.model, b.sources = model, append(b.sources, noiseSrc)
		diagX := tr.X
		if tr.N() > DiagnoseRows { // a fixed seeded subset: every evaluation looks at the same rows
			idx := rand.New(rand.NewPCG(c.Seed, 0xd1a9)).Perm(tr.N())[:DiagnoseRows]
			slices.Sort(idx)
			sub, err := tr.Subset(idx)
			if err != nil {
				return nil, err
			}
			diagX = sub.X
		}
		b.diagnose = func() ([]dgp.LayerDiagnostics, error) {
			return model.Diagnose(diagX, DiagnoseSamples, rand.New(rand.NewPCG(c.Seed, c.stream+0xd1a6)))
		}
		b.score = func(res *Result, s int, te *datasets.Dataset, rng *rand.Rand) error {
			if std != nil {
				var err error
				if te, err = std.Apply(te); err != nil {
					return err
				}
			}
			_, err := scoreDGP(res, model, s, te, std, rng)
			return err
		}
		sizes := fmt.Sprintf("M=%d", m)
		if c.LayerFamily == "decoupled" {
			sizes = fmt.Sprintf("Ma=%d, Mb=%d", min(c.MeanBases, tr.N()), m)
		}
		b.describe = fmt.Sprintf("adam(%g), batch %d, S=%d, %d layers (%s), %s, hidden widths %v", c.LR, c.BatchSize, c.Samples, len(ls), sizes, c.LayerFamily, c.Hidden)
		if c.LMC > 0 {
			b.describe += fmt.Sprintf(", last layer an LMC of %d latent GPs into %d outputs", c.LMC, latent)
		}
		if c.NatGrad {
			q, ok := lastQ(ls[len(ls)-1])
			if !ok {
				return nil, fmt.Errorf("%w: --natgrad needs a coupled last layer", ErrBadCustom)
			}
			h, err := natGradHook(q, conjugate, c.rampBudget())
			if err != nil {
				return nil, err
			}
			b.hooks, b.describe = []train.Hook{h}, "natgrad on the last layer's q(u) + "+b.describe
		}
		return b, nil
	}
	family := c.Family
	if family == "svgp" {
		family = "coupled"
	}
	ng := 0
	if family != "coupled" {
		ng = c.MeanBases
	}
	beta, gamma, err := odvgpBases(odvgpSpec{}, tr.X, m, ng, c.KMeansIters, rng)
	if err != nil {
		return nil, err
	}
	ol, err := newODVGPLayer(layerConfig{family: family, kernel: kern, beta: beta, gamma: gamma, latent: blockOutputs(c, latent)})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCustom, err)
	}
	layer, err := mixOutputs(ol.layer, c, latent, tr, rng) // with c.LMC: the block's latents mixed into the outputs
	if err != nil {
		return nil, err
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: n})
	if err != nil {
		return nil, err
	}
	b.model = model
	b.describe = fmt.Sprintf("adam(%g), batch %d, M=%d", c.LR, c.BatchSize, m)
	if c.LMC > 0 {
		b.describe += fmt.Sprintf(", LMC of %d latent GPs into %d outputs", c.LMC, latent)
	}
	if ng > 0 {
		b.describe += fmt.Sprintf(", %d mean bases", gamma.RawMatrix().Rows)
	}
	if c.NatGrad || c.Family == "orthnat" {
		if ol.q == nil {
			return nil, fmt.Errorf("%w: natural gradients apply to svgp, orth and orthnat", ErrBadCustom)
		}
		h, err := natGradHook(ol.q, conjugate, c.rampBudget())
		if err != nil {
			return nil, err
		}
		b.hooks, b.describe = []train.Hook{h}, "natgrad on q(u) + "+b.describe
	}
	return b, nil
}

// DefaultMaxIters caps the training of the Adam-trained families when neither Iters nor MaxIters is given: they
// stop when the convergence criterion (train.DefaultConverge) is met, and at the latest after DefaultMaxIters
// steps. The criterion stops most fits well before it (see docs/training-length.md).
const DefaultMaxIters = 10000

// formerDefaultIters is the fixed step count of the Adam-trained families before they converged by default.
const formerDefaultIters = 2000

// rampBudget is the step count a natural-gradient ramp (non-conjugate likelihoods: γ ramped over a tenth of
// it) is laid out for: Iters, or with the convergence criterion the former default of 2000 steps within the
// cap, so that a raised cap does not stretch the ramp.
func (c CustomConfig) rampBudget() int {
	if c.Iters > 0 {
		return c.Iters
	}
	return min(c.MaxIters, formerDefaultIters)
}

// subsampleRows returns d's rows subsampled to at most limit, without replacement, by a generator seeded by seed
// (rows kept in their order); d itself when limit ≤ 0 or d has no more rows.
func subsampleRows(d *datasets.Dataset, limit int, seed uint64) (*datasets.Dataset, error) {
	if limit <= 0 || d.N() <= limit {
		return d, nil
	}
	idx := rand.New(rand.NewPCG(seed, 0x5ab5a)).Perm(d.N())[:limit]
	slices.Sort(idx)
	return d.Subset(idx)
}

// fullBatch describes gpr's or sgpr's optimiser (lbfgs, or full-batch Adam) followed by what.
func fullBatch(c CustomConfig, what string) string {
	if c.Optimizer == "adam" {
		return fmt.Sprintf("adam(%g), full batch, %s", c.LR, what)
	}
	return "lbfgs, " + what
}

// defaultLikelihood names the likelihood of a target with classes classes (0: regression): gaussian,
// bernoulli for two classes, robustmax for more.
func defaultLikelihood(classes int) string {
	switch {
	case classes == 0:
		return "gaussian"
	case classes == 2:
		return "bernoulli"
	}
	return "robustmax"
}

// LikelihoodNames returns the names of the registered likelihood families (gp.LikelihoodFamilies), sorted: the
// values CustomConfig.Likelihood accepts.
func LikelihoodNames() []string {
	fams := gp.LikelihoodFamilies()
	names := make([]string, len(fams))
	for i, f := range fams {
		names[i] = f.Name
	}
	return names
}

// isGaussian reports whether fam is the Gaussian likelihood: the conjugate one, which exact GPs, SGPR and
// natural-gradient steps in closed form assume.
func isGaussian(fam gp.LikelihoodFamily) bool { return fam.Kind == likelihoods.KindGaussian }

// drawsMonteCarlo reports whether lik draws Monte-Carlo numbers (it can take another generator, as modelfile's
// prediction gives it): its generator's state then belongs in checkpoints.
func drawsMonteCarlo(lik gp.Likelihood) bool {
	_, ok := lik.(interface {
		WithRand(*rand.Rand) (gp.Likelihood, error)
	})
	return ok
}

// newLikelihood returns the named likelihood (a registered family's; the initial noise variance of a Gaussian
// noise family is noise) for p target columns and classes classes (0: not class labels), with its number of
// latent functions; a Monte-Carlo likelihood draws from mc. Errors wrap ErrBadCustom.
func newLikelihood(fam gp.LikelihoodFamily, p, classes int, noise float64, mc *rand.Rand) (gp.Likelihood, int, error) {
	lik, err := fam.New(gp.LikelihoodOptions{Outputs: p, Classes: classes, NoiseVariance: noise, Rand: mc})
	if err != nil {
		return nil, 0, fmt.Errorf("%w: likelihood %s: %w", ErrBadCustom, fam.Name, err)
	}
	latent, err := lik.LatentDim(p)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: likelihood %s: %w", ErrBadCustom, fam.Name, err)
	}
	return lik, latent, nil
}

// checkTargets refuses a target value fam cannot model (fam.CheckTarget), naming the data set, the 1-based
// data row and the column (target, or "target column j").
func checkTargets(d *datasets.Dataset, fam gp.LikelihoodFamily, target string) error {
	if fam.CheckTarget == nil {
		return nil
	}
	for i := 0; i < d.N(); i++ {
		for j, v := range d.Y.RawRowView(i) {
			if !d.IsObserved(i, j) {
				continue // a missing target
			}
			if err := fam.CheckTarget(v); err != nil {
				col := fmt.Sprintf("target column %d", j+1)
				if target != "" {
					col = fmt.Sprintf("column %q", target)
				}
				return fmt.Errorf("%w: %s: data row %d, %s: %s: %w", ErrBadCustom, d.Name, i+1, col, fam.Name, err)
			}
		}
	}
	return nil
}

// scoreCustom fills res's test metrics from the model file's predictions (the path `gpzoo predict` takes), so
// what is reported is what a saved model predicts. te is in original units, as are the predictions.
func scoreCustom(res *Result, f *modelfile.File, te *datasets.Dataset, c CustomConfig, fam gp.LikelihoodFamily) error {
	p, err := f.Predict(te.X, modelfile.PredictOptions{Samples: c.TestSamples, Seed: c.Seed})
	if err != nil {
		return fmt.Errorf("zoo: scoring the held-out rows: %w", err)
	}
	n := te.N()
	if p.Probs != nil {
		lds := make([]float64, n) // log p(label) under the predictive class probabilities
		for i := range lds {
			lds[i] = math.Log(max(p.Probs.At(i, int(te.Y.At(i, 0))), 1e-300))
		}
		acc, ll := classMetrics(res, p.Probs, lds, te.Y)
		res.TestAccuracy, res.TestLL = &acc, ll
		return nil
	}
	// Regression: over the observed target cells (scoreRegression).
	if err := scoreRegression(res, p.Mean, p.Std, te); err != nil {
		return err
	}
	if c.Family == "dgp" || !isGaussian(fam) {
		res.TestLLKind = "moment-matched Gaussian of the predictive distribution"
	}
	return nil
}

// rootMeanSquare returns √(Σ r_i² / n) without overflow or underflow: the squares are taken of r_i / max|r|.
func rootMeanSquare(r []float64) float64 {
	s := 0.0
	for _, v := range r {
		s = max(s, math.Abs(v))
	}
	if s == 0 || math.IsInf(s, 0) || len(r) == 0 {
		return s
	}
	sum := 0.0
	for _, v := range r {
		sum += (v / s) * (v / s)
	}
	return s * math.Sqrt(sum/float64(len(r)))
}

// lastQ returns q(u) of a coupled layer (the one a natural-gradient hook may own).
func lastQ(l gp.Layer) (*gp.GaussianQ, bool) {
	if s, ok := l.(*layers.SVGP); ok {
		return s.Q, true
	}
	return nil, false
}
