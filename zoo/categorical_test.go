package zoo_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

// categoricalFamily returns a registered kernel family whose kernel at D = 1 reads its column as category indices
// (coregion), found through the registry, or "" if none is registered.
func categoricalFamily() string {
	for _, f := range gp.KernelFamilies() {
		if k, err := f.New(gp.KernelOptions{InputDim: 1}); err == nil && len(gp.CategoricalInputs(k)) > 0 {
			return f.Name
		}
	}
	return ""
}

// taskData is zoo.TaskDataForTest.
func taskData(n, tasks int) *datasets.Dataset { return zoo.TaskDataForTest(n, tasks) }

// TestTrainCustomTaskColumn: with a kernel on a task column (se[0] * coregion[1]), TrainCustom leaves the task
// column unstandardised (mean 0, deviation 1 in the model file's standardizer, so that predictions pass the
// indices unchanged), counts the tasks in it, trains and predicts; a task column holding non-indices is refused
// with ErrBadCustom and the kernel's *gp.CategoryError. A kernel without such a column standardises every column.
func TestTrainCustomTaskColumn(t *testing.T) {
	d := taskData(90, 3)
	fam := categoricalFamily()
	if fam == "" { // no categorical kernel registered: every column is standardised
		run, err := zoo.TrainCustom(d, zoo.CustomConfig{Family: "gpr", Iters: 5, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if s := run.File.Standardizer; s.XStd[1] == 1 || s.XMean[1] == 0 {
			t.Errorf("task column standardised as %v, %v", s.XMean[1], s.XStd[1])
		}
		return
	}
	c := zoo.CustomConfig{Family: "gpr", Kernel: "se[0]*" + fam + "[1]", Iters: 60, Seed: 1}
	run, err := zoo.TrainCustom(d, c)
	if err != nil {
		t.Fatal(err)
	}
	s := run.File.Standardizer
	if s.XMean[1] != 0 || s.XStd[1] != 1 || s.XMean[0] == 0 || s.XStd[0] == 1 {
		t.Errorf("standardizer means %v, deviations %v: want the task column (1) left as is and x standardised", s.XMean, s.XStd)
	}
	if !strings.Contains(run.Result.Kernel, "[1]") || run.Result.TestRMSE == nil || !(*run.Result.TestRMSE < 0.5) {
		t.Errorf("kernel %q, test RMSE %v", run.Result.Kernel, run.Result.TestRMSE)
	}
	var buf bytes.Buffer // the model file predicts the same bits after a save and a load, task column included
	if err := modelfile.Save(&buf, run.File); err != nil {
		t.Fatal(err)
	}
	back, err := modelfile.Load(&buf, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := run.File.Predict(d.X, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := back.Predict(d.X, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(p1.Mean, p2.Mean) || !mat.Equal(p1.Var, p2.Var) {
		t.Error("the loaded model predicts differently")
	}
	tasks := 0
	for _, p := range run.File.Model.Params() {
		if strings.HasSuffix(p.Name(), ".kappa") {
			tasks = p.Size()
		}
	}
	if tasks != 3 {
		t.Errorf("%d tasks counted, want 3", tasks)
	}
	dc := c
	dc.Family = "dgp"
	if _, err := zoo.TrainCustom(d, dc); !errors.Is(err, zoo.ErrBadCustom) || !strings.Contains(err.Error(), "deep GP") {
		t.Errorf("dgp with a task column: %v (want refused)", err)
	}
	for _, row := range []int{0, 7, 33, 89} { // whether the row is drawn for training or for the test
		bad := taskData(90, 3)
		bad.X.Set(row, 1, 0.5)
		var ce *gp.CategoryError
		if _, err := zoo.TrainCustom(bad, c); !errors.Is(err, zoo.ErrBadCustom) || !errors.As(err, &ce) || ce.Column != 1 || ce.Row != row {
			t.Errorf("task 0.5 in row %d: %v (want ErrBadCustom with a *gp.CategoryError in row %d, column 1)", row, err, row)
		}
	}
}

// TestTrainCustomTaskInducing: the inducing inputs of sgpr and svgp hold task indices in the task column (a
// single k-means centre of two tasks' rows averages their indices to 0.5, which the kernel would refuse).
func TestTrainCustomTaskInducing(t *testing.T) {
	fam := categoricalFamily()
	if fam == "" {
		t.Log("no categorical kernel registered: nothing to snap")
		return
	}
	for _, family := range []string{"sgpr", "svgp"} {
		run, err := zoo.TrainCustom(taskData(60, 2), zoo.CustomConfig{Family: family, Kernel: "se[0]*" + fam + "[1]", Inducing: 1, Iters: 3, Seed: 2})
		if err != nil {
			t.Fatalf("%s: %v", family, err)
		}
		found := false
		for _, p := range run.File.Model.Params() {
			if strings.HasSuffix(p.Name(), ".Z") {
				found = true
				if v := p.Value()[1]; v != 0 && v != 1 {
					t.Errorf("%s: inducing task %v", family, v)
				}
			}
		}
		if !found {
			t.Errorf("%s: no inducing inputs among %v", family, run.File.Model.Params())
		}
	}
}
