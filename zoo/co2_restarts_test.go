package zoo

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// The CO₂ entries keep, of their restarts from co2NoiseInits, the run with the highest training objective: the
// entry's result is that run's (the same test LL bits), whether or not it saves the model, and its training time
// is the restarts' sum (TestBestOfRestarts: timings are not compared here, they vary run to run).
func TestCO2NoiseRestarts(t *testing.T) {
	e, err := Lookup("co2/se")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Seed: 1, Iters: 20}
	var best *Result
	for _, noise := range co2NoiseInits {
		c := *e.Config
		c.NoiseVariance = noise
		r := *e
		r.Config = &c
		res, err := runConfigured(&r, o)
		if err != nil {
			t.Fatal(err)
		}
		if best == nil || res.ELBOPerPoint > best.ELBOPerPoint {
			best = res
		}
	}
	got, err := e.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if got.ELBOPerPoint != best.ELBOPerPoint || got.TestLL != best.TestLL || *got.TestRMSE != *best.TestRMSE {
		t.Errorf("entry: objective %v, test LL %v, RMSE %v; the best restart's %v, %v, %v", got.ELBOPerPoint, got.TestLL, *got.TestRMSE, best.ELBOPerPoint, best.TestLL, *best.TestRMSE)
	}
	o.SaveModel = filepath.Join(t.TempDir(), "co2.gpz")
	saved, err := e.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if saved.ModelFile != o.SaveModel || saved.TestLL != best.TestLL || saved.ELBOPerPoint != best.ELBOPerPoint {
		t.Errorf("saving: model file %q, test LL %v, objective %v; want %q, %v, %v", saved.ModelFile, saved.TestLL, saved.ELBOPerPoint, o.SaveModel, best.TestLL, best.ELBOPerPoint)
	}
}

// bestOfRestarts keeps the restart of the highest objective (the first of equals), reports the restarts' summed
// training time, reruns only the chosen restart to save, and names the failing restart's initial noise.
func TestBestOfRestarts(t *testing.T) {
	var calls []string
	objective := map[float64]float64{0.1: -2, 0.01: 3, 0.001: 3}
	run := func(noise float64, o Options) (*Result, error) {
		calls = append(calls, fmt.Sprintf("%g:%q", noise, o.SaveModel))
		if noise < 0 {
			return nil, errors.New("bad")
		}
		return &Result{ELBOPerPoint: objective[noise], TrainSeconds: 10 * noise, ModelFile: o.SaveModel}, nil
	}
	got, err := bestOfRestarts([]float64{0.1, 0.01, 0.001}, Options{}, run)
	if err != nil {
		t.Fatal(err)
	}
	if got.ELBOPerPoint != 3 || math.Abs(got.TrainSeconds-1.11) > 1e-12 || strings.Join(calls, " ") != `0.1:"" 0.01:"" 0.001:""` {
		t.Errorf("objective %v, time %v, calls %v; want 3, 1.11 and three unsaved runs", got.ELBOPerPoint, got.TrainSeconds, calls)
	}
	calls = nil
	got, err = bestOfRestarts([]float64{0.1, 0.01, 0.001}, Options{SaveModel: "m.gpz"}, run)
	if err != nil {
		t.Fatal(err)
	}
	if got.ModelFile != "m.gpz" || math.Abs(got.TrainSeconds-1.11) > 1e-12 || strings.Join(calls, " ") != `0.1:"" 0.01:"" 0.001:"" 0.01:"m.gpz"` {
		t.Errorf("saving: file %q, time %v, calls %v; want the chosen restart (0.01) rerun once, saving", got.ModelFile, got.TrainSeconds, calls)
	}
	if _, err := bestOfRestarts([]float64{0.1, -1}, Options{}, run); err == nil || !strings.Contains(err.Error(), "initial noise variance -1") {
		t.Errorf("a failing restart: error %v, want one naming its initial noise", err)
	}
}
