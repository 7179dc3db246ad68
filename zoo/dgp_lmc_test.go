package zoo

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"gonum.org/v1/gonum/mat"
)

// A deep GP's last layer may be an LMC (CustomConfig.LMC with family dgp): two latent GPs mixed into the
// coregional set's three outputs; it trains, scores every output, and its model file predicts what it did.
func TestDGPLastLayerLMC(t *testing.T) {
	d, err := coregionalData()
	if err != nil {
		t.Fatal(err)
	}
	run, err := TrainCustom(d, CustomConfig{Family: "dgp", LMC: 2, Inducing: 15, Hidden: []int{2}, Iters: 150, LR: 0.05, TestSamples: 5})
	if err != nil {
		t.Fatal(err)
	}
	r := run.Result
	if !strings.Contains(r.Optimizer, "last layer an LMC of 2 latent GPs into 3 outputs") || r.Outputs != 3 || math.IsNaN(r.TestLL) || math.IsInf(r.TestLL, 0) {
		t.Fatalf("optimizer %q, %d outputs, test LL %v", r.Optimizer, r.Outputs, r.TestLL)
	}
	if r.TestRMSE == nil || !(*r.TestRMSE > 0) || math.IsInf(*r.TestRMSE, 0) {
		t.Errorf("test RMSE %v", r.TestRMSE)
	}
	var b bytes.Buffer
	if err := modelfile.Save(&b, run.File); err != nil {
		t.Fatal(err)
	}
	back, err := modelfile.Load(&b, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	desc, err := back.Model.Spec()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(desc)
	if err != nil || !strings.Contains(string(spec), layers.KindLMC) {
		t.Fatalf("the model file's spec has no %s layer: %v", layers.KindLMC, err)
	}
	x := mat.DenseCopyOf(d.X.Slice(0, 10, 0, 2))
	a, err := run.File.Predict(x, modelfile.PredictOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	c, err := back.Predict(x, modelfile.PredictOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a.Mean, c.Mean) || !mat.Equal(a.Var, c.Var) {
		t.Error("the loaded model file predicts otherwise")
	}
}
