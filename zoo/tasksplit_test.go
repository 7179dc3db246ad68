package zoo

import (
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
)

// TestTrainSplitTaskColumn: a benchmark split (gpzoo train --dataset) keeps a kernel's task column as category
// indices, as TrainCustom does for a user's file: the coregion kernel over it trains (it refused the
// standardised column before), the model file's standardizer passes the column unchanged, and the other input is
// standardised. Without a categorical kernel registered there is nothing to keep.
func TestTrainSplitTaskColumn(t *testing.T) {
	fam := ""
	for _, f := range gp.KernelFamilies() {
		if k, err := f.New(gp.KernelOptions{InputDim: 1}); err == nil && len(gp.CategoricalInputs(k)) > 0 {
			fam = f.Name
		}
	}
	if fam == "" {
		return // no categorical kernel registered (its file deleted)
	}
	const n = 120
	d := TaskDataForTest(n, 3)
	d.Name = "tasks-split"
	var train, test []int
	for i := range n {
		if i%5 == 4 {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	sources[d.Name] = source{format: "embedded", protocol: "every fifth row tests", load: func(int) (*datasets.Dataset, []int, []int, error) {
		return d, train, test, nil
	}}
	defer delete(sources, d.Name)
	run, err := TrainSplit(d.Name, "", 0, CustomConfig{Family: "svgp", Kernel: "se[0]*" + fam + "[1]", Iters: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := run.File.Standardizer
	if s.XMean[1] != 0 || s.XStd[1] != 1 || s.XMean[0] == 0 || s.XStd[0] == 1 {
		t.Errorf("standardizer means %v, deviations %v: want the task column (1) left as is and x standardised", s.XMean, s.XStd)
	}
	if run.Result.NTest != len(test) || run.Result.TestRMSE == nil || !(*run.Result.TestRMSE < 0.5) {
		t.Errorf("%d test rows, test RMSE %v: want %d rows and below 0.5 (targets' sd about 1.2)", run.Result.NTest, run.Result.TestRMSE, len(test))
	}
}
