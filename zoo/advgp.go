package zoo

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/advgp"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// ADVGP entries (seed 002; MATH.md §11): a parameter server and Options.Workers workers over NATS (an embedded
// server on loopback unless Options.NATSURL is set), each worker owning a contiguous shard of the training set.
const (
	// ADVGPWorkers is the default number of workers; ADVGPTau the default delay bound.
	ADVGPWorkers = 4
	ADVGPTau     = 4
	// ADVGPSlowDelay is the pause of the slow worker in the delay study of synthetic10m/advgp.
	ADVGPSlowDelay = 50 * time.Millisecond
)

// ADVGPStats are the distributed-training numbers of an ADVGP run (Result.ADVGP).
type ADVGPStats struct {
	ClusterStats
	// Studies of synthetic10m/advgp: throughput against the number of workers (seed 002 Fig. 1) and the delay
	// bound with one slow worker (Fig. 2); each row is one run with its test RMSE against training seconds.
	Throughput []ADVGPStudyRun `json:"throughput,omitempty"`
	Delay      []ADVGPStudyRun `json:"delay,omitempty"`
}

// ADVGPStudyRun is one run of a study.
type ADVGPStudyRun struct {
	Workers         int       `json:"workers"`
	Tau             int       `json:"tau"`
	SlowDelay       string    `json:"slow_delay,omitempty"`
	Updates         int       `json:"updates"`
	Seconds         float64   `json:"seconds"`
	PointsPerSecond float64   `json:"points_per_second"`
	TestRMSE        float64   `json:"test_rmse"`
	CurveSeconds    []float64 `json:"curve_seconds"`
	CurveRMSE       []float64 `json:"curve_rmse"`
}

type advgpSpec struct {
	data      string
	inducing  int
	batch     int // per worker and update
	iters     int
	qstep     float64
	published string
}

// synthetic10m is the generated data set of synthetic10m/advgp: 10⁷ training rows in 3 dimensions, y = F(x) +
// N(0, 0.1²), each worker generating its own shard; rows past 10⁷ are the test set.
var synthetic10m = cluster.Synthetic{N: 10_000_000, D: 3, Noise: 0.1, Seed: 0x10e7}

const synthetic10mTest = 10_000

func init() {
	for _, sp := range []advgpSpec{
		{data: "protein", inducing: 100, batch: 500, iters: 8000, qstep: 0.01,
			published: "SVGP-minibatch LL −2.923, RMSE 4.501 (bayesian_benchmarks; compare protein-bb/svgp-minibatch)"},
		{data: "kin40k", inducing: 100, batch: 500, iters: 8000, qstep: 0.01},
		{data: "keggdirected", inducing: 100, batch: 500, iters: 8000, qstep: 0.01},
		{data: "synthetic10m", inducing: 50, batch: 1000, iters: 600, qstep: 0.01},
	} {
		sp := sp
		summary := fmt.Sprintf("ADVGP: parameter server + %d NATS workers, τ=%d, M=%d, proximal updates of q(w), batch %d per worker", ADVGPWorkers, ADVGPTau, sp.inducing, sp.batch)
		if sp.data == "synthetic10m" {
			summary = "ADVGP on 10⁷ generated points: throughput against workers (1, 2, 4) and the delay study (τ = 0, 5, 20, 80, one slow worker)"
		}
		register(&Entry{Name: sp.data + "/advgp", Dataset: sp.data, Model: "advgp", Summary: summary,
			Reference: "Peng, Zhe & Qi 2017 (seed 002), Algorithm 1, eqs. 14–20; Figs. 1–2 for synthetic10m", Published: sp.published,
			Iters: sp.iters, run: func(e *Entry, o Options) (*Result, error) { return runADVGP(e, o, sp) }})
	}
}

// advgpProblem is what a run trains on: the training inputs used to place Z, the test set and its
// standardisation, and the data the workers load.
type advgpProblem struct {
	trX    *mat.Dense
	n      int
	te     *datasets.Dataset
	std    *datasets.Standardizer
	ref    cluster.DataRef
	load   cluster.Loader
	source string
}

func advgpData(e *Entry, o Options) (*advgpProblem, error) {
	if e.Dataset == "synthetic10m" {
		s := synthetic10m
		sub, _, err := s.Rows(0, 20_000) // Z by k-means on a subset (as the paper's NYC runs)
		if err != nil {
			return nil, err
		}
		tx, ty, err := s.Rows(s.N, s.N+synthetic10mTest)
		if err != nil {
			return nil, err
		}
		id := &datasets.Standardizer{XMean: make([]float64, s.D), XStd: onesN(s.D), YMean: []float64{0}, YStd: []float64{1}}
		return &advgpProblem{trX: sub, n: s.N, te: &datasets.Dataset{X: tx, Y: ty}, std: id, ref: cluster.DataRef{Synthetic: &s},
			source: fmt.Sprintf("generated: %d rows, D=%d, y = F(x) + N(0, %g²), seed %#x", s.N, s.D, s.Noise, s.Seed)}, nil
	}
	spl, err := loadSplit(e.Dataset, o.DataDir, o.Split)
	if err != nil {
		return nil, err
	}
	tr, te, std, err := spl.standardised(false)
	if err != nil {
		return nil, err
	}
	load := func(cluster.DataRef) (x, y *mat.Dense, err error) { return tr.X, tr.Y, nil }
	return &advgpProblem{trX: tr.X, n: tr.N(), te: te, std: std, ref: cluster.DataRef{Name: e.Dataset, Dir: o.DataDir, Split: o.Split},
		load: load, source: spl.source}, nil
}

// newADVGPModel returns the model of a run: SE-ARD kernel (unit variance and length-scales on standardised
// inputs), Z by k-means, q(w) = N(0, I).
func newADVGPModel(e *Entry, o Options, sp advgpSpec, p *advgpProblem) (*advgp.Model, error) {
	m := sp.inducing
	if o.Inducing > 0 {
		m = o.Inducing
	}
	_, d := p.trX.Dims()
	z, err := gp.KMeans(p.trX, m, DefaultKMeansIters, rand.New(rand.NewPCG(o.Seed, uint64(o.Split)+0xad6)))
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: inducing inputs: %w", e.Name, err)
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 1, Lengthscales: onesN(d)})
	if err != nil {
		return nil, err
	}
	return advgp.New(advgp.Config{Kernel: kern, Z: z, NumData: p.n})
}

// advgpRun is one distributed training run.
type advgpRun struct {
	workers, tau, iters, batch int
	delay                      map[int]time.Duration
	evalEvery                  int
}

// trainADVGP trains a fresh model of the entry with run r and returns it with the server's result.
func trainADVGP(e *Entry, o Options, sp advgpSpec, p *advgpProblem, r advgpRun) (*advgp.Model, *cluster.Result, error) {
	model, err := newADVGPModel(e, o, sp, p)
	if err != nil {
		return nil, nil, err
	}
	score := func(int) (map[string]float64, error) {
		res := &Result{}
		if _, err := scoreSVGP(res, model.SVGP, p.te, p.std); err != nil {
			return nil, err
		}
		return map[string]float64{"test_rmse": *res.TestRMSE, "test_ll": res.TestLL}, nil
	}
	opt, hooks, err := cluster.ADVGPUpdate(model, cluster.ADVGPRule{QStep: sp.qstep})
	if err != nil {
		return nil, nil, err
	}
	c := cluster.LocalConfig{URL: o.NATSURL, Security: o.NATSSecurity, Spawn: o.Spawn, Loader: p.load, Delay: r.delay,
		Server: cluster.ServerConfig{Job: cluster.Job{Run: o.NATSRun, Data: p.ref, NumData: p.n, Workers: r.workers, Batch: r.batch, Seed: o.Seed, Tau: r.tau},
			Iters: r.iters, Optimizer: opt, Hooks: hooks, DataGradOnly: true, ReuseGradients: true, EvalEvery: r.evalEvery, Eval: score, Logger: o.Logger, Progress: o.Progress, Stop: o.Stop,
			CheckpointDir: o.CheckpointDir, CheckpointEvery: o.CheckpointEvery, Resume: o.Resume}}
	res, err := cluster.Local(model.SVGP, c)
	if o.Progress != nil {
		fmt.Fprintln(o.Progress)
	}
	if err != nil {
		return nil, res, fmt.Errorf("zoo: %s: %w", e.Name, err)
	}
	return model, res, nil
}

func runADVGP(e *Entry, o Options, sp advgpSpec) (*Result, error) {
	p, err := advgpData(e, o)
	if err != nil {
		return nil, err
	}
	workers, tau, iters, batch := ADVGPWorkers, ADVGPTau, sp.iters, sp.batch
	if o.Workers > 0 {
		workers = o.Workers
	}
	if o.Tau != nil {
		tau = *o.Tau
	}
	if o.Iters > 0 {
		iters = o.Iters
	}
	if o.BatchSize > 0 {
		batch = o.BatchSize
	}
	evalEvery := o.EvalEvery
	if evalEvery <= 0 {
		evalEvery = max(1, iters/20)
	}
	res := newResult(e, o)
	res.DataSource, res.NTrain, res.NTest, res.Iters = p.source, p.n, p.te.N(), iters
	stats := &ADVGPStats{}
	if e.Dataset == "synthetic10m" {
		if o.CheckpointDir != "" || o.Resume {
			return nil, fmt.Errorf("zoo: %s runs several trainings: checkpoints are for the other ADVGP entries", e.Name)
		}
		// Throughput against workers (τ as configured), then the delay study with shard 0 slowed down.
		for _, k := range []int{1, 2, 4} {
			run := advgpRun{workers: k, tau: tau, iters: iters, batch: batch, evalEvery: evalEvery}
			row, err := studyRun(e, o, sp, p, run)
			if err != nil {
				return nil, err
			}
			stats.Throughput = append(stats.Throughput, row)
		}
		for _, t := range []int{0, 5, 20, 80} {
			run := advgpRun{workers: workers, tau: t, iters: iters, batch: batch, evalEvery: evalEvery, delay: map[int]time.Duration{0: ADVGPSlowDelay}}
			row, err := studyRun(e, o, sp, p, run)
			if err != nil {
				return nil, err
			}
			stats.Delay = append(stats.Delay, row)
		}
	}
	model, dres, err := trainADVGP(e, o, sp, p, advgpRun{workers: workers, tau: tau, iters: iters, batch: batch, evalEvery: evalEvery})
	if err != nil {
		return nil, err
	}
	res.Optimizer = fmt.Sprintf("ADVGP: %d workers, τ=%d, prox-Adam(%g) on q(w), Adam(%g) on the rest, batch %d/worker, M=%d",
		workers, tau, sp.qstep, cluster.DefaultHyperStep, batch, model.M())
	// The server's record as a training loop's (losses as whole-data objectives), for fillTraining.
	tres := &train.Result{Steps: dres.Updates, Losses: make([]float64, len(dres.Losses)), Times: dres.Times,
		Seconds: dres.Seconds, Evals: dres.Evals}
	for i, l := range dres.Losses {
		tres.Losses[i] = l * float64(p.n)
	}
	if dres.Updates > 0 {
		tres.SecondsPerIter = dres.Seconds / float64(dres.Updates)
	}
	fillTraining(res, tres, p.n)
	stats.ClusterStats = newClusterStats(dres, workers, tau)
	res.ADVGP = stats
	if err := saveModel(e, o, res, model.SVGP, p.std); err != nil {
		return nil, err
	}
	return scoreSVGP(res, model.SVGP, p.te, p.std)
}

// studyRun trains one run of a study and summarises it; its test RMSE is the evaluation after the last update.
func studyRun(e *Entry, o Options, sp advgpSpec, p *advgpProblem, r advgpRun) (ADVGPStudyRun, error) {
	_, dres, err := trainADVGP(e, o, sp, p, r)
	if err != nil {
		return ADVGPStudyRun{}, err
	}
	row := ADVGPStudyRun{Workers: r.workers, Tau: r.tau, Updates: dres.Updates, Seconds: dres.Seconds, PointsPerSecond: dres.PointsPerSecond}
	if d := r.delay[0]; d > 0 {
		row.SlowDelay = d.String()
	}
	for _, ev := range dres.Evals {
		row.CurveSeconds, row.CurveRMSE = append(row.CurveSeconds, ev.Seconds), append(row.CurveRMSE, ev.Metrics["test_rmse"])
	}
	if n := len(dres.Evals); n == 0 || dres.Evals[n-1].Step != dres.Updates {
		return row, fmt.Errorf("zoo: %s: study run without an evaluation after its last update", e.Name)
	}
	row.TestRMSE = row.CurveRMSE[len(row.CurveRMSE)-1]
	if o.Logger != nil {
		o.Logger.Info("advgp study run", "workers", r.workers, "tau", r.tau, "seconds", row.Seconds, "points_per_second", row.PointsPerSecond, "test_rmse", row.TestRMSE)
	}
	return row, nil
}
