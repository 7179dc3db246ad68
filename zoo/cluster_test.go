package zoo_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/zoo"
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
	c := zoo.CustomConfig{Family: "svgp", Inducing: 12, Iters: 150, LR: 0.05, BatchSize: 60, Cluster: &zoo.ClusterConfig{Workers: 3, Tau: 2}}
	run, err := zoo.TrainCustom(reg, c)
	if err != nil {
		t.Fatal(err)
	}
	if rmse := run.Result.TestRMSE; rmse == nil || !(*rmse < 5) {
		t.Errorf("minibatches, τ = 2: test RMSE %v (targets' sd about 15)", rmse)
	}
	for _, bad := range []zoo.CustomConfig{{Family: "gpr", Iters: 5}, {Family: "sgpr", Inducing: 10, Iters: 5}} {
		bad.Cluster = &zoo.ClusterConfig{Workers: 2}
		if _, err := zoo.TrainCustom(reg, bad); !errors.Is(err, zoo.ErrNotRowSum) {
			t.Errorf("%s on a cluster: %v, want ErrNotRowSum", bad.Family, err)
		}
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
