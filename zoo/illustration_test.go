package zoo_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/zoo"
)

// The entry ringnorm/odvgp-illustration with tiny budgets (|γ| = |β| = 20, 3 steps per method): the CSV has one
// row per method and iteration, Result.Curves summarises it consistently, and there are no test metrics.
func TestIllustrationEntryTiny(t *testing.T) {
	t.Parallel()
	const iters, bases = 3, 20
	e, err := zoo.Lookup(zoo.IllustrationEntry)
	if err != nil {
		t.Fatal(err)
	}
	if !e.WritesCurves || e.Published == "" {
		t.Fatalf("%s: WritesCurves %v, published %q", e.Name, e.WritesCurves, e.Published)
	}
	path := filepath.Join(t.TempDir(), "curves.csv")
	r, err := e.Run(zoo.Options{DataDir: datatest.Fake(t, "ringnorm"), Iters: iters, Inducing: bases, Seed: 1, CurvesOut: path})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(zoo.IllustrationMethods)*iters; len(rows) != want || strings.Join(rows[0], ",") != "method,iteration,elbo,seconds" {
		t.Fatalf("CSV has %d rows (want %d), header %v", len(rows), want, rows[0])
	}
	last := map[string]float64{}
	count := map[string]int{}
	for _, row := range rows[1:] {
		it, err := strconv.Atoi(row[1])
		if err != nil || it != count[row[0]] {
			t.Fatalf("row %v: iteration %d expected", row, count[row[0]])
		}
		if last[row[0]], err = strconv.ParseFloat(row[2], 64); err != nil || !finite(last[row[0]]) {
			t.Fatalf("row %v: bad ELBO", row)
		}
		count[row[0]]++
	}

	c := r.Curves
	if c == nil || c.File != path || c.Tol != zoo.IllustrationTol || len(c.Methods) != len(zoo.IllustrationMethods) {
		t.Fatalf("curves %+v", c)
	}
	best, reached := math.Inf(-1), 0
	for i, m := range c.Methods {
		if m.Method != zoo.IllustrationMethods[i] || count[m.Method] != iters {
			t.Errorf("method %d: %q with %d rows", i, m.Method, count[m.Method])
		}
		// The CSV keeps 10 significant digits.
		if !finite(m.FinalELBO) || math.Abs(m.FinalELBO-last[m.Method]) > 1e-9*math.Abs(m.FinalELBO) {
			t.Errorf("%s: final ELBO %v, last CSV row %v", m.Method, m.FinalELBO, last[m.Method])
		}
		if !finite(m.Seconds) || m.Seconds <= 0 {
			t.Errorf("%s: seconds %v", m.Method, m.Seconds)
		}
		if (m.ItersToTol == nil) != (m.SecondsToTol == nil) {
			t.Errorf("%s: iters_to_tol %v but seconds_to_tol %v", m.Method, m.ItersToTol, m.SecondsToTol)
		}
		if m.ItersToTol != nil {
			reached++
			if *m.ItersToTol < 0 || *m.ItersToTol >= iters || !finite(*m.SecondsToTol) || *m.SecondsToTol < 0 || *m.SecondsToTol > m.Seconds {
				t.Errorf("%s: iters_to_tol %d, seconds_to_tol %v", m.Method, *m.ItersToTol, *m.SecondsToTol)
			}
		}
		best = math.Max(best, m.FinalELBO)
	}
	if c.BestELBO != best || reached == 0 {
		t.Errorf("best ELBO %v (want %v); %d methods within tolerance (the best one at least)", c.BestELBO, best, reached)
	}
	if r.NTest != 0 || r.TestRMSE != nil || r.TestAccuracy != nil || r.NTrain != datatest.Rows*9/10 || r.Iters != iters ||
		!finite(r.ELBOPerPoint) || r.ELBOPerPoint != best/float64(r.NTrain) || !(r.TrainSeconds > 0) {
		t.Errorf("result %+v", r)
	}
	if s := r.Summary(); !strings.Contains(s, "no test metrics") || !strings.Contains(s, "ORTHNAT") || !strings.Contains(s, path) {
		t.Errorf("summary:\n%s", s)
	}

	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(stableKeys, "curves") {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks key %q", k)
		}
	}
	if m["test_ll"] != nil || m["test_rmse"] != nil || m["test_accuracy"] != nil {
		t.Errorf("test metrics in the JSON: %s", buf.Bytes())
	}
	var back zoo.Result
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Curves == nil || len(back.Curves.Methods) != len(c.Methods) {
		t.Errorf("JSON does not decode back: %v", err)
	}
}

// Options that do not apply to the illustration are refused before any training, and CurvesOut by the other
// entries.
func TestIllustrationEntryRefuses(t *testing.T) {
	t.Parallel()
	e, err := zoo.Lookup(zoo.IllustrationEntry)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.csv")
	data := datatest.Fake(t, "ringnorm", "boston")
	for _, o := range []zoo.Options{
		{Optimizer: "lbfgs"},
		{BatchSize: 100},
		{NatGrad: true},
	} {
		o.DataDir, o.Iters, o.Inducing, o.CurvesOut = data, 1, 5, path
		if _, err := e.Run(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("refused runs created %s", path)
	}
	g, err := zoo.Lookup("boston/gpr")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(zoo.Options{DataDir: data, Iters: 1, CurvesOut: path}); err == nil || g.WritesCurves {
		t.Errorf("boston/gpr accepted CurvesOut")
	}
}

// test_ll is a number when there is a test set and null when n_test is 0; curves is absent unless set.
func TestResultJSONTestLL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    zoo.Result
		want any
	}{
		{zoo.Result{NTest: 5, TestLL: -1.5}, -1.5},
		{zoo.Result{NTest: 0, TestLL: 0}, nil},
	} {
		var buf bytes.Buffer
		if err := c.r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if v, ok := m["test_ll"]; !ok || v != c.want {
			t.Errorf("n_test %d: test_ll %v (present %v), want %v", c.r.NTest, v, ok, c.want)
		}
		if _, ok := m["curves"]; ok {
			t.Errorf("curves present without curves: %s", buf.Bytes())
		}
	}
}
