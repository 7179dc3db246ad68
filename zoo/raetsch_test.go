package zoo

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/train"
)

// TestRaetschSplits: every Rätsch set loads with its usual training size (banana 400, german 700, image 1300,
// titanic 150, splice 1000, thyroid 140; the data's README), the rest as test rows, two classes, and split k is
// the same rows every time and other rows than split k+1.
func TestRaetschSplits(t *testing.T) {
	t.Parallel()
	want := map[string]int{"banana": 400, "german": 700, "image": 1300, "titanic": 150, "splice": 1000, "thyroid": 140}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	dir := datatest.Dir(t, names...)
	for name, n := range want {
		s0, err := loadSplit(name, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s0.train.N() != n || s0.test.N() < 1 || s0.train.NumClasses != 2 {
			t.Errorf("%s: %d training rows (want %d), %d test rows, %d classes", name, s0.train.N(), n, s0.test.N(), s0.train.NumClasses)
		}
		again, _ := loadSplit(name, dir, 0)
		s1, _ := loadSplit(name, dir, 1)
		if again.train.X.RawRowView(0)[0] != s0.train.X.RawRowView(0)[0] || s1.train.X.RawRowView(0)[0] == s0.train.X.RawRowView(0)[0] &&
			s1.train.X.RawRowView(1)[0] == s0.train.X.RawRowView(1)[0] {
			t.Errorf("%s: split 0 is not reproducible or equals split 1", name)
		}
	}
}

// TestRaetschEntries: every Rätsch set has its gpr-laplace, gpr-ep and svgp-bernoulli entries, configurations of
// gpzoo train (the exact GP's approximations with the probit likelihood); the gpr ones run on banana's seeded
// stand-in (a short L-BFGS), learn, and save models of the approximated GP.
func TestRaetschEntries(t *testing.T) {
	t.Parallel()
	for _, s := range raetschSets {
		for _, m := range []string{"gpr-laplace", "gpr-ep", "svgp-bernoulli"} {
			e, err := Lookup(s.name + "/" + m)
			if err != nil {
				t.Fatal(err)
			}
			if e.Config == nil || e.Config.Likelihood != "bernoulli" || strings.HasPrefix(m, "gpr") != (e.Config.Inference != "") {
				t.Errorf("%s: configuration %+v", e.Name, e.Config)
			}
		}
	}
	data := datatest.Fake(t, "banana")
	for _, inf := range []string{"laplace", "ep"} {
		e, _ := Lookup("banana/gpr-" + inf)
		r, err := e.Run(Options{DataDir: data, Iters: 8, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if r.TestAccuracy == nil || *r.TestAccuracy < 0.7 || math.IsNaN(r.TestLL) || r.NTrain != 400 || !strings.Contains(r.Optimizer, "starts") {
			t.Errorf("%s: accuracy %v, test LL %v, %d training rows, %q", e.Name, r.TestAccuracy, r.TestLL, r.NTrain, r.Optimizer)
		}
	}
	// The model an entry trains is the approximated GP.
	c := *mustLookup(t, "banana/gpr-ep").Config
	c.Seed, c.Iters, c.Restarts = 1, 5, 1
	spl, err := loadSplit("banana", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	cu, err := TrainCustom(spl.train, c)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := cu.File.Model.(*approx.GP); !ok || m.Inference != approx.EP {
		t.Errorf("the entry's model is a %T", cu.File.Model)
	}
}

func mustLookup(t *testing.T, name string) *Entry {
	t.Helper()
	e, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestLBFGSFitsStop: a closed Options.Stop (SIGINT in gpzoo run and gpzoo train) ends the L-BFGS fits, the
// approximations' restarts and the exact GP's alike, with an error wrapping train.ErrInterrupted instead of
// training to the end; the approximations try no further start.
func TestLBFGSFitsStop(t *testing.T) {
	t.Parallel()
	data := datatest.Fake(t, "banana")
	stop := make(chan struct{})
	close(stop)
	for _, name := range []string{"banana/gpr-laplace", "banana/gpr-ep"} {
		e := mustLookup(t, name)
		if _, err := e.Run(Options{DataDir: data, Seed: 2, Stop: stop}); !errors.Is(err, train.ErrInterrupted) {
			t.Errorf("%s: err %v, want train.ErrInterrupted", name, err)
		}
	}
	spl, err := loadSplit("banana", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TrainCustom(spl.train, CustomConfig{Family: "gpr", Iters: 100, Stop: stop}); !errors.Is(err, train.ErrInterrupted) {
		t.Errorf("gpr: err %v, want train.ErrInterrupted", err)
	}
}
