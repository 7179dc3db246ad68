package zoo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// IllustrationMethods are the methods Illustrate trains, in the order of its CSV (seed 001, Fig. 2b).
var IllustrationMethods = []string{"COUPLED", "COUPLEDNAT", "DECOUPLED", "HYBRID", "ORTH", "ORTHNAT"}

// IllustrationEntry is the name of the zoo entry that runs Illustrate on ringnorm (see runIllustration).
const IllustrationEntry = IllustrationDataset + "/odvgp-illustration"

// Defaults of IllustrationOptions.
const (
	IllustrationDataset = "ringnorm"
	IllustrationIters   = 100
	IllustrationBases   = 500
	IllustrationLR      = 0.01
)

// IllustrationOptions configure Illustrate. Zero values mean defaults.
type IllustrationOptions struct {
	// Dataset is a binary classification data set of the zoo (default "ringnorm").
	Dataset string
	// DataDir is the benchmark data directory (required for ringnorm).
	DataDir string
	// Split selects the data set's train/test split; the training part is used (full batch).
	Split int
	// Seed seeds the k-means and the partition of its centres.
	Seed uint64
	// Iters is the number of steps of every method (default IllustrationIters; the paper plots 10⁴; at
	// |γ| = |β| = 500 a full-batch step takes ≈2–3 s per method on 2 cores).
	Iters int
	// Bases is |γ| = |β| (default IllustrationBases = 500, the paper's); COUPLED uses the β bases, DECOUPLED
	// takes α = γ.
	Bases int
	// Variance and Lengthscale are the fixed SE hyperparameters (defaults 1 and √D, see Illustrate).
	Variance, Lengthscale float64
	// Methods restricts the run to some of IllustrationMethods (case-insensitive; nil: all six).
	Methods []string
	// Out receives the CSV `method,iteration,elbo,seconds` (required).
	Out io.Writer
	// Logger receives one record per method (nil: silent).
	Logger *slog.Logger
	// Progress receives a redrawn progress line per method (for terminals; nil: none).
	Progress io.Writer
}

// Illustrate reproduces the ringnorm panel of Salimbeni et al. (2018, seed 001) Fig. 2b: ELBO against iterations
// of COUPLED (Adam), COUPLEDNAT (natural steps on q(u), nothing else to train), DECOUPLED, HYBRID, ORTH (Adam) and
// ORTHNAT (natural steps on q(u_β), Adam on a_γ) with fixed hyperparameters and fixed bases, full batch and a
// Bernoulli (probit) likelihood, so that all the decoupled methods share one global optimum. The entry
// ringnorm/odvgp-illustration runs the same code and also reports a summary of the curves (see Curves).
//
// Setting. The training part of split o.Split of the data set (ringnorm: 6660 of the paper's 7400 points),
// inputs standardised. One k-means with |γ|+|β| centres, randomly partitioned (seeded) into β and γ: every method
// uses the same β, and γ (α for DECOUPLED) are the rest, disjoint from β so that the orthogonal γ part does not
// vanish. The kernel is SE-ARD with fixed variance σ² = 1 and every length-scale √D (ringnorm: D = 20, ℓ ≈ 4.5):
// for standardised inputs the median pairwise distance is ≈ √(2D), so this is the usual median heuristic, and
// σ² = 1 keeps the probit in its responsive range (the paper's values are not given; override with Variance and
// Lengthscale). Adam uses rate IllustrationLR; natural steps use γ ramped log-linearly from 1e-4 to 0.1 over the
// first tenth of the steps (the non-conjugate schedule of Salimbeni et al.).
//
// CSV. One row per method and iteration t = 0..Iters−1: elbo is the exact full-batch ELBO after t updates (the
// negated loss of step t) and seconds the training wall time of those t updates (graph building excluded). The
// rows of a method are written (and flushed) as soon as it has trained.
func Illustrate(o IllustrationOptions) error {
	_, err := illustrate(o)
	return err
}

// IllustrationTol is the relative tolerance of CurveSummary.ItersToTol: a method has converged at the first
// iteration whose ELBO is at least best − IllustrationTol·|best|, best the largest final ELBO of all methods.
const IllustrationTol = 0.01

// IllustrationCurvesFile is the CSV file the entry ringnorm/odvgp-illustration writes when Options.CurvesOut is
// "" (relative: in the working directory).
const IllustrationCurvesFile = "odvgp-illustration.csv"

// Curves summarises the ELBO curves of an illustration run (Result.Curves).
type Curves struct {
	// File is the CSV file of the curves (columns method,iteration,elbo,seconds; see Illustrate).
	File string `json:"file"`
	// Tol is the relative tolerance of ItersToTol (IllustrationTol).
	Tol float64 `json:"tol"`
	// BestELBO is the largest final ELBO over the methods (summed over the training points, not per point).
	BestELBO float64 `json:"best_elbo"`
	// Methods has one summary per method, in the order of the CSV.
	Methods []CurveSummary `json:"methods"`
}

// CurveSummary summarises one method's ELBO curve.
type CurveSummary struct {
	Method string `json:"method"`
	// FinalELBO is the ELBO of the method's last CSV row (after Iters−1 updates), summed over the training
	// points.
	FinalELBO float64 `json:"final_elbo"`
	// ItersToTol is the first iteration t (updates done) whose ELBO is at least BestELBO − Tol·|BestELBO|; nil
	// (JSON null) when the curve never gets there.
	ItersToTol *int `json:"iters_to_tol"`
	// SecondsToTol is the training wall time of those ItersToTol updates; nil when ItersToTol is.
	SecondsToTol *float64 `json:"seconds_to_tol"`
	// Seconds is the training wall time of all the method's Iters steps (graph building excluded).
	Seconds float64 `json:"seconds"`
}

// illustration is what illustrate returns besides the CSV.
type illustration struct {
	source            string
	nTrain, d         int
	iters, bases      int
	variance, ls      float64
	curves            *Curves // File unset
	seconds, building float64 // summed over the methods
	retries           int64
}

// illustrate trains the methods of o, writes the CSV to o.Out and summarises the curves.
func illustrate(o IllustrationOptions) (*illustration, error) {
	if o.Out == nil {
		return nil, errors.New("zoo: Illustrate: nil Out")
	}
	name := o.Dataset
	if name == "" {
		name = IllustrationDataset
	}
	iters, m := o.Iters, o.Bases
	if iters == 0 {
		iters = IllustrationIters
	}
	if m == 0 {
		m = IllustrationBases
	}
	if iters < 0 || m < 0 {
		return nil, fmt.Errorf("zoo: Illustrate: iterations %d and bases %d must be positive", iters, m)
	}
	methods, err := illustrationMethods(o.Methods)
	if err != nil {
		return nil, err
	}
	spl, err := loadSplit(name, o.DataDir, o.Split)
	if err != nil {
		return nil, err
	}
	if spl.train.NumClasses != 2 {
		return nil, fmt.Errorf("zoo: Illustrate: %s is not a binary classification data set (the illustration uses a Bernoulli likelihood)", name)
	}
	tr, _, _, err := spl.standardised(false)
	if err != nil {
		return nil, err
	}
	if 2*m > tr.N() {
		return nil, fmt.Errorf("zoo: Illustrate: |γ|+|β| = %d exceeds the %d training points", 2*m, tr.N())
	}
	rng := rand.New(rand.NewPCG(o.Seed, uint64(o.Split)+0x111))
	centres, err := gp.KMeans(tr.X, 2*m, DefaultKMeansIters, rng)
	if err != nil {
		return nil, fmt.Errorf("zoo: Illustrate: bases: %w", err)
	}
	perm := rng.Perm(2 * m)
	d := tr.D()
	beta, gamma := mat.NewDense(m, d, nil), mat.NewDense(m, d, nil)
	for i, j := range perm {
		if i < m {
			beta.SetRow(i, centres.RawRowView(j))
		} else {
			gamma.SetRow(i-m, centres.RawRowView(j))
		}
	}
	variance, ls := o.Variance, o.Lengthscale
	if variance == 0 {
		variance = 1
	}
	if ls == 0 {
		ls = math.Sqrt(float64(d))
	}
	ill := &illustration{source: spl.source, nTrain: tr.N(), d: d, iters: iters, bases: m, variance: variance, ls: ls}
	w := csv.NewWriter(o.Out)
	if err := w.Write([]string{"method", "iteration", "elbo", "seconds"}); err != nil {
		return nil, fmt.Errorf("zoo: Illustrate: %w", err)
	}
	var (
		sums         []CurveSummary
		curves, secs [][]float64
	)
	for _, meth := range methods {
		tres, err := illustrateOne(meth, tr, beta, gamma, variance, ls, iters, o.Progress)
		if err != nil {
			return nil, fmt.Errorf("zoo: Illustrate: %s: %w", meth, err)
		}
		elbo, sec := make([]float64, len(tres.Losses)), make([]float64, len(tres.Losses))
		for t, loss := range tres.Losses {
			elbo[t] = -loss
			if t > 0 {
				sec[t] = tres.Evals[t-1].Seconds
			}
			if err := w.Write([]string{meth, strconv.Itoa(t), strconv.FormatFloat(elbo[t], 'g', 10, 64),
				strconv.FormatFloat(sec[t], 'g', 6, 64)}); err != nil {
				return nil, fmt.Errorf("zoo: Illustrate: %w", err)
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return nil, fmt.Errorf("zoo: Illustrate: %w", err)
		}
		curves, secs = append(curves, elbo), append(secs, sec)
		ill.seconds += tres.Seconds
		ill.building += tres.BuildSeconds
		ill.retries += tres.Cholesky.Retries
		sums = append(sums, CurveSummary{Method: meth, FinalELBO: elbo[len(elbo)-1], Seconds: tres.Seconds})
		if o.Logger != nil {
			o.Logger.Info("illustrate", "method", meth, "iters", tres.Steps, "elbo_first", elbo[0],
				"elbo_last", elbo[len(elbo)-1], "seconds", tres.Seconds)
		}
	}
	ill.curves = &Curves{Methods: sums}
	summariseCurves(ill.curves, curves, secs)
	return ill, nil
}

// summariseCurves sets c.Tol, c.BestELBO and the ItersToTol and SecondsToTol of c.Methods (whose FinalELBO is
// set) from the ELBO curves elbo[i] and their cumulative seconds secs[i] of the methods.
func summariseCurves(c *Curves, elbo, secs [][]float64) {
	c.Tol, c.BestELBO = IllustrationTol, math.Inf(-1)
	for _, s := range c.Methods {
		c.BestELBO = math.Max(c.BestELBO, s.FinalELBO)
	}
	target := c.BestELBO - c.Tol*math.Abs(c.BestELBO)
	for i := range c.Methods {
		for t, v := range elbo[i] {
			if v >= target {
				t, sec := t, secs[i][t]
				c.Methods[i].ItersToTol, c.Methods[i].SecondsToTol = &t, &sec
				break
			}
		}
	}
}

func init() {
	register(&Entry{Name: IllustrationEntry, Dataset: IllustrationDataset, Model: "odvgp-illustration",
		Summary: fmt.Sprintf("ELBO curves of COUPLED, COUPLEDNAT, DECOUPLED, HYBRID, ORTH, ORTHNAT: fixed SE-ARD "+
			"and bases |γ|=|β|=%d, Bernoulli, full batch, %d steps each (≈2–3 s per step and method on 2 cores); "+
			"CSV to --curves, no test metrics", IllustrationBases, IllustrationIters),
		Reference: odvgpRef + ", Fig. 2b (illustration) and Sec. 5; MATH.md §6–8; split protocol: " +
			sources[IllustrationDataset].protocol,
		Published: "seed 001 Fig. 2b plots curves only (no numbers; 10⁴ iterations): the natural-gradient methods " +
			"converge much faster than their ordinary-gradient counterparts, DECOUPLED does not reach the optimum",
		Iters: IllustrationIters, WritesCurves: true, run: runIllustration})
}

// runIllustration is the entry ringnorm/odvgp-illustration: Illustrate with the CSV written to o.CurvesOut
// (default IllustrationCurvesFile) and its summary in Result.Curves. o.Inducing sets |γ| = |β|. There is no
// test evaluation: NTest is 0, TestRMSE and TestAccuracy are nil and test_ll is null in the JSON. TrainSeconds
// is summed over the six methods and SecondsPerIter is its mean per step of one method; ELBOPerPoint is
// Curves.BestELBO per training point. o.Optimizer (other than "adam"), o.BatchSize and o.NatGrad are refused:
// the methods fix their optimisers and the illustration is full batch.
func runIllustration(e *Entry, o Options) (*Result, error) {
	switch {
	case o.Optimizer != "" && o.Optimizer != "adam":
		return nil, fmt.Errorf("zoo: %s: unknown optimizer %q (each method fixes its own: adam, natural steps for COUPLEDNAT and ORTHNAT)", e.Name, o.Optimizer)
	case o.BatchSize > 0:
		return nil, fmt.Errorf("zoo: %s: the illustration is full batch (no minibatch size)", e.Name)
	case o.NatGrad:
		return nil, fmt.Errorf("zoo: %s: --natgrad does not apply (COUPLEDNAT and ORTHNAT are among the methods)", e.Name)
	case o.SaveModel != "":
		return nil, fmt.Errorf("zoo: %s: trains six models side by side: nothing to save", e.Name)
	}
	if err := o.refuseCheckpoint(e, "the illustration"); err != nil {
		return nil, err
	}
	iters := e.Iters
	if o.Iters > 0 {
		iters = o.Iters
	}
	path := o.CurvesOut
	if path == "" {
		path = IllustrationCurvesFile
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", e.Name, err)
	}
	ill, err := illustrate(IllustrationOptions{Dataset: e.Dataset, DataDir: o.DataDir, Split: o.Split, Seed: o.Seed,
		Iters: iters, Bases: o.Inducing, Out: f, Logger: o.Logger, Progress: o.Progress})
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("zoo: %s: writing %s: %w", e.Name, path, cerr)
	}
	if err != nil {
		return nil, err
	}
	res := newResult(e, o)
	res.DataSource, res.NTrain, res.Iters = ill.source, ill.nTrain, ill.iters
	res.TrainSeconds, res.BuildSeconds, res.CholeskyRetries = ill.seconds, ill.building, ill.retries
	res.SecondsPerIter = ill.seconds / float64(ill.iters*len(ill.curves.Methods))
	res.ELBOPerPoint = ill.curves.BestELBO / float64(ill.nTrain)
	res.Optimizer = fmt.Sprintf("full batch, fixed SE-ARD (σ²=%g, ℓ=%.4g) and bases |γ|=|β|=%d; adam(%g); "+
		"natgrad(γ 1e-4→0.1) on q(u) of COUPLEDNAT and q(u_β) of ORTHNAT", ill.variance, ill.ls, ill.bases, IllustrationLR)
	ill.curves.File = path
	res.Curves = ill.curves
	return res, nil
}

func illustrationMethods(sel []string) ([]string, error) {
	if len(sel) == 0 {
		return IllustrationMethods, nil
	}
	var out []string
	for _, s := range sel {
		found := false
		for _, m := range IllustrationMethods {
			if strings.EqualFold(s, m) {
				out, found = append(out, m), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("zoo: Illustrate: unknown method %q (want one of %s)", s, strings.Join(IllustrationMethods, ", "))
		}
	}
	return out, nil
}

// illustrateOne trains one method with frozen kernel and bases for iters full-batch steps.
func illustrateOne(meth string, tr *datasets.Dataset, beta, gamma *mat.Dense, variance, ls float64, iters int, progress io.Writer) (*train.Result, error) {
	d := tr.D()
	lss := make([]float64, d)
	for i := range lss {
		lss[i] = ls
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: variance, Lengthscales: lss})
	if err != nil {
		return nil, err
	}
	for _, p := range kern.Params() {
		p.SetTrainable(false)
	}
	family := strings.ToLower(meth)
	g := gamma
	if family == "coupled" || family == "couplednat" {
		g = nil
	}
	ol, err := newODVGPLayer(layerConfig{family: family, kernel: kern, beta: beta, gamma: g, latent: 1, fixBases: true})
	if err != nil {
		return nil, err
	}
	lik, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		return nil, err
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: ol.layer, Likelihood: lik, NumData: tr.N()})
	if err != nil {
		return nil, err
	}
	var hooks []train.Hook
	if family == "couplednat" || family == "orthnat" {
		h, err := natGradHook(ol.q, false, iters)
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, h)
	}
	// Full batch; Eval records the wall time after every step (it computes nothing).
	return train.Train(model, tr.X, tr.Y, rand.New(rand.NewPCG(1, 2)), train.Config{Iters: iters, Hooks: hooks,
		Optimizer: &train.Adam{LR: IllustrationLR}, EvalEvery: 1, Progress: progress,
		Eval: func(int) (map[string]float64, error) { return nil, nil }})
}
