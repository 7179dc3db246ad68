package zoo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

var stableKeys = []string{"entry", "dataset", "model", "split", "seed", "n_train", "n_test", "iters", "train_seconds",
	"seconds_per_iter", "test_rmse", "test_ll", "test_accuracy", "elbo_per_point", "build", "blas", "gomaxprocs"}

func TestRegistry(t *testing.T) {
	t.Parallel()
	es := zoo.Entries()
	if len(es) == 0 {
		t.Fatal("no entries")
	}
	for _, e := range es {
		if e.Name != strings.ToLower(e.Name) || e.Name != e.Dataset+"/"+e.Model {
			t.Errorf("entry %q: name must be lower-case DATASET/MODEL (%s/%s)", e.Name, e.Dataset, e.Model)
		}
		if e.Summary == "" || e.Reference == "" || e.Iters <= 0 {
			t.Errorf("entry %q: missing summary, reference or iterations", e.Name)
		}
	}
	if _, err := zoo.Lookup(zoo.DefaultEntry); err != nil {
		t.Fatalf("default entry: %v", err)
	}
	if _, err := zoo.Lookup("nope/none"); !errors.Is(err, zoo.ErrUnknownEntry) {
		t.Errorf("unknown entry: %v", err)
	}
}

func TestMissingData(t *testing.T) {
	t.Parallel()
	e, err := zoo.Lookup("boston/gpr")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(zoo.Options{Iters: 1}); err == nil || !strings.Contains(err.Error(), "--data") {
		t.Errorf("boston without a data directory: %v (want advice to pass --data)", err)
	}
	if _, err := e.Run(zoo.Options{DataDir: "/nonexistent", Iters: 1}); err == nil || !strings.Contains(err.Error(), "/nonexistent") {
		t.Errorf("missing directory: %v (want the path in the message)", err)
	}
	data := datatest.Fake(t, "boston")
	if _, err := e.Run(zoo.Options{DataDir: data, Split: 999, Iters: 1}); err == nil {
		t.Error("split 999 accepted")
	}
	if _, err := e.Run(zoo.Options{DataDir: data, Split: -1, Iters: 1}); err == nil {
		t.Error("split −1 accepted")
	}
	if _, err := e.Run(zoo.Options{DataDir: data, Iters: 1, Optimizer: "sgd"}); err == nil {
		t.Error("unknown optimizer accepted")
	}
}

// A short run of an entry reading the data folder writes every stable key with sensible values (on generated data
// in Boston's format: 15 L-BFGS iterations beat a constant predictor by far).
func TestRunEntryJSON(t *testing.T) {
	t.Parallel()
	e, err := zoo.Lookup("boston/gpr")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(zoo.Options{DataDir: datatest.Fake(t, "boston"), Split: 0, Seed: 3, Iters: 15})
	if err != nil {
		t.Fatal(err)
	}
	if r.NTrain+r.NTest != datatest.Rows || r.TestRMSE == nil || r.TestAccuracy != nil {
		t.Fatalf("unexpected result %+v", r)
	}
	te, err := zoo.SplitForTest(e, zoo.Options{DataDir: datatest.Fake(t, "boston")})
	if err != nil {
		t.Fatal(err)
	}
	if sd := stat.PopStdDev(mat.Col(nil, 0, te.Y), nil); !(*r.TestRMSE < 0.5*sd) || math.IsNaN(r.TestLL) {
		t.Errorf("after 15 iterations: RMSE %v (targets' std %.3g), LL %v", *r.TestRMSE, sd, r.TestLL)
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
	if m["build"] != "purego" && m["build"] != "openblas" {
		t.Errorf("build = %v", m["build"])
	}
	if m["blas"] == "" || m["blas"] != ops.BLAS() || r.BLAS != ops.BLAS() {
		t.Errorf("blas = %v, want ops.BLAS() = %q", m["blas"], ops.BLAS())
	}
	if s := r.Summary(); !strings.Contains(s, "BLAS "+ops.BLAS()) {
		t.Errorf("summary does not name the BLAS kernel:\n%s", s)
	}
}

// boston/gpr on the real Boston data reaches the accuracy of an exact GP after 15 L-BFGS iterations (the published
// SGPR RMSE is 2.59, ANCHORS §1.3; the target's std is ≈ 9.2).
func TestRunBostonShort(t *testing.T) {
	t.Parallel()
	e, err := zoo.Lookup("boston/gpr")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(zoo.Options{DataDir: datatest.Dir(t, "boston"), Split: 0, Seed: 3, Iters: 15})
	if err != nil {
		t.Fatal(err)
	}
	if r.NTrain+r.NTest != 506 || r.TestRMSE == nil || r.TestAccuracy != nil {
		t.Fatalf("unexpected result %+v", r)
	}
	// Boston's target has std ≈ 9.2; the published SGPR RMSE is 2.59 (ANCHORS §1.3).
	if *r.TestRMSE > 4.5 || math.IsNaN(r.TestLL) || r.TestLL < -3.5 {
		t.Errorf("boston/gpr after 15 iterations: RMSE %v, LL %v", *r.TestRMSE, r.TestLL)
	}
}

// Short runs of the sparse entries: every kind of model and data loader works end to end and beats a constant
// predictor (regression) or chance (classification), on generated data in each entry's format; on the real data
// (data-backed, below) their accuracy is checked against published-scale thresholds. (Their full-length accuracy
// is measured by the CLI; see the closing notes.)
var sparseShort = []struct {
	entry           string
	iters, inducing int
	real            func(r *zoo.Result) bool // accuracy on the real data
}{
	{"yacht-bb/svgp-minibatch", 300, 20, func(r *zoo.Result) bool { return r.TestRMSE != nil && *r.TestRMSE < 12 }},
	{"yacht-bb/sgpr", 30, 20, func(r *zoo.Result) bool { return r.TestRMSE != nil && *r.TestRMSE < 5 }},
	{"banana/svgp-bernoulli", 200, 20, func(r *zoo.Result) bool { return r.TestAccuracy != nil && *r.TestAccuracy > 0.7 }},
	{"mnist/svgp-robustmax", 3, 10, func(r *zoo.Result) bool { return r.TestAccuracy != nil && *r.TestAccuracy > 0.1 }},
}

func TestSparseEntriesShort(t *testing.T) {
	t.Parallel()
	for _, c := range sparseShort {
		t.Run(strings.ReplaceAll(c.entry, "/", "_"), func(t *testing.T) {
			e, err := zoo.Lookup(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			o := zoo.Options{DataDir: datatest.Fake(t, zoo.DataSetOf(e.Dataset)), Iters: c.iters, Inducing: c.inducing, Seed: 1}
			r, err := e.Run(o)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(r.TestLL) || math.IsInf(r.TestLL, 0) || r.Iters < 1 || r.Iters > c.iters { // L-BFGS may stop early
				t.Fatalf("%s: unexpected result %+v", c.entry, r)
			}
			te, err := zoo.SplitForTest(e, o)
			if err != nil {
				t.Fatal(err)
			}
			if r.TestAccuracy == nil {
				if sd := stat.PopStdDev(mat.Col(nil, 0, te.Y), nil); r.TestRMSE == nil || !(*r.TestRMSE < 0.8*sd) {
					t.Errorf("%s: RMSE %v, a constant predictor's %.3g", c.entry, r.TestRMSE, sd)
				}
				return
			}
			if chance := 1 / float64(max(te.NumClasses, 2)); !(*r.TestAccuracy > chance+0.1) {
				t.Errorf("%s: accuracy %v, chance %.3g", c.entry, *r.TestAccuracy, chance)
			}
		})
	}
}

func TestSparseEntriesAccuracy(t *testing.T) {
	t.Parallel()
	for _, c := range sparseShort {
		t.Run(strings.ReplaceAll(c.entry, "/", "_"), func(t *testing.T) {
			e, err := zoo.Lookup(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			r, err := e.Run(zoo.Options{DataDir: datatest.Dir(t, zoo.DataSetOf(e.Dataset)), Iters: c.iters, Inducing: c.inducing, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(r.TestLL) || math.IsInf(r.TestLL, 0) || !c.real(r) || r.Iters < 1 || r.Iters > c.iters {
				t.Errorf("%s: unexpected result %+v", c.entry, r)
			}
		})
	}
}
