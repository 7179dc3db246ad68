package zoo_test

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// kin40k/advgp end to end (on generated data in kin40k's format): two in-process workers over the embedded NATS
// server, the test metrics, the distributed-training statistics and a model file that predicts as the run scored.
func TestADVGPEntry(t *testing.T) {
	data := datatest.Fake(t, "kin40k")
	e, err := zoo.Lookup("kin40k/advgp")
	if err != nil {
		t.Fatal(err)
	}
	tau := 2
	path := filepath.Join(t.TempDir(), "m.gpz")
	res, err := e.Run(zoo.Options{DataDir: data, Seed: 1, Iters: 60, Workers: 2, Tau: &tau, SaveModel: path})
	if err != nil {
		t.Fatal(err)
	}
	a := res.ADVGP
	if a == nil || a.Workers != 2 || a.Tau != 2 || a.Updates != 60 || res.Iters != 60 || a.PointsPerSecond <= 0 || len(a.PerShard) != 2 {
		t.Fatalf("ADVGP stats %+v, iters %d", a, res.Iters)
	}
	for k, g := range a.PerShard {
		if g == 0 {
			t.Errorf("shard %d pushed no gradient", k)
		}
	}
	f, err := modelfile.LoadFile(path, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spl, err := datasets.LoadEvans(filepath.Join(data, "uci-regression-evans", "kin40k"))
	if err != nil {
		t.Fatal(err)
	}
	_, test, err := datasets.EvansSplit(filepath.Join(data, "uci-regression-evans", "kin40k"), 0)
	if err != nil {
		t.Fatal(err)
	}
	te, err := spl.Subset(test)
	if err != nil {
		t.Fatal(err)
	}
	// A model that learned nothing predicts the mean: its RMSE is the targets' standard deviation.
	if sd := stat.PopStdDev(mat.Col(nil, 0, te.Y), nil); res.TestRMSE == nil || !(*res.TestRMSE < 0.8*sd) || math.IsNaN(res.TestLL) || res.TrainSeconds <= 0 {
		t.Fatalf("test RMSE %v (targets' std %.3g), LL %g after 60 updates", res.TestRMSE, sd, res.TestLL)
	}
	p, err := f.Predict(te.X, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := 0.0
	for i := range te.N() {
		d := p.Mean.At(i, 0) - te.Y.At(i, 0)
		s += d * d
	}
	if got := math.Sqrt(s / float64(te.N())); math.Abs(got-*res.TestRMSE) > 1e-9*(*res.TestRMSE) {
		t.Fatalf("saved model's test RMSE %.12g, the run's %.12g", got, *res.TestRMSE)
	}
}

func TestADVGPOptionsRefused(t *testing.T) {
	e, err := zoo.Lookup("boston-bb/sgpr")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(zoo.Options{Workers: 2}); !errors.Is(err, zoo.ErrNotRowSum) {
		t.Fatalf("SGPR on workers: %v, want ErrNotRowSum", err)
	}
	a, err := zoo.Lookup("kin40k/advgp")
	if err != nil {
		t.Fatal(err)
	}
	neg := -1
	if _, err := a.Run(zoo.Options{DataDir: datatest.Fake(t, "kin40k"), Tau: &neg}); err == nil {
		t.Fatal("τ = −1 accepted")
	}
}

// The workers' loader returns the standardised training part the server's run uses.
func TestClusterLoader(t *testing.T) {
	data := datatest.Fake(t, "kin40k")
	x, y, err := zoo.ClusterLoader(cluster.DataRef{Name: "kin40k", Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	train, _, err := datasets.EvansSplit(filepath.Join(data, "uci-regression-evans", "kin40k"), 0)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	if ny, _ := y.Dims(); n != len(train) || ny != n {
		t.Fatalf("loader: %d and %d rows, want the %d training rows of split 0", n, ny, len(train))
	}
	mean := 0.0
	for i := range n {
		mean += y.At(i, 0)
	}
	if math.Abs(mean/float64(n)) > 1e-9 {
		t.Fatalf("targets not standardised: mean %g", mean/float64(n))
	}
}
