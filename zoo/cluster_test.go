package zoo_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// A family that is a sum over rows trains on a cluster of in-process workers over the embedded NATS server:
// synchronous (τ = 0), full batch, it follows the single-process fit step for step (the same test LL to 1e-6),
// for a sparse family with natural gradients and for a deep GP; with minibatches and τ = 2 it still learns.
// GPR, SGPR and L-BFGS refuse it.
func TestTrainCustomOnCluster(t *testing.T) {
	reg := toyData(200, 0)
	for _, c := range []zoo.CustomConfig{
		{Family: "svgp", Inducing: 12, Iters: 25, LR: 0.05, BatchSize: 1000, NatGrad: true},
		{Family: "orthnat", Inducing: 8, MeanBases: 10, Iters: 25, LR: 0.05, BatchSize: 1000},
		{Family: "dgp", Inducing: 10, Hidden: []int{2}, Iters: 25, LR: 0.05, BatchSize: 1000, TestSamples: 5},
	} {
		single, err := zoo.TrainCustom(reg, c)
		if err != nil {
			t.Fatal(err)
		}
		c.Cluster = &zoo.ClusterConfig{Workers: 3}
		dist, err := zoo.TrainCustom(reg, c)
		if err != nil {
			t.Fatalf("%s on 3 workers: %v", c.Family, err)
		}
		if st := dist.Result.Cluster; st == nil || st.Workers != 3 || st.Updates != c.Iters || single.Result.Cluster != nil {
			t.Fatalf("%s: cluster numbers %+v on 3 workers, %+v in one process", c.Family, st, single.Result.Cluster)
		}
		if d := math.Abs(single.Result.TestLL - dist.Result.TestLL); !(d < 1e-6) || dist.Result.Iters != c.Iters {
			t.Errorf("%s: test LL %v single-process, %v on 3 workers after %d updates", c.Family, single.Result.TestLL, dist.Result.TestLL, dist.Result.Iters)
		}
	}
	// Asynchronous: the result depends on the timing. Synchronous (τ = 0) training reaches 0.65 every time; with
	// τ = 2 it was 1.0–2.7 in 10 runs on a loaded machine, and once 10.5 in a CI run of every package at once. A
	// model that learnt nothing predicts the mean, about 15. The median of three runs must show learning. At this
	// step size (Adam 0.05) stale gradients keep the fit far from the synchronous one however long it trains
	// (docs/cluster.md, "Stale gradients and the step size").
	var rmses []float64
	var stats []*zoo.ClusterStats
	for range 3 {
		c := zoo.CustomConfig{Family: "svgp", Inducing: 12, Iters: 300, LR: 0.05, BatchSize: 20, Cluster: &zoo.ClusterConfig{Workers: 3, Tau: 2}}
		run, err := zoo.TrainCustom(reg, c)
		if err != nil {
			t.Fatal(err)
		}
		if run.Result.TestRMSE == nil {
			t.Fatal("no test RMSE")
		}
		rmses, stats = append(rmses, *run.Result.TestRMSE), append(stats, run.Result.Cluster)
		if st := run.Result.Cluster; !(st.MeanStaleness > 0 && st.MeanStaleness <= 2) {
			t.Errorf("τ = 2: mean staleness %v, want it in (0, 2]", st.MeanStaleness)
		}
	}
	if sorted := slices.Sorted(slices.Values(rmses)); !(sorted[1] < 7.5) {
		t.Errorf("minibatches of 20 rows, τ = 2: test RMSEs %.3g (targets' sd about 15); cluster %+v %+v %+v", rmses, *stats[0], *stats[1], *stats[2])
	}
	bad := zoo.CustomConfig{Family: "sgpr", Inducing: 10, Iters: 5, Cluster: &zoo.ClusterConfig{Workers: 2}}
	if _, err := zoo.TrainCustom(reg, bad); !errors.Is(err, zoo.ErrNotRowSum) {
		t.Errorf("sgpr on a cluster: %v, want ErrNotRowSum", err)
	}
	bad = zoo.CustomConfig{Family: "gpr", Iters: 5, Exact: zoo.ExactOptions{Solver: "cholesky"}, Cluster: &zoo.ClusterConfig{Workers: 2}}
	if _, err := zoo.TrainCustom(reg, bad); !errors.Is(err, zoo.ErrBadCustom) {
		t.Errorf("gpr by Cholesky on a cluster: %v, want ErrBadCustom", err)
	}
}

// The exact GP on a cluster trains by conjugate gradients, its kernel products computed by the workers' row
// blocks: from the same subset start, seeds and probes it makes the single process's fit. Not bit for bit: the
// products are summed in another order, which CG at tolerance 1 amplifies over 5 steps (measured: 7.5e-5 in the
// test RMSE, 9e-5 in the test LL; package cluster's TestProductsMatchOneProcess pins one step to 1e-9 against
// the same order). Scoring runs after the workers left: the fit predicts without them.
func TestExactGPOnCluster(t *testing.T) {
	d := toyData(1200, 0)
	single, dist := onTwoWorkers(t, d, zoo.CustomConfig{Family: "gpr", Iters: 5, Exact: zoo.ExactOptions{Solver: "cg", Subset: 300, SubsetIters: 20}})
	s, r := single.Result, dist.Result
	t.Logf("test RMSE %.10g (one process), %.10g (2 workers); test LL %.10g, %.10g", *s.TestRMSE, *r.TestRMSE, s.TestLL, r.TestLL)
	if r.Exact == nil || r.Exact.Solver != "cg" || !strings.Contains(r.Exact.Products, "2 workers") || r.Iters != 5 {
		t.Fatalf("the cluster fit: %+v, %d steps", r.Exact, r.Iters)
	}
	if e := math.Abs(*s.TestRMSE-*r.TestRMSE) / *s.TestRMSE; !(e < 1e-3) {
		t.Errorf("test RMSE %.10g on 2 workers, %.10g in one process (relative %.2g)", *r.TestRMSE, *s.TestRMSE, e)
	}
	if e := math.Abs(s.TestLL - r.TestLL); !(e < 1e-3) {
		t.Errorf("test LL %.10g on 2 workers, %.10g in one process", r.TestLL, s.TestLL)
	}
	if !strings.Contains(r.Summary(), "2 workers") {
		t.Errorf("the summary does not say where the products ran:\n%s", r.Summary())
	}
	// An entry of the exact GP the same way (gpzoo run airfoil/gpr --workers 2).
	e, err := zoo.Lookup("airfoil/gpr")
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(zoo.Options{Workers: 2, Iters: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Exact == nil || !strings.Contains(res.Exact.Products, "2 workers") || res.Iters != 3 || res.TestRMSE == nil {
		t.Errorf("airfoil/gpr on 2 workers: %+v, %d steps", res.Exact, res.Iters)
	}
}

// An entry of a family that is a sum over rows trains on workers (Options.Workers; in-process here).
func TestEntryOnCluster(t *testing.T) {
	e, err := zoo.Lookup("airfoil/svgp")
	if err != nil {
		t.Fatal(err)
	}
	tau := 1
	res, err := e.Run(zoo.Options{Workers: 2, Tau: &tau, Iters: 40})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Cluster; c == nil || c.Workers != 2 || c.Tau != 1 || c.Updates != 40 || res.Iters != 40 || !(c.PointsPerSecond > 0) {
		t.Errorf("cluster numbers %+v, iters %d", c, res.Iters)
	}
	if !strings.Contains(res.Summary(), "cluster: 2 workers") {
		t.Errorf("the summary does not report the cluster:\n%s", res.Summary())
	}
}

// A file too large for memory trains on workers that read only their shards of it: the server builds the model
// from a sample of the training rows, scales it to every training row (the hash split's), and scores the
// file's test rows; a row file and the same rows as a CSV give the same synchronous (τ = 0) fit.
func TestTrainRows(t *testing.T) {
	dir := t.TempDir()
	d, err := datasets.Synthetic(datasets.SynthConfig{Rows: 3000, Inputs: 3, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	bin, csv := filepath.Join(dir, "d.gpzr"), filepath.Join(dir, "d.csv")
	var b bytes.Buffer
	if err := datasets.WriteRowFile(&b, d.X, d.Y, append(append([]string(nil), d.FeatureNames...), "y")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := datasets.WriteTable(&b, d, "y"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csv, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := zoo.CustomConfig{Family: "svgp", Inducing: 20, Iters: 150, LR: 0.05, BatchSize: 256, Cluster: &zoo.ClusterConfig{Workers: 3}}
	var runs []*zoo.Custom
	for _, src := range []datasets.RowSource{{Path: bin}, {Path: csv, Targets: []string{"y"}}} {
		cc := *c.Cluster
		c.Cluster = &cc
		run, err := zoo.TrainRows(src, c, zoo.RowsConfig{SampleRows: 500, TestRows: 200})
		if err != nil {
			t.Fatal(err)
		}
		r := run.Result
		if r.NTrain < 2600 || r.NTrain > 2800 || r.NTest != 200 || r.Cluster == nil || r.Cluster.Updates != 150 {
			t.Fatalf("%s: %d training rows, %d test rows, cluster %+v", src.Path, r.NTrain, r.NTest, r.Cluster)
		}
		if sd := stat.PopStdDev(mat.Col(nil, 0, d.Y), nil); r.TestRMSE == nil || !(*r.TestRMSE < 0.6*sd) {
			t.Errorf("%s: test RMSE %v, the targets' sd %v", src.Path, r.TestRMSE, sd)
		}
		runs = append(runs, run)
	}
	if a, b := runs[0].Result, runs[1].Result; a.NTrain != b.NTrain || math.Abs(a.TestLL-b.TestLL) > 1e-9 {
		t.Errorf("row file: %d rows, test LL %v; CSV: %d rows, %v", a.NTrain, a.TestLL, b.NTrain, b.TestLL)
	}
	if _, err := zoo.TrainRows(datasets.RowSource{Path: bin}, zoo.CustomConfig{Family: "svgp"}, zoo.RowsConfig{}); !errors.Is(err, zoo.ErrBadCustom) {
		t.Errorf("without workers: %v, want ErrBadCustom", err)
	}
}

// The exact GP with repeated inputs collapsed (gp.Replicates) trains on a cluster's products as in one process:
// the workers receive the distinct inputs, the scaled operator (cg.Config.Replicates) wraps their products, and
// the fit, from the same subset start, seeds and probes, predicts as the single process's does.
func TestExactCollapsedOnCluster(t *testing.T) {
	const distinct, rows = 700, 1000 // two row blocks of 512 distinct inputs
	toy := toyData(distinct, 0)
	rng := rand.New(rand.NewPCG(13, 14))
	x, y := mat.NewDense(rows, 2, nil), mat.NewDense(rows, 1, nil)
	for i := range rows {
		j := i
		if i >= distinct {
			j = rng.IntN(distinct)
		}
		x.SetRow(i, toy.X.RawRowView(j))
		y.Set(i, 0, toy.Y.At(j, 0)+rng.NormFloat64())
	}
	d := &datasets.Dataset{Name: "repeated", X: x, Y: y, FeatureNames: toy.FeatureNames}
	single, dist := onTwoWorkers(t, d, zoo.CustomConfig{Family: "gpr", Iters: 5, TestFraction: -1, Exact: zoo.ExactOptions{Solver: "cg", Subset: 200, SubsetIters: 20}})
	s, r := single.Result, dist.Result
	if e := r.Exact; e == nil || e.Rows != rows || e.Distinct != distinct || !strings.Contains(e.Products, "2 workers") || r.Iters != 5 {
		t.Fatalf("the cluster fit: %+v, %d steps", r.Exact, r.Iters)
	}
	t.Logf("objective per row %.10g (one process), %.10g (2 workers)", s.ELBOPerPoint, r.ELBOPerPoint)
	if e := math.Abs(s.ELBOPerPoint-r.ELBOPerPoint) / math.Abs(s.ELBOPerPoint); !(e < 1e-3) {
		t.Errorf("objective per row %.10g on 2 workers, %.10g in one process (relative %.2g)", r.ELBOPerPoint, s.ELBOPerPoint, e)
	}
	xs := mat.NewDense(3, 2, []float64{0.1, -0.2, 1.3, 0.4, -0.7, 0.9})
	ps, err := single.File.Predict(xs, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := dist.File.Predict(xs, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if e := math.Abs(ps.Mean.At(i, 0)-pr.Mean.At(i, 0)) / (1 + math.Abs(ps.Mean.At(i, 0))); !(e < 1e-3) {
			t.Errorf("row %d: mean %.10g on 2 workers, %.10g in one process", i, pr.Mean.At(i, 0), ps.Mean.At(i, 0))
		}
	}
}

// onTwoWorkers fits c on d in one process and then with its products on 2 in-process workers.
func onTwoWorkers(t *testing.T, d *datasets.Dataset, c zoo.CustomConfig) (single, dist *zoo.Custom) {
	t.Helper()
	single, err := zoo.TrainCustom(d, c)
	if err != nil {
		t.Fatal(err)
	}
	c.Cluster = &zoo.ClusterConfig{Workers: 2}
	if dist, err = zoo.TrainCustom(d, c); err != nil {
		t.Fatal(err)
	}
	return single, dist
}
