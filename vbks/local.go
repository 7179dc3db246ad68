package vbks

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Local-fit defaults: the paper's synthetic settings (|U| = 16, minibatch 32) and our Adam schedule.
const (
	DefaultNumInducing = 16
	DefaultBatchSize   = 32
	DefaultIters       = 500
	DefaultLR          = 0.01
	DefaultNoise       = 0.1
	DefaultNatGamma    = 0.1
	DefaultRestarts    = 3
	DefaultNoiseFloor  = 1e-3
	DefaultPolishIters = 200
	DefaultDonors      = 3
	DefaultFreshStarts = 1
)

// LocalConfig configures the candidates' sparse GPs and their training on one fraction of the data.
type LocalConfig struct {
	// Build sets the kernels' input dimension and initial hyperparameters (InputDim is taken from the data).
	Build grammar.BuildConfig
	// NumInducing is |U| (default DefaultNumInducing).
	NumInducing int
	// BatchSize is the minibatch size |D̃| (default DefaultBatchSize; clamped to the rows available).
	BatchSize int
	// Iters is the number of Adam steps per data fraction (default DefaultIters); FirstIters those of the
	// first fraction (default 2·Iters), where every fit starts from its initialisation.
	Iters, FirstIters int
	// LR is Adam's rate (default DefaultLR); the last quarter of each fraction's steps uses LR/10, so the
	// whole-fraction ELBO is read near a stationary point rather than in the minibatch noise.
	LR float64
	// Restarts is the number of extra starts on the first fraction, from randomly scaled initial
	// hyperparameters; the best start per kernel continues (default DefaultRestarts; negative: none).
	Restarts int
	// PolishIters is the number of L-BFGS iterations on the collapsed bound that end every fraction's fit
	// (default DefaultPolishIters; negative: none, the minibatch steps alone as in the paper).
	PolishIters int
	// Donors is the number of best-ranked candidates whose fitted hyperparameters every other candidate tries
	// as a start after each fraction (default DefaultDonors; negative: none). See Restart.
	Donors int
	// FreshStarts is the number of starts every candidate also takes after each fraction from its configured
	// initial hyperparameters (the first as configured, the others randomly scaled), with inducing inputs at
	// the k-means centres of the rows seen so far (default DefaultFreshStarts; negative: none). See Restart.
	FreshStarts int
	// NatGamma is the natural-gradient step on q(u) during the minibatch steps (default DefaultNatGamma).
	NatGamma float64
	// NoiseVariance is the initial Gaussian noise variance (default DefaultNoise, for standardised targets).
	NoiseVariance float64
	// NoiseFloor is the lower bound of the noise variance (default DefaultNoiseFloor, standardised units). On
	// noise-free targets (the paper's synthetic sets) a tiny floor lets every ELBO be decided by how well |U|
	// inducing points approximate each kernel (the trace term grows as 1/σ²), not by how well the kernel
	// explains the data: with 10⁻⁶ instead of 10⁻³, (PER+RQ)×LIN's own data preferred PER×LIN+SE.
	NoiseFloor float64
	// Workers bounds the fits run at once (default and maximum runtime.GOMAXPROCS(0)).
	Workers int
	// Graph is the Cholesky jitter policy of every graph.
	Graph graph.Options
}

func (c LocalConfig) withDefaults() LocalConfig {
	c.NumInducing = orDefaultInt(c.NumInducing, DefaultNumInducing)
	c.BatchSize = orDefaultInt(c.BatchSize, DefaultBatchSize)
	c.Iters = orDefaultInt(c.Iters, DefaultIters)
	c.FirstIters = orDefaultInt(c.FirstIters, 2*c.Iters)
	c.LR = defaultIfZero(c.LR, DefaultLR)
	c.Restarts = defaultIfZero(c.Restarts, DefaultRestarts)
	c.NoiseFloor = defaultIfZero(c.NoiseFloor, DefaultNoiseFloor)
	c.PolishIters = defaultIfZero(c.PolishIters, DefaultPolishIters)
	c.Donors = defaultIfZero(c.Donors, DefaultDonors)
	c.FreshStarts = defaultIfZero(c.FreshStarts, DefaultFreshStarts)
	c.NatGamma = defaultIfZero(c.NatGamma, DefaultNatGamma)
	c.NoiseVariance = defaultIfZero(c.NoiseVariance, DefaultNoise)
	procs := runtime.GOMAXPROCS(0)
	if c.Workers <= 0 || c.Workers > procs {
		c.Workers = procs
	}
	return c
}

// defaultIfZero returns d for a zero v; other values, negative ones included ("none"), are kept.
func defaultIfZero[T int | float64](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// orDefaultInt returns d for a non-positive v.
func orDefaultInt(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// Candidate is one kernel's sparse GP (an SVGP with a Gaussian likelihood) and its local ELBOs.
type Candidate struct {
	Expr  *grammar.Expr
	Model *models.SVGP
	// ELBOs[f] is ℒ_i* after data fraction f: the ELBO on all rows seen so far (not a minibatch estimate).
	ELBOs []float64
	// Seconds is the training time of this candidate summed over the fractions (graph building included).
	Seconds float64
	// Err is the error that stopped this candidate (it then takes no part in later posteriors); nil if fine.
	Err error
	// PolishErrors counts the L-BFGS polishes that failed and were undone (the fit they started from stands).
	PolishErrors int

	opt *train.Adam
	// initial is the candidate's configured hyperparameters and noise (no inducing inputs), the state of
	// Restart's fresh starts.
	initial fitState
}

// ELBO returns the latest ℒ_i* (NaN before the first fraction or after a failure).
func (c *Candidate) ELBO() float64 {
	if c.Err != nil || len(c.ELBOs) == 0 {
		return math.NaN()
	}
	return c.ELBOs[len(c.ELBOs)-1]
}

// NewCandidates builds one SVGP per expression from the same inducing inputs z [M,D] (copied for each), so
// every candidate starts from the same U (the paper's shared initialisation); numData is the initial N.
func NewCandidates(exprs []*grammar.Expr, z *mat.Dense, numData int, c LocalConfig) ([]*Candidate, error) {
	c = c.withDefaults()
	_, d := z.Dims()
	b := c.Build
	b.InputDim = d
	out := make([]*Candidate, len(exprs))
	for i, e := range exprs {
		b.Name = fmt.Sprintf("k%d", i)
		k, err := e.Kernel(b)
		if err != nil {
			return nil, fmt.Errorf("vbks: kernel %d %s: %w", i, e, err)
		}
		layer, err := layers.NewSVGP(layers.SVGPConfig{Name: fmt.Sprintf("svgp%d", i), Kernel: k, Z: mat.DenseCopyOf(z)})
		if err != nil {
			return nil, fmt.Errorf("vbks: kernel %d %s: %w", i, e, err)
		}
		lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: max(c.NoiseVariance, 2*c.NoiseFloor), VarianceFloor: c.NoiseFloor})
		if err != nil {
			return nil, err
		}
		m, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: numData})
		if err != nil {
			return nil, err
		}
		out[i] = &Candidate{Expr: e, Model: m, opt: &train.Adam{LR: c.LR}}
		out[i].initial = stateOf(out[i])
		out[i].initial.z = nil
	}
	return out, nil
}

// FitStats reports one fraction's local fits.
type FitStats struct {
	Workers int
	// Seconds is the wall time of the fraction's fits; CPUSeconds the sum of the candidates' own times, so
	// CPUSeconds/Seconds is the parallel speed-up achieved.
	Seconds, CPUSeconds float64
}

// FitFraction warm-starts every live candidate from its current Params, trains it on (x, y) — the rows seen so
// far — with minibatch Adam for iters steps, and appends its whole-data ELBO ℒ_i*. Candidates run in parallel
// on c.Workers goroutines; candidate i's minibatches come from rand.NewPCG(seed, i), so the results do not
// depend on the number of workers. A candidate whose training or evaluation fails keeps the error in Err and
// is skipped from then on; FitFraction itself fails only on invalid arguments.
func FitFraction(cands []*Candidate, x, y *mat.Dense, iters int, seed uint64, c LocalConfig) (FitStats, error) {
	c = c.withDefaults()
	n, _ := x.Dims()
	if ny, _ := y.Dims(); ny != n {
		return FitStats{}, fmt.Errorf("vbks: FitFraction: %d inputs but %d targets", n, ny)
	}
	if iters <= 0 {
		return FitStats{}, fmt.Errorf("vbks: FitFraction: iters must be positive, got %d", iters)
	}
	batch := min(c.BatchSize, n)
	start := time.Now()
	secs := make([]float64, len(cands))
	live, _ := liveELBOs(cands)
	parallel(c.Workers, live, func(i int) {
		secs[i] = fitOne(cands[i], x, y, iters, batch, rand.New(rand.NewPCG(seed, uint64(i))), c)
	})
	return FitStats{Workers: c.Workers, Seconds: time.Since(start).Seconds(), CPUSeconds: floats.Sum(secs)}, nil
}

// parallel calls f(i) for every i of idx on at most workers goroutines and returns when all have returned.
func parallel(workers int, idx []int, f func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f(i)
			}
		}()
	}
	for _, i := range idx {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// fitOne trains cd on one fraction and appends its ℒ_i*; it returns the seconds it took.
func fitOne(cd *Candidate, x, y *mat.Dense, iters, batch int, rng *rand.Rand, c LocalConfig) float64 {
	t0 := time.Now()
	if err := cd.train(x, y, iters, batch, rng, c); err != nil {
		cd.Err = fmt.Errorf("vbks: training %s: %w", cd.Expr, err)
	} else if elbo, err := WholeELBO(cd.Model, x, y, c.Graph); err != nil {
		cd.Err = fmt.Errorf("vbks: ELBO of %s: %w", cd.Expr, err)
	} else {
		cd.ELBOs = append(cd.ELBOs, elbo)
	}
	sec := time.Since(t0).Seconds()
	cd.Seconds += sec
	return sec
}

// train runs iters minibatch steps — natural gradients (γ = c.NatGamma) on q(u), Adam on the kernel, Z and the
// noise — then polishes the hyperparameters on the collapsed bound of (x, y) and settles q(u) at its optimum,
// so the ELBO read afterwards is max_q ℒ_i(q, θ), free of q(u)'s minibatch noise.
func (cd *Candidate) train(x, y *mat.Dense, iters, batch int, rng *rand.Rand, c LocalConfig) error {
	n, _ := x.Dims()
	cd.Model.NumData = n
	nat, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{cd.layer().Q}, Gamma: c.NatGamma})
	if err != nil {
		return err
	}
	decay := iters - iters/4
	cd.opt.Schedule = func(step int, base float64) float64 {
		if step >= decay {
			return base / 10
		}
		return base
	}
	if _, err := train.Train(cd.Model, x, y, rng, train.Config{Iters: iters, BatchSize: batch, Optimizer: cd.opt, Hooks: []train.Hook{nat}, Graph: c.Graph}); err != nil {
		return err
	}
	_ = cd.polish(x, y, c) // a failed polish is undone and counted; the minibatch fit stands
	return cd.settle(x, y, rng, c)
}

// WholeELBO evaluates m's ELBO on all of (x, y) in one forward pass (NumData is set to the rows of x).
func WholeELBO(m *models.SVGP, x, y *mat.Dense, o graph.Options) (float64, error) {
	n, d := x.Dims()
	_, p := y.Dims()
	m.NumData = n
	g := graph.New(o)
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	prog, err := g.CompileForward(map[string]*graph.Node{"elbo": m.ELBO(xn, yn)})
	if err != nil {
		return math.NaN(), err
	}
	defer prog.Close()
	if err := prog.Set("x", x.RawMatrix().Data); err != nil {
		return math.NaN(), err
	}
	if err := prog.Set("y", y.RawMatrix().Data); err != nil {
		return math.NaN(), err
	}
	if err := prog.Run(); err != nil {
		return math.NaN(), err
	}
	v := prog.Output("elbo")[0]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v, errors.New("vbks: non-finite ELBO")
	}
	return v, nil
}

// SharedInducing returns the inducing inputs every candidate starts from: k-means centres of x (k = m, or
// all rows when x has fewer), seeded by rng.
func SharedInducing(x *mat.Dense, m int, rng *rand.Rand) (*mat.Dense, error) {
	n, _ := x.Dims()
	return gp.KMeans(x, min(m, n), 50, rng)
}
