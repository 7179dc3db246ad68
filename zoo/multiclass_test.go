package zoo

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
)

// TestIrisEntries: iris has its gpr-laplace (ML-II), gpr-laplace-map (a prior on the kernel variance) and
// svgp-softmax entries; the exact GP ones train the multi-class Laplace classifier (approx.Multiclass) on the
// seeded stand-in data's 80/20 split, the MAP one with its prior recorded, and classify far better than chance.
func TestIrisEntries(t *testing.T) {
	t.Parallel()
	data := datatest.Fake(t, "iris")
	for _, name := range []string{"iris/gpr-laplace", "iris/gpr-laplace-map", "iris/svgp-softmax"} {
		e := mustLookup(t, name)
		if e.Config == nil || e.Config.Likelihood != "softmax" || (name == "iris/gpr-laplace-map") != (len(e.Config.Priors) == 1) {
			t.Fatalf("%s: configuration %+v", name, e.Config)
		}
	}
	for _, name := range []string{"iris/gpr-laplace", "iris/gpr-laplace-map"} {
		e := mustLookup(t, name)
		r, err := e.Run(Options{DataDir: data, Iters: 4, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if r.TestAccuracy == nil || *r.TestAccuracy < 0.5 || math.IsNaN(r.TestLL) || r.NTest*5 != r.NTrain+r.NTest ||
			(name == "iris/gpr-laplace-map") != (len(r.Priors) == 1) {
			t.Errorf("%s: accuracy %v, test LL %v, %d/%d rows, priors %v", name, r.TestAccuracy, r.TestLL, r.NTrain, r.NTest, r.Priors)
		}
	}
	c := *mustLookup(t, "iris/gpr-laplace").Config
	c.Seed, c.Iters, c.Restarts = 1, 3, 1
	spl, err := loadSplit("iris", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	cu, err := TrainCustom(spl.train, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cu.File.Model.(*approx.Multiclass); !ok {
		t.Errorf("the entry's model is a %T", cu.File.Model)
	}
}
