package zoo_test

import (
	"testing"

	"github.com/gpzoo/gpzoo/zoo"
)

// BenchmarkClusterStaleSteps measures what stale gradients cost an asynchronous fit at two step sizes: an SVGP
// (M = 12) on the 200-row toy set, 3 workers with minibatches of 20 rows, synchronous (τ = 0) and τ = 2, Adam
// 0.05 for 3000 updates and Adam 0.01 for 10 000, seeds 1–6. It reports the mean test log likelihood and RMSE
// over the seeds and the gradients' mean staleness (docs/cluster.md quotes a run):
//
//	go test ./zoo -run '^$' -bench ClusterStaleSteps -benchtime 1x
func BenchmarkClusterStaleSteps(b *testing.B) {
	reg := toyData(200, 0)
	for _, c := range []struct {
		name  string
		tau   int
		lr    float64
		iters int
	}{
		{"sync-adam0.05", 0, 0.05, 3000},
		{"tau2-adam0.05", 2, 0.05, 3000},
		{"sync-adam0.01", 0, 0.01, 10000},
		{"tau2-adam0.01", 2, 0.01, 10000},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				var ll, rmse, lag float64
				const seeds = 6
				for seed := range seeds {
					run, err := zoo.TrainCustom(reg, zoo.CustomConfig{Family: "svgp", Inducing: 12, Iters: c.iters, LR: c.lr, BatchSize: 20,
						Seed: uint64(seed + 1), Cluster: &zoo.ClusterConfig{Workers: 3, Tau: c.tau}})
					if err != nil {
						b.Fatal(err)
					}
					b.Logf("seed %d: test LL %.4f, RMSE %.4f, mean staleness %.2f", seed+1, run.Result.TestLL, *run.Result.TestRMSE,
						run.Result.Cluster.MeanStaleness)
					ll += run.Result.TestLL / seeds
					rmse += *run.Result.TestRMSE / seeds
					lag += run.Result.Cluster.MeanStaleness / seeds
				}
				b.ReportMetric(ll, "test_ll")
				b.ReportMetric(rmse, "test_rmse")
				b.ReportMetric(lag, "staleness")
			}
		})
	}
}
