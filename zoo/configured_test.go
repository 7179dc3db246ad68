package zoo

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

// TestEntryIsTrainCustom: the gpr and sgpr entries are configurations run by the code of gpzoo train. The entry
// on split 0 of its embedded data set (airfoil, Boston) gives the Result that TrainCustom gives with the entry's configuration on the
// same training rows (no held-out share) and the entry's random stream (trainCustom: TrainCustom's front end with
// the stream given), scored on the same test rows through its model file, bit for bit.
func TestEntryIsTrainCustom(t *testing.T) {
	for _, c := range []struct {
		entry string
		tol   float64
	}{{"airfoil/gpr", 0}, {"boston-bb/sgpr", 0}} {
		t.Run(c.entry, func(t *testing.T) {
			e, err := Lookup(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			if e.Config == nil || e.Config.Family != e.Model {
				t.Fatalf("%s: configuration %+v, want family %s", c.entry, e.Config, e.Model)
			}
			spl, err := loadSplit(e.Dataset, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Split: 0, Seed: 3, Iters: 8}
			r, err := e.Run(o)
			if err != nil {
				t.Fatal(err)
			}
			cfg := *e.Config
			cfg.Seed, cfg.Iters, cfg.TestFraction = o.Seed, o.Iters, -1
			cu, err := trainCustom(spl.train, cfg, entrySource(o))
			if err != nil {
				t.Fatal(err)
			}
			want := cu.Result
			cfg, _ = cfg.withDefaults(spl.train)
			fam, _ := gp.LookupLikelihood(cfg.Likelihood)
			if err := scoreCustom(want, cu.File, spl.test, cfg, fam); err != nil {
				t.Fatal(err)
			}
			if r.Optimizer != want.Optimizer || r.ObjectiveKind != want.ObjectiveKind || r.ObjectiveKind != "final" ||
				r.Kernel != want.Kernel || r.Iters != want.Iters || r.NTrain != want.NTrain {
				t.Errorf("entry: %s %s %s %d iters %d rows; TrainCustom: %s %s %s %d iters %d rows", r.Optimizer, r.ObjectiveKind,
					r.Kernel, r.Iters, r.NTrain, want.Optimizer, want.ObjectiveKind, want.Kernel, want.Iters, want.NTrain)
			}
			for _, v := range []struct {
				name      string
				got, want float64
			}{{"elbo_per_point", r.ELBOPerPoint, want.ELBOPerPoint}, {"test_rmse", *r.TestRMSE, *want.TestRMSE},
				{"test_ll", r.TestLL, want.TestLL}} {
				if d := math.Abs(v.got - v.want); d > c.tol*math.Abs(v.want) || math.IsNaN(d) {
					t.Errorf("%s: entry %.17g, TrainCustom %.17g (tolerance %g relative)", v.name, v.got, v.want, c.tol)
				}
			}
		})
	}
}
