package zoo

import (
	"path/filepath"
	"testing"
)

// The CO₂ entries keep, of their restarts from co2NoiseInits, the run with the highest training objective: the
// entry's result is that run's (the same test LL bits), whether or not it saves the model, and its training time
// is the restarts' sum.
func TestCO2NoiseRestarts(t *testing.T) {
	e, err := Lookup("co2/se")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Seed: 1, Iters: 20}
	var best *Result
	total := 0.0
	for _, noise := range co2NoiseInits {
		c := *e.Config
		c.NoiseVariance = noise
		r := *e
		r.Config = &c
		res, err := runConfigured(&r, o)
		if err != nil {
			t.Fatal(err)
		}
		total += res.TrainSeconds
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
	if !(got.TrainSeconds > best.TrainSeconds) || !(got.TrainSeconds > 0.5*total) {
		t.Errorf("entry training time %v s, the best restart's %v s, the restarts' sum here %v s: want the sum", got.TrainSeconds, best.TrainSeconds, total)
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
