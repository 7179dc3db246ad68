package vbks

import (
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"gonum.org/v1/gonum/mat"
)

// TestResultPredictor checks the Bayesian model average as a gp.Predictor: the conformance suite (with the
// mixture's full covariance and draws), one component per pruned kernel with its weight and label holding that
// kernel's own prediction bit for bit, and the moments of eq. 15 (Mixture) of those components.
func TestResultPredictor(t *testing.T) {
	x, y := scaled(t, TruthPerLinRQ, 60)
	ks := parseAll(t, "PER*LIN*RQ", "SE", "LIN+RQ")
	r, err := Run(x, y, smallConfig(2, ks))
	if err != nil {
		t.Fatal(err)
	}
	xt := mat.DenseCopyOf(x.Slice(0, 12, 0, 1))
	p := gptest.CheckPredictor(t, r, xt, gp.PredictOptions{Full: true, Draws: 3, OutputCov: true})
	if len(p.Components) != len(r.Top) {
		t.Fatalf("%d components, want the %d pruned kernels", len(p.Components), len(r.Top))
	}
	for j, i := range r.Top {
		c, cd := p.Components[j], r.Candidates[i]
		if c.Weight != r.Pruned.Probs[j] || c.Label != cd.Expr.String() {
			t.Errorf("component %d: weight %v, label %q; want %v, %q", j, c.Weight, c.Label, r.Pruned.Probs[j], cd.Expr.String())
		}
		own, err := cd.Model.Predict(xt, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(c.FMean, own.FMean) || !mat.Equal(c.FVar, own.FVar) || !mat.Equal(c.YMean, own.YMean) || !mat.Equal(c.YVar, own.YVar) {
			t.Errorf("component %d differs from %s's own prediction", j, c.Label)
		}
	}
	m := Mixture(p.Components)
	if !mat.Equal(m.FMean, p.FMean) || !mat.Equal(m.FVar, p.FVar) || !mat.Equal(m.YMean, p.YMean) || !mat.Equal(m.YVar, p.YVar) {
		t.Error("the BMA's moments are not Mixture's of its components")
	}
	if r.InputDim() != 1 || r.OutputDim() != 1 {
		t.Errorf("InputDim %d, OutputDim %d; want 1, 1", r.InputDim(), r.OutputDim())
	}
	if _, err := (&Result{}).Predict(xt, gp.PredictOptions{}); err == nil {
		t.Error("Predict before a Run: no error")
	}
}
