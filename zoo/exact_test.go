package zoo_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

// gpr's solver is chosen by the training rows and the memory budget (auto), or as asked; a CG fit starts from its
// subset, trains by Adam with its defaults, reports its solves and predicts from its cache; the options are
// checked.
func TestExactSolverChoice(t *testing.T) {
	d := toyData(240, 0) // 216 training rows: a Cholesky fit takes about 14·8·216² bytes = 5.2 MB
	for _, c := range []struct {
		memory int64
		want   string
	}{{0, "cholesky"}, {1 << 20, "cg"}} {
		run, err := zoo.TrainCustom(d, zoo.CustomConfig{Family: "gpr", Exact: zoo.ExactOptions{Memory: c.memory, Subset: 80, SubsetIters: 20}})
		if err != nil {
			t.Fatal(err)
		}
		e := run.Result.Exact
		if e == nil || e.Solver != c.want || !strings.Contains(e.Reason, "216 rows") {
			t.Fatalf("memory %d: exact stats %+v, want solver %s", c.memory, e, c.want)
		}
		r := run.Result
		if c.want == "cholesky" {
			if !strings.HasPrefix(r.Optimizer, "lbfgs") || r.ObjectiveKind != "final" {
				t.Errorf("cholesky: optimizer %q, objective %q", r.Optimizer, r.ObjectiveKind)
			}
			continue
		}
		if r.Iters != zoo.DefaultCGIters || !strings.Contains(r.Optimizer, "adam(0.1)") || !strings.Contains(r.Optimizer, "lbfgs by Cholesky on 80 random rows") || r.ObjectiveKind != "estimate" {
			t.Errorf("cg: %d steps, optimizer %q, objective %q", r.Iters, r.Optimizer, r.ObjectiveKind)
		}
		if e.SubsetRows != 80 || e.SubsetIters == 0 || e.CGIters == 0 || e.CacheIters == 0 || e.LOVERank == 0 || !strings.Contains(e.Products, "kept") {
			t.Errorf("cg stats %+v", e)
		}
		if !strings.Contains(r.Summary(), "exact GP: cg (216 rows") {
			t.Errorf("summary does not say which solver ran and why:\n%s", r.Summary())
		}
		if r.TestRMSE == nil || !(*r.TestRMSE < 5) {
			t.Errorf("cg: test RMSE %v", r.TestRMSE)
		}
	}
	for _, bad := range []zoo.CustomConfig{
		{Family: "gpr", Exact: zoo.ExactOptions{Solver: "qr"}},
		{Family: "gpr", Optimizer: "lbfgs", Exact: zoo.ExactOptions{Solver: "cg"}},
		{Family: "gpr", Exact: zoo.ExactOptions{Probes: -1}},
		{Family: "svgp", Exact: zoo.ExactOptions{Solver: "cg"}},
		{Family: "gpr", MaxIters: 10, Exact: zoo.ExactOptions{Solver: "cholesky"}},
	} {
		if _, err := zoo.TrainCustom(d, bad); !errors.Is(err, zoo.ErrBadCustom) {
			t.Errorf("%+v: %v, want ErrBadCustom", bad, err)
		}
	}
}

// stopAtStep closes stop when Train's progress line reaches step k (not the subset start's L-BFGS lines).
type stopAtStep struct {
	k    int
	stop chan struct{}
}

func (s *stopAtStep) Write(p []byte) (int, error) {
	if l := string(p); strings.HasPrefix(l, fmt.Sprintf("\rstep %d/", s.k)) && !strings.Contains(l, "L-BFGS") {
		select {
		case <-s.stop:
		default:
			close(s.stop)
		}
	}
	return len(p), nil
}

// TestExactCGResume: a CG fit interrupted after its second Adam step, or while it builds its prediction cache
// after the last one, and resumed from its checkpoint saves the same model file, byte for byte, as an
// uninterrupted fit: the checkpoint carries the solver's warm start, and the resumed fit does not rerun the
// subset start, whose result the checkpoint's Params already hold.
func TestExactCGResume(t *testing.T) {
	d := toyData(240, 0)
	base := zoo.CustomConfig{Family: "gpr", Iters: 4, Exact: zoo.ExactOptions{Solver: "cg", Subset: 80, SubsetIters: 20}}
	save := func(c zoo.CustomConfig) ([]byte, *zoo.Result) { t.Helper(); return trainAndSave(t, d, c) }
	whole := base
	whole.CheckpointDir = t.TempDir()
	want, _ := save(whole)
	// Interrupted after step 2 of 4, and after the last step: during the prediction cache, whose solves end at
	// their next kernel product.
	for _, k := range []int{2, 4} {
		c := base
		c.CheckpointDir = t.TempDir()
		stop := make(chan struct{})
		c.Stop, c.Progress = stop, &stopAtStep{k: k, stop: stop}
		_, err := zoo.TrainCustom(d, c)
		if !errors.Is(err, train.ErrInterrupted) || k == 4 && !strings.Contains(err.Error(), "prediction cache") {
			t.Fatalf("interrupted at step %d: got %v", k, err)
		}
		c.Stop, c.Progress, c.Resume = nil, nil, true
		got, r := save(c)
		if !bytes.Equal(got, want) {
			t.Errorf("interrupted at step %d: the resumed model file differs from the uninterrupted fit's", k)
		}
		if r.Exact.SubsetRows != 0 {
			t.Errorf("interrupted at step %d: resumed, the subset start ran again (%d rows)", k, r.Exact.SubsetRows)
		}
	}
}

// A CG fit with ExactOptions.ExactVariance (gpzoo train --variances exact) builds no LOVE cache and says so; its
// model file keeps the choice, and loaded, predicts the variances the Cholesky GP at its fitted hyperparameters
// gives, within the prediction solves' tolerance. LOVERank sets the LOVE cache's Lanczos vectors.
func TestExactVariances(t *testing.T) {
	d := toyData(300, 0)
	run, err := zoo.TrainCustom(d, zoo.CustomConfig{Family: "gpr", Iters: 3, TestFraction: -1,
		Exact: zoo.ExactOptions{Solver: "cg", Subset: 80, SubsetIters: 20, ExactVariance: true}})
	if err != nil {
		t.Fatal(err)
	}
	e := run.Result.Exact
	if !e.ExactVariance || e.LOVERank != 0 || e.LOVEChecked != 0 || e.CacheDirect != "" ||
		!strings.Contains(run.Result.Summary(), "variances by CG solves at each prediction") {
		t.Fatalf("exact stats %+v\n%s", e, run.Result.Summary())
	}
	back := reloaded(t, run.File)
	m, ok := back.Model.(*cg.GPR)
	if !ok || !m.Config().ExactVariance {
		t.Fatalf("the loaded model %T does not keep exact variances", back.Model)
	}
	if e.NoiseVariance != m.NoiseVariance() || !(e.NoiseVariance > 0) {
		t.Errorf("the stats' noise variance %v, the model's %v", e.NoiseVariance, m.NoiseVariance())
	}
	x, y := m.TrainingData()
	chol, err := gp.NewGPR(gp.GPRConfig{Kernel: m.Kernel, NoiseVariance: m.NoiseVariance(), X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	xs := mat.NewDense(4, 2, []float64{3, 0.5, -7, -1, 15, 1.5, 40, 3})
	got, err := back.Predict(xs, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&modelfile.File{Model: chol, Standardizer: back.Standardizer}).Predict(xs, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if r := math.Abs(got.Var.At(i, 0)-want.Var.At(i, 0)) / want.Var.At(i, 0); !(r < 1e-6) {
			t.Errorf("row %d: variance %.10g, Cholesky's %.10g (relative %.2g)", i, got.Var.At(i, 0), want.Var.At(i, 0), r)
		}
	}

	// The same fit with the default LOVE cache and with 3 Lanczos vectors: the pivoted Cholesky's directions (as
	// many as its tolerance keeps, the same for both) and at most 100 (Lanczos ends early where the rest of K̂'s
	// spectrum is the noise's: 47 in all here) or 3 Lanczos vectors.
	var ranks []int
	for _, rank := range []int{0, 3} {
		run, err = zoo.TrainCustom(d, zoo.CustomConfig{Family: "gpr", Iters: 2, TestFraction: -1,
			Exact: zoo.ExactOptions{Solver: "cg", Subset: 80, SubsetIters: 20, LOVERank: rank}})
		if err != nil {
			t.Fatal(err)
		}
		if e := run.Result.Exact; e.ExactVariance || e.CacheDirect != "" || e.LOVEChecked == 0 {
			t.Fatalf("LOVERank %d: exact stats %+v, want a checked LOVE cache", rank, e)
		}
		ranks = append(ranks, run.Result.Exact.LOVERank)
	}
	t.Logf("LOVE ranks: %d (default), %d (3 Lanczos vectors)", ranks[0], ranks[1])
	if d := ranks[0] - ranks[1]; d <= 0 || d > zoo.DefaultLOVERank-3 {
		t.Errorf("LOVE ranks %d (default) and %d (3 Lanczos vectors): want the second smaller, by at most %d", ranks[0], ranks[1], zoo.DefaultLOVERank-3)
	}
}
