package zoo_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

// toyData returns n points of a 2-D regression (classes > 0: labels 0..classes−1 by the angle of x).
func toyData(n, classes int) *datasets.Dataset {
	rng := rand.New(rand.NewPCG(9, 9))
	x, y := mat.NewDense(n, 2, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		a, b := 4*rng.Float64()-2, 4*rng.Float64()-2
		x.Set(i, 0, 10*a+3)
		x.Set(i, 1, b)
		if classes > 0 {
			y.Set(i, 0, float64(int((math.Atan2(b, a)+math.Pi)/(2*math.Pi)*float64(classes))%classes))
		} else {
			y.Set(i, 0, 100+20*(math.Sin(a)+0.3*b)+0.5*rng.NormFloat64())
		}
	}
	return &datasets.Dataset{Name: "toy", X: x, Y: y, NumClasses: classes, FeatureNames: []string{"a", "b"}}
}

// TestTrainCustomEveryFamily trains every family briefly, checks the metrics are those of a useful model, and
// that the returned model file, saved and loaded, predicts bit for bit what the trained model predicts.
func TestTrainCustomEveryFamily(t *testing.T) {
	reg, bin, multi := toyData(240, 0), toyData(240, 2), toyData(240, 3)
	cases := []struct {
		d   *datasets.Dataset
		cfg zoo.CustomConfig
	}{
		{reg, zoo.CustomConfig{Family: "gpr", Iters: 30}},
		{reg, zoo.CustomConfig{Family: "gpr", Iters: 5, Exact: zoo.ExactOptions{Solver: "cg", Subset: 100, SubsetIters: 30}}},
		{reg, zoo.CustomConfig{Family: "sgpr", Inducing: 20, Iters: 30}},
		{reg, zoo.CustomConfig{Family: "svgp", Inducing: 20, Iters: 300, LR: 0.05}},
		{reg, zoo.CustomConfig{Family: "svgp", Likelihood: "studentt", Inducing: 20, Iters: 300, LR: 0.05}},
		{reg, zoo.CustomConfig{Family: "decoupled", Inducing: 10, MeanBases: 30, Iters: 300, LR: 0.05}},
		{reg, zoo.CustomConfig{Family: "hybrid", Inducing: 10, MeanBases: 20, Iters: 300, LR: 0.05}},
		{reg, zoo.CustomConfig{Family: "orth", Inducing: 10, MeanBases: 20, Iters: 300, LR: 0.05}},
		{reg, zoo.CustomConfig{Family: "orthnat", Inducing: 10, MeanBases: 20, Iters: 300, LR: 0.05}},
		{reg, zoo.CustomConfig{Family: "dgp", Inducing: 15, Hidden: []int{2}, Iters: 300, LR: 0.05, TestSamples: 5}},
		{reg, zoo.CustomConfig{Family: "dgp", LayerFamily: "decoupled", Inducing: 10, MeanBases: 20, Hidden: []int{2}, Iters: 200, LR: 0.05, TestSamples: 5}},
		{bin, zoo.CustomConfig{Family: "svgp", Inducing: 20, Iters: 200, LR: 0.05, NatGrad: true}},
		{multi, zoo.CustomConfig{Family: "orth", Inducing: 15, MeanBases: 15, Iters: 200, LR: 0.05}},
		{multi, zoo.CustomConfig{Family: "svgp", Likelihood: "softmax", Inducing: 15, Iters: 200, LR: 0.05}},
		{multi, zoo.CustomConfig{Family: "gpr", Likelihood: "softmax", Iters: 15, Restarts: 1}}, // the multi-class Laplace approximation
	}
	for _, c := range cases {
		name := c.cfg.Family + "/" + c.cfg.Likelihood + c.cfg.LayerFamily
		t.Run(name, func(t *testing.T) {
			needWhite(t, c.cfg.Family)
			run, err := zoo.TrainCustom(c.d, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := run.Result
			if r.NTest != 24 || r.NTrain != 216 {
				t.Fatalf("split %d/%d, want 216/24", r.NTrain, r.NTest)
			}
			if r.Build != ops.Build || r.BLAS == "" || r.BLAS != ops.BLAS() {
				t.Errorf("build %q, BLAS %q; want %q, %q", r.Build, r.BLAS, ops.Build, ops.BLAS())
			}
			if c.d.NumClasses == 0 {
				// The target's std is ≈ 15; a useful model is far better than predicting the mean.
				if r.TestRMSE == nil || !(*r.TestRMSE < 5) || !(r.TestLL > -4) {
					t.Fatalf("test RMSE %v, LL %v", r.TestRMSE, r.TestLL)
				}
			} else if r.TestAccuracy == nil || !(*r.TestAccuracy > 0.6) || math.IsNaN(r.TestLL) {
				t.Fatalf("accuracy %v, LL %v", r.TestAccuracy, r.TestLL)
			}
			back := reloaded(t, run.File)
			o := modelfile.PredictOptions{Samples: 5, Seed: 1}
			p1, err := run.File.Predict(c.d.X, o)
			if err != nil {
				t.Fatal(err)
			}
			p2, err := back.Predict(c.d.X, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]*mat.Dense{{p1.Mean, p2.Mean}, {p1.Var, p2.Var}, {p1.Probs, p2.Probs}} {
				if (pair[0] == nil) != (pair[1] == nil) || pair[0] != nil && !mat.Equal(pair[0], pair[1]) {
					t.Fatal("the loaded model predicts differently")
				}
			}
		})
	}
}

func TestTrainCustomRefuses(t *testing.T) {
	reg, bin := toyData(50, 0), toyData(50, 2)
	for _, c := range []struct {
		d   *datasets.Dataset
		cfg zoo.CustomConfig
	}{
		{reg, zoo.CustomConfig{Family: "nosuch"}},
		{reg, zoo.CustomConfig{Likelihood: "bernoulli"}},
		{bin, zoo.CustomConfig{Likelihood: "gaussian"}},
		{toyData(50, 3), zoo.CustomConfig{Likelihood: "bernoulli"}},
		{bin, zoo.CustomConfig{Family: "sgpr"}}, // gpr approximates a non-Gaussian likelihood (TestTrainCustomApprox); sgpr cannot
		{reg, zoo.CustomConfig{Family: "gpr", Inference: "ep"}},
		{bin, zoo.CustomConfig{Family: "svgp", Inference: "laplace"}},
		{bin, zoo.CustomConfig{Family: "gpr", Inference: "nosuch"}},
		{toyData(50, 3), zoo.CustomConfig{Family: "gpr", Likelihood: "softmax", Inference: "ep"}}, // multi-class: Laplace only
		{toyData(2300, 3), zoo.CustomConfig{Family: "gpr", Likelihood: "softmax"}},                // 3 × 2070 > ops.MaxSoftmaxLaplaceSize
		{reg, zoo.CustomConfig{Family: "dgp", LayerFamily: "nosuch"}},
		{reg, zoo.CustomConfig{Family: "decoupled", NatGrad: true}},
		{reg, zoo.CustomConfig{TestFraction: 1}},
		{reg, zoo.CustomConfig{Resume: true}},
		{reg, zoo.CustomConfig{Family: "sgpr", CheckpointDir: "ck"}},
	} {
		if _, err := zoo.TrainCustom(c.d, c.cfg); !errors.Is(err, zoo.ErrBadCustom) {
			t.Errorf("%+v: got %v, want ErrBadCustom", c.cfg, err)
		}
	}
}

// trainAndSave trains c on d and returns the model file's bytes and the run's result.
func trainAndSave(t *testing.T, d *datasets.Dataset, c zoo.CustomConfig) ([]byte, *zoo.Result) {
	t.Helper()
	run, err := zoo.TrainCustom(d, c)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := modelfile.Save(&buf, run.File); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), run.Result
}

// TestTrainCustomResume: a deep GP trained on a user's data set, interrupted and resumed from its checkpoint,
// saves the same model file byte for byte as an uninterrupted run.
func TestTrainCustomResume(t *testing.T) {
	needWhite(t, "dgp")
	d := toyData(200, 0)
	base := zoo.CustomConfig{Family: "dgp", Inducing: 8, Hidden: []int{2}, Iters: 12, BatchSize: 50, TestSamples: 3}
	save := func(c zoo.CustomConfig) []byte {
		t.Helper()
		b, _ := trainAndSave(t, d, c)
		return b
	}
	whole := base
	whole.CheckpointDir = t.TempDir()
	want := save(whole)
	c := base
	c.CheckpointDir = t.TempDir()
	stop := make(chan struct{})
	c.Stop, c.Progress = stop, &stopAfter{k: 5, stop: stop}
	if _, err := zoo.TrainCustom(d, c); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("interrupted: got %v", err)
	}
	c.Stop, c.Progress, c.Resume = nil, nil, true
	if got := save(c); !bytes.Equal(got, want) {
		t.Fatal("the resumed model file differs from the uninterrupted run's")
	}
}

// countData returns n points of a 2-D count regression: y ~ Poisson(exp(2 + sin(a) + 0.3b)).
func countData(n int) *datasets.Dataset {
	d := toyData(n, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < n; i++ {
		a, b := (d.X.At(i, 0)-3)/10, d.X.At(i, 1)
		limit, p, k := math.Exp(-math.Exp(2+math.Sin(a)+0.3*b)), 1.0, 0.0
		for p *= rng.Float64(); p >= limit; p *= rng.Float64() {
			k++
		}
		d.Y.Set(i, 0, k)
	}
	return d
}

// TestTrainCustomPoisson: counts train with the Poisson likelihood in their own units (the model file's
// standardizer keeps the target as it is) and predict counts; values that are not counts are refused, naming the
// row and the column.
func TestTrainCustomPoisson(t *testing.T) {
	d := countData(240)
	run, err := zoo.TrainCustom(d, zoo.CustomConfig{Likelihood: "poisson", Inducing: 20, Iters: 300, LR: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if s := run.File.Standardizer; s.YMean[0] != 0 || s.YStd[0] != 1 {
		t.Fatalf("target standardised: mean %v, deviation %v", s.YMean, s.YStd)
	}
	p, err := run.File.Predict(d.X, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mu, y := mat.Sum(p.Mean)/240, mat.Sum(d.Y)/240; !(math.Abs(mu/y-1) < 0.15) {
		t.Errorf("mean prediction %v, mean count %v", mu, y)
	}
	if r := run.Result; r.TestRMSE == nil || r.TestLLKind == "" {
		t.Errorf("RMSE %v, LL kind %q", r.TestRMSE, r.TestLLKind)
	}
	for _, c := range []struct {
		row  int
		v    float64
		want []string
	}{{7, -1, []string{"data row 8", "target column 1", "-1", "count"}}, {3, 2.5, []string{"data row 4", "2.5"}}} {
		bad := countData(30)
		bad.Y.Set(c.row, 0, c.v)
		_, err := zoo.TrainCustom(bad, zoo.CustomConfig{Likelihood: "poisson", Iters: 2})
		if !errors.Is(err, zoo.ErrBadCustom) {
			t.Fatalf("count %v: got %v, want ErrBadCustom", c.v, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("count %v: %v does not mention %q", c.v, err, w)
			}
		}
	}
	bad := countData(30)
	bad.Y.Set(5, 0, math.NaN())
	var nf *datasets.NonFiniteError
	if _, err := zoo.TrainCustom(bad, zoo.CustomConfig{Likelihood: "poisson", Target: "y", Iters: 2}); !errors.As(err, &nf) || nf.Row != 5 || nf.Col != 2 {
		t.Errorf("NaN count: got %v, want a NonFiniteError at row 5 (0-based), column 2", err)
	}
	bad.Y.Set(5, 0, -3)
	if _, err := zoo.TrainCustom(bad, zoo.CustomConfig{Likelihood: "poisson", Target: "y", Iters: 2}); err == nil || !strings.Contains(err.Error(), `column "y"`) {
		t.Errorf("named target: %v", err)
	}
}

// TestLikelihoodNames: zoo accepts exactly the registered likelihood families.
func TestLikelihoodNames(t *testing.T) {
	names := zoo.LikelihoodNames()
	if len(names) != len(gp.LikelihoodFamilies()) || !slices.Contains(names, "poisson") || !slices.IsSorted(names) {
		t.Errorf("LikelihoodNames %v", names)
	}
	_, err := zoo.TrainCustom(toyData(20, 0), zoo.CustomConfig{Likelihood: "nosuch"})
	if !errors.Is(err, zoo.ErrBadCustom) || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("unknown likelihood: %v", err)
	}
}

// A full-batch fit (gpr, sgpr) reports its final objective: the log marginal likelihood (collapsed bound) per
// point equals, to 1e-9, minus the loss of the saved model evaluated afresh on its training data after a round
// trip through a model file; a minibatch fit says that it reports the smoothed estimate.
func TestFullBatchObjectiveIsFinal(t *testing.T) {
	d := toyData(240, 0)
	for _, c := range []zoo.CustomConfig{{Family: "gpr", Iters: 30}, {Family: "sgpr", Inducing: 20, Iters: 30}} {
		t.Run(c.Family, func(t *testing.T) {
			run, err := zoo.TrainCustom(d, c)
			if err != nil {
				t.Fatal(err)
			}
			if run.Result.ObjectiveKind != "final" {
				t.Fatalf("objective kind %q, want final", run.Result.ObjectiveKind)
			}
			path := filepath.Join(t.TempDir(), "m.gpz")
			if err := modelfile.SaveFile(path, run.File); err != nil {
				t.Fatal(err)
			}
			f, err := modelfile.LoadFile(path, gp.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			x, y := f.Model.(gp.DataHolder).TrainingData()
			loss, err := train.Objective(f.Model.(gp.Model), x, y)
			if err != nil {
				t.Fatal(err)
			}
			want := -loss / float64(run.Result.NTrain)
			if got := run.Result.ELBOPerPoint; !(math.Abs(got-want) <= 1e-9*math.Abs(want)) {
				t.Fatalf("reported objective/N %v, the saved model's afresh %v", got, want)
			}
			if !strings.Contains(run.Result.Summary(), "(final)") {
				t.Errorf("summary does not say the objective is final:\n%s", run.Result.Summary())
			}
		})
	}
	run, err := zoo.TrainCustom(d, zoo.CustomConfig{Family: "svgp", Inducing: 10, Iters: 5, BatchSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	if run.Result.ObjectiveKind != "smoothed" {
		t.Errorf("minibatch objective kind %q, want smoothed", run.Result.ObjectiveKind)
	}
}
