package zoo_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

// TestDGPScoresRealTargets: a deep GP with a non-Gaussian likelihood of real targets (Student-t) is scored as
// regression, not as a classifier (the likelihood's registered family says what its targets are): RMSE and no
// accuracy, and its test log density in the targets' original units — the same fit on the targets scaled by
// 1024 (a power of two: the standardised targets, hence the fit, are the same bits) reports the RMSE times 1024
// and the LL minus log 1024.
func TestDGPScoresRealTargets(t *testing.T) {
	t.Parallel()
	cfg := zoo.CustomConfig{Family: "dgp", Likelihood: "studentt", Inducing: 10, Hidden: []int{1}, Iters: 60, LR: 0.05, TestSamples: 4}
	run := func(scale float64) *zoo.Result {
		d := toyData(120, 0)
		var y mat.Dense
		y.Apply(func(_, _ int, v float64) float64 { return scale * v }, d.Y)
		c, err := zoo.TrainCustom(&datasets.Dataset{Name: d.Name, X: d.X, Y: &y, FeatureNames: d.FeatureNames}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := c.Result
		if r.TestAccuracy != nil || r.TestRMSE == nil || math.IsNaN(*r.TestRMSE) || math.IsNaN(r.TestLL) {
			t.Fatalf("scale %v: accuracy %v, RMSE %v, LL %v: want a regression's RMSE and LL", scale, r.TestAccuracy, r.TestRMSE, r.TestLL)
		}
		return r
	}
	a, b := run(1), run(1024)
	t.Logf("RMSE %.4f, %.4f; LL %.4f, %.4f", *a.TestRMSE, *b.TestRMSE, a.TestLL, b.TestLL)
	if d := b.TestLL - a.TestLL + math.Log(1024); math.Abs(d) > 1e-9 {
		t.Errorf("LL %.9f at scale 1024, %.9f at scale 1: differ by %.3g + log 1024, want the log density in original units", b.TestLL, a.TestLL, d)
	}
	if r := *b.TestRMSE / *a.TestRMSE / 1024; math.Abs(r-1) > 1e-9 {
		t.Errorf("RMSE %v at scale 1024, %v at scale 1", *b.TestRMSE, *a.TestRMSE)
	}
}
