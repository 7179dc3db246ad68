package zoo_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

// repeatedToy returns toyData's 120 regression rows plus 180 more at their inputs (a third at the first input),
// each with noise of its own.
func repeatedToy() *datasets.Dataset {
	d := toyData(120, 0)
	rng := rand.New(rand.NewPCG(11, 12))
	x, y := mat.NewDense(300, 2, nil), mat.NewDense(300, 1, nil)
	for i := range 300 {
		j := i
		if i >= 120 {
			if j = rng.IntN(120); rng.IntN(3) == 0 {
				j = 0
			}
		}
		x.SetRow(i, d.X.RawRowView(j))
		y.Set(i, 0, d.Y.At(j, 0)+2*rng.NormFloat64())
	}
	return &datasets.Dataset{Name: "repeated", X: x, Y: y, FeatureNames: d.FeatureNames}
}

// gpr collapses repeated inputs (gp.Collapse): the Cholesky fit runs on the 120 distinct inputs and says so, its
// final objective is the log marginal likelihood of all 300 rows per row (the Cholesky GP on the raw rows at the
// fitted parameters), and its model file, saved and loaded, predicts as the Cholesky GP on the raw rows does; the
// CG fit's subset start takes distinct inputs with their replicates.
func TestExactCollapsesRepeats(t *testing.T) {
	d := repeatedToy()
	run, err := zoo.TrainCustom(d, zoo.CustomConfig{Family: "gpr", TestFraction: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := run.Result.Exact
	if e == nil || e.Rows != 300 || e.Distinct != 120 || e.Solver != "cholesky" || !strings.Contains(e.Reason, "300 training rows at 120 distinct inputs, collapsed exactly") {
		t.Fatalf("exact stats %+v", e)
	}
	fitted, ok := run.File.Model.(*gp.GPR)
	if !ok || fitted.Replicates() == nil {
		t.Fatalf("model %T without replicates", run.File.Model)
	}
	std, err := datasets.FitStandardizer(d, true)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := std.Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := gp.NewGPR(gp.GPRConfig{Kernel: fitted.Kernel, NoiseVariance: fitted.NoiseVariance(), X: tr.X, Y: tr.Y})
	if err != nil {
		t.Fatal(err)
	}
	lml, err := raw.LogMarginalLikelihoodValue(tr.X, tr.Y, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Result.ELBOPerPoint; math.Abs(got-lml/300) > 1e-9*math.Abs(lml/300) || run.Result.ObjectiveKind != "final" {
		t.Errorf("objective per row %.12g (%s), the raw rows' %.12g", got, run.Result.ObjectiveKind, lml/300)
	}
	back := reloaded(t, run.File)
	xs := mat.NewDense(3, 2, []float64{3, 0.5, -7, -1, 15, 1.5})
	xs.SetRow(0, d.X.RawRowView(0))
	got, err := back.Predict(xs, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&modelfile.File{Model: raw, Standardizer: std}).Predict(xs, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(got.Mean, want.Mean, 1e-9) || !mat.EqualApprox(got.Var, want.Var, 1e-9) {
		t.Errorf("the loaded model predicts %v ± %v, the raw rows' GP %v ± %v", mat.Formatted(got.Mean.T()), mat.Formatted(got.Var.T()), mat.Formatted(want.Mean.T()), mat.Formatted(want.Var.T()))
	}

	run, err = zoo.TrainCustom(d, zoo.CustomConfig{Family: "gpr", TestFraction: -1, Exact: zoo.ExactOptions{Solver: "cg", Subset: 50, SubsetIters: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if e := run.Result.Exact; e.Rows != 300 || e.Distinct != 120 || e.SubsetRows != 50 || !strings.Contains(run.Result.Optimizer, "50 random distinct inputs with their replicates") {
		t.Errorf("cg: exact stats %+v, optimizer %q", e, run.Result.Optimizer)
	}
	if m, ok := run.File.Model.(*cg.GPR); !ok || m.Config().Replicates == nil {
		t.Errorf("cg model %T without replicates", run.File.Model)
	}
}

// reloaded returns f saved and loaded again.
func reloaded(t *testing.T, f *modelfile.File) *modelfile.File {
	t.Helper()
	var buf bytes.Buffer
	if err := modelfile.Save(&buf, f); err != nil {
		t.Fatal(err)
	}
	back, err := modelfile.Load(&buf, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return back
}
