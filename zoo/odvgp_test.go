package zoo_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/zoo"
)

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Every decoupled-basis entry the issue names is registered, documented and cites its source.
func TestODVGPRegistry(t *testing.T) {
	t.Parallel()
	var names []string
	for _, d := range []string{"kin40k", "pol", "pumadyn32nm", "bike", "keggdirected", "protein",
		"ringnorm", "twonorm", "magic", "letter", "pendigits", "landsat"} {
		for _, m := range []string{"coupled-300", "coupled-400", "decoupled", "hybrid", "orth", "orthnat"} {
			names = append(names, d+"/"+m)
		}
	}
	names = append(names, "kin40k/decoupled-cb2017", "protein/decoupled-cb2017")
	for _, n := range names {
		e, err := zoo.Lookup(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if e.Reference == "" || e.Published == "" || e.Summary == "" {
			t.Errorf("%s: missing reference, published numbers or summary", n)
		}
	}
}

// Short end-to-end runs of one entry per family (tiny bases through Options.Inducing: |β| = Inducing,
// |γ| = |α| = 2·Inducing), two classification entries (binary Bernoulli; multiclass robust-max on the given
// train/test files) and the Cheng & Boots setting: finite metrics and every stable JSON key.
func TestODVGPEntriesShort(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry    string
		classify bool
		opt      string // expected fragment of Result.Optimizer
	}{
		{"pol/coupled-300", false, "|β|=8"},
		{"pol/decoupled", false, "|α|=16, |β|=8"},
		{"pol/hybrid", false, "|γ|=16, |β|=8"},
		{"pol/orth", false, "|γ|=16, |β|=8"},
		{"pol/orthnat", false, "natgrad(γ=0.1)"},
		{"kin40k/decoupled-cb2017", false, "mean-basis batch 16"},
		{"twonorm/orthnat", true, "natgrad(γ 1e-4→0.1)"},
		{"landsat/orth", true, "|γ|=16, |β|=8"},
	} {
		t.Run(strings.ReplaceAll(c.entry, "/", "_"), func(t *testing.T) {
			e, err := zoo.Lookup(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			r, err := e.Run(zoo.Options{DataDir: datatest.Fake(t, zoo.DataSetOf(e.Dataset)), Iters: 3, Inducing: 8, BatchSize: 128, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			if r.Iters != 3 || !finite(r.TestLL) || !finite(r.ELBOPerPoint) || !strings.Contains(r.Optimizer, c.opt) {
				t.Errorf("unexpected result %+v", r)
			}
			if c.classify {
				if r.TestAccuracy == nil || r.TestRMSE != nil || !(*r.TestAccuracy > 0) {
					t.Errorf("classification metrics %+v", r)
				}
			} else if r.TestRMSE == nil || r.TestAccuracy != nil || !finite(*r.TestRMSE) {
				t.Errorf("regression metrics %+v", r)
			}
			var buf bytes.Buffer
			if err := r.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range stableKeys {
				if _, ok := m[k]; !ok {
					t.Errorf("JSON lacks key %q", k)
				}
			}
		})
	}
}

func TestODVGPOptionsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry string
		o     zoo.Options
	}{
		{"pol/orth", zoo.Options{Iters: 1, Inducing: 4, NatGrad: true}},
		{"pol/decoupled", zoo.Options{Iters: 1, Inducing: 4, Optimizer: "lbfgs"}},
		{"pendigits/orth", zoo.Options{Iters: 1, Inducing: 4, Split: 1}},
	} {
		e, err := zoo.Lookup(c.entry)
		if err != nil {
			t.Fatal(err)
		}
		c.o.DataDir = datatest.Fake(t, zoo.DataSetOf(e.Dataset)) // the data is there: the refusal is the options'
		if _, err := e.Run(c.o); err == nil {
			t.Errorf("%s with %+v: no error", c.entry, c.o)
		}
	}
}

// The illustration with tiny sizes: all six methods, one row per iteration, finite ELBOs, and the natural-gradient
// methods ahead of their Adam counterparts after a few steps (the ramp is one step long here).
func TestIllustrateTiny(t *testing.T) {
	t.Parallel()
	const iters = 6
	var buf bytes.Buffer
	data := datatest.Fake(t, "ringnorm", "pol")
	if err := zoo.Illustrate(zoo.IllustrationOptions{DataDir: data, Iters: iters, Bases: 10, Seed: 3, Out: &buf}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "method,iteration,elbo,seconds" {
		t.Fatalf("header %v", rows)
	}
	its := map[string][]int{}
	last := map[string]float64{}
	for _, r := range rows[1:] {
		it, err1 := strconv.Atoi(r[1])
		elbo, err2 := strconv.ParseFloat(r[2], 64)
		sec, err3 := strconv.ParseFloat(r[3], 64)
		if err1 != nil || err2 != nil || err3 != nil || !finite(elbo) || elbo > 0 || sec < 0 {
			t.Fatalf("bad row %v", r)
		}
		its[r[0]] = append(its[r[0]], it)
		last[r[0]] = elbo
	}
	for _, m := range zoo.IllustrationMethods {
		if len(its[m]) != iters {
			t.Errorf("%s: %d rows, want %d", m, len(its[m]), iters)
			continue
		}
		for i, it := range its[m] {
			if it != i {
				t.Errorf("%s: row %d has iteration %d", m, i, it)
			}
		}
	}
	if len(its) != len(zoo.IllustrationMethods) {
		t.Errorf("methods %v", its)
	}
	if !(last["ORTHNAT"] > last["ORTH"]) || !(last["COUPLEDNAT"] > last["COUPLED"]) {
		t.Errorf("natural gradients not ahead after %d steps: %v", iters, last)
	}
	if err := zoo.Illustrate(zoo.IllustrationOptions{DataDir: data, Iters: 1, Bases: 5, Methods: []string{"sgd"}, Out: &buf}); err == nil {
		t.Error("unknown method accepted")
	}
	if err := zoo.Illustrate(zoo.IllustrationOptions{DataDir: data, Dataset: "pol", Iters: 1, Bases: 5, Out: &buf}); err == nil {
		t.Error("regression data set accepted")
	}
}
