package zoo

import (
	"cmp"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
)

// TestEntryIsTrainCustom: the gpr, sgpr and deep-GP entries are configurations run by the code of gpzoo train.
// The entry on split 0 of its data set (airfoil, Boston embedded; kin8nm fake) gives the Result that TrainCustom
// gives with the entry's configuration on the same training rows (no held-out share) and the entry's random
// stream (trainCustom: TrainCustom's front end with the stream given), scored on the same test rows (through
// its model file; a deep GP by its mixture), bit for bit.
func TestEntryIsTrainCustom(t *testing.T) {
	for _, c := range []struct {
		entry string
		o     Options
	}{{"airfoil/gpr", Options{}}, {"boston-bb/sgpr", Options{}},
		{"kin8nm-havasi/dgp-coupled-1", Options{Inducing: 8, BatchSize: 64}}, {"kin8nm-havasi/dgp-decoupled-1", Options{Inducing: 6, BatchSize: 64}}} {
		t.Run(c.entry, func(t *testing.T) {
			if strings.Contains(c.entry, "dgp") {
				gptest.NeedKernel(t, "white", "the deep GP's inner layers add a white kernel (dgp.InnerKernel)")
			}
			e, err := Lookup(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			if e.Config == nil || (e.Config.Family != e.Model && e.Config.Family != "dgp") {
				t.Fatalf("%s: configuration %+v, want family %s", c.entry, e.Config, e.Model)
			}
			o := c.o
			o.Seed, o.Iters = 3, 8
			if e.Model != "gpr" && e.Model != "sgpr" {
				o.DataDir = datatest.Fake(t, DataSetOf(e.Dataset))
			}
			spl, err := loadSplit(e.Dataset, o.DataDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			r, err := e.Run(o)
			if err != nil {
				t.Fatal(err)
			}
			cfg := *e.Config
			cfg.Seed, cfg.Iters, cfg.TestFraction = o.Seed, o.Iters, -1
			cfg.Inducing, cfg.BatchSize = cmp.Or(o.Inducing, cfg.Inducing), cmp.Or(o.BatchSize, cfg.BatchSize)
			if o.Inducing > 0 && cfg.LayerFamily == "decoupled" {
				cfg.MeanBases = 5 * o.Inducing
			}
			cu, err := trainCustom(spl.train, cfg, entrySource(e, o))
			if err != nil {
				t.Fatal(err)
			}
			want := cu.Result
			cfg, _ = cfg.withDefaults(spl.train)
			fam, _ := gp.LookupLikelihood(cfg.Likelihood)
			if e.Model == "gpr" || e.Model == "sgpr" {
				if err := scoreCustom(want, cu.File, spl.test, cfg, fam); err != nil {
					t.Fatal(err)
				}
			} else { // a deep GP is scored by its mixture's LL, as fit does
				std := cu.File.Standardizer
				te, err := std.Apply(spl.test)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := scoreDGP(want, cu.File.Model.(*dgp.DGP), cfg.TestSamples, te, std, rand.New(rand.NewPCG(o.Seed, 0x7e57))); err != nil {
					t.Fatal(err)
				}
			}
			kind := "final"
			if e.Model != "gpr" && e.Model != "sgpr" {
				kind = "smoothed"
			}
			if r.Optimizer != want.Optimizer || r.ObjectiveKind != want.ObjectiveKind || r.ObjectiveKind != kind ||
				r.Kernel != want.Kernel || r.Iters != want.Iters || r.NTrain != want.NTrain {
				t.Errorf("entry: %s %s %s %d iters %d rows; TrainCustom: %s %s %s %d iters %d rows", r.Optimizer, r.ObjectiveKind,
					r.Kernel, r.Iters, r.NTrain, want.Optimizer, want.ObjectiveKind, want.Kernel, want.Iters, want.NTrain)
			}
			for _, v := range []struct {
				name      string
				got, want float64
			}{{"elbo_per_point", r.ELBOPerPoint, want.ELBOPerPoint}, {"test_rmse", *r.TestRMSE, *want.TestRMSE},
				{"test_ll", r.TestLL, want.TestLL}} {
				if v.got != v.want {
					t.Errorf("%s: entry %.17g, TrainCustom %.17g", v.name, v.got, v.want)
				}
			}
		})
	}
}
