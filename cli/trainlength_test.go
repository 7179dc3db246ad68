package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
)

// trainJSON runs gpzoo train with args plus --quiet, --save and --out into a temporary folder and returns the
// printed summary and the JSON result.
func trainJSON(t *testing.T, args ...string) (string, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	var out, errb bytes.Buffer
	args = append([]string{"train"}, args...)
	if err := Main(append(args, "--quiet", "--save", filepath.Join(dir, "m.gpz"), "--out", js), &out, &errb); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errb.String())
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return out.String(), r
}

// TestTrainItersExact: --iters N alone runs exactly N Adam steps, says so, and reports no cap.
func TestTrainItersExact(t *testing.T) {
	data := writeCSV(t, t.TempDir(), 120)
	for _, model := range []string{"svgp", "dgp"} {
		sum, r := trainJSON(t, "--csv", data, "--target", "y", "--features", "x1,x2", "--model", model, "--inducing", "8", "--iters", "37")
		if r["iters"] != 37.0 || r["stop_reason"] != "iterations" || r["max_iters"] != nil {
			t.Errorf("%s --iters 37: iters %v, stop_reason %v, max_iters %v; want 37, iterations, none", model, r["iters"], r["stop_reason"], r["max_iters"])
		}
		if !strings.Contains(sum, "stopped: after the fixed 37 steps") {
			t.Errorf("%s --iters 37: the summary does not say it ran the fixed 37 steps:\n%s", model, sum)
		}
	}
	// L-BFGS families report why they stopped, within their --iters.
	sum, r := trainJSON(t, "--csv", data, "--target", "y", "--features", "x1,x2", "--model", "sgpr", "--inducing", "8", "--iters", "3")
	if r["iters"].(float64) > 3 || r["max_iters"] != 3.0 || !strings.Contains(sum, "L-BFGS iterations") {
		t.Errorf("sgpr --iters 3: iters %v, max_iters %v, summary:\n%s", r["iters"], r["max_iters"], sum)
	}
}

var stopLine = regexp.MustCompile(`stopped: converged after (\d+) steps \(cap (\d+)\)`)

// TestTrainConvergesByDefault: without --iters the Adam families stop when the criterion is met (here a small,
// quickly learnt set stops well before the cap) or at the cap; --max-iters sets the cap. The summary line and the
// JSON agree.
func TestTrainConvergesByDefault(t *testing.T) {
	data := writeCSV(t, t.TempDir(), 150)
	cc := train.DefaultConverge
	sum, r := trainJSON(t, "--csv", data, "--target", "y", "--features", "x1,x2", "--inducing", "10")
	m := stopLine.FindStringSubmatch(sum)
	if m == nil {
		t.Fatalf("no \"stopped: converged after N steps (cap M)\" line:\n%s", sum)
	}
	steps, _ := strconv.Atoi(m[1])
	if m[2] != strconv.Itoa(zoo.DefaultMaxIters) || r["max_iters"] != float64(zoo.DefaultMaxIters) {
		t.Errorf("cap %s in the summary, %v in the JSON; want the default %d", m[2], r["max_iters"], zoo.DefaultMaxIters)
	}
	if r["stop_reason"] != "converged" || r["iters"] != float64(steps) {
		t.Errorf("JSON: stop_reason %v, iters %v; the summary says converged after %d", r["stop_reason"], r["iters"], steps)
	}
	if steps < cc.MinSteps || steps%cc.Window != 0 || steps >= zoo.DefaultMaxIters {
		t.Errorf("converged after %d steps: want a window end (%d) at or past MinSteps %d, below the cap", steps, cc.Window, cc.MinSteps)
	}
	// A cap below the criterion's stop: exactly the cap, and the summary says it was reached.
	capAt := steps - cc.Window
	sum, r = trainJSON(t, "--csv", data, "--target", "y", "--features", "x1,x2", "--inducing", "10", "--max-iters", strconv.Itoa(capAt))
	if r["iters"] != float64(capAt) || r["stop_reason"] != "iteration cap" || r["max_iters"] != float64(capAt) {
		t.Errorf("--max-iters %d: iters %v, stop_reason %v, max_iters %v", capAt, r["iters"], r["stop_reason"], r["max_iters"])
	}
	if want := fmt.Sprintf("stopped: iteration cap reached after %d steps (not converged)", capAt); !strings.Contains(sum, want) {
		t.Errorf("--max-iters %d: summary lacks %q:\n%s", capAt, want, sum)
	}
	// A cap above it: the same stop (the criterion depends only on the losses).
	_, r = trainJSON(t, "--csv", data, "--target", "y", "--features", "x1,x2", "--inducing", "10", "--max-iters", strconv.Itoa(steps+1))
	if r["iters"] != float64(steps) || r["stop_reason"] != "converged" {
		t.Errorf("--max-iters %d: iters %v, stop_reason %v; want %d, converged", steps+1, r["iters"], r["stop_reason"], steps)
	}
}

// TestTrainLengthFlags: the flags of the training length and of the data source refuse what they cannot honour.
func TestTrainLengthFlags(t *testing.T) {
	data := writeCSV(t, t.TempDir(), 50)
	base := []string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--quiet", "--save", filepath.Join(t.TempDir(), "m.gpz")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--iters", "5", "--max-iters", "10"}, "exclude each other"},
		{[]string{"--max-iters", "0"}, "--max-iters 0"},
		{[]string{"--max-iters", "100", "--model", "sgpr"}, "does not apply to --model sgpr"},
		{[]string{"--max-train-rows", "1"}, "--max-train-rows 1"},
		{[]string{"--dataset", "yacht"}, "--csv and --dataset exclude each other"},
		{[]string{"--split", "2"}, "use them with --dataset"},
	} {
		var out, errb bytes.Buffer
		err := Main(append(append([]string{}, base...), tc.args...), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	var out, errb bytes.Buffer
	if err := Main([]string{"train", "--dataset", "yacht", "--target", "y", "--quiet"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "--target does not apply") {
		t.Errorf("--dataset with --target: %v", err)
	}
	if err := Main([]string{"train", "--quiet"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "--dataset") {
		t.Errorf("no data source: %v", err)
	}
	out.Reset()
	if err := Main([]string{"train", "--help"}, &out, &errb); err != nil || !strings.Contains(out.String(), "--max-iters N") ||
		!strings.Contains(out.String(), fmt.Sprintf("with N = %d", zoo.DefaultMaxIters)) {
		t.Errorf("usage lacks --max-iters or the default cap (%v):\n%s", err, out.String())
	}
}

// TestTrainDataset trains on a split of a benchmark set (a generated stand-in in the benchmark layout): the
// split's rows are used, --max-train-rows subsamples the training rows by the seed (same rows, same result), and
// the result names the split.
func TestTrainDataset(t *testing.T) {
	dir := datatest.Fake(t, "yacht")
	run := func(extra ...string) map[string]any {
		_, r := trainJSON(t, append([]string{"--dataset", "yacht", "--data", dir, "--split", "2", "--inducing", "8", "--iters", "15"}, extra...)...)
		return r
	}
	full := run()
	if full["split"] != 2.0 || full["dataset"] != "yacht" || full["n_train"].(float64)+full["n_test"].(float64) != datatest.Rows {
		t.Fatalf("split 2: split %v, dataset %v, n_train %v + n_test %v (want %d rows)", full["split"], full["dataset"], full["n_train"], full["n_test"], datatest.Rows)
	}
	a, b, c := run("--max-train-rows", "100"), run("--max-train-rows", "100"), run("--max-train-rows", "100", "--seed", "2")
	if a["n_train"] != 100.0 || a["n_test"] != full["n_test"] {
		t.Errorf("--max-train-rows 100: n_train %v, n_test %v (want 100, %v)", a["n_train"], a["n_test"], full["n_test"])
	}
	if a["test_ll"] != b["test_ll"] || a["test_ll"] == full["test_ll"] || a["test_ll"] == c["test_ll"] {
		t.Errorf("test LL: subsample %v and again %v (want equal), all rows %v, seed 2 %v (want different)", a["test_ll"], b["test_ll"], full["test_ll"], c["test_ll"])
	}
}

// TestSynth: the generator writes the same bytes for the same flags, other bytes for another seed, a table
// gpzoo train reads, and never replaces a file.
func TestSynth(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, seed int) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		var out, errb bytes.Buffer
		if err := Main([]string{"synth", "--rows", "700", "--inputs", "8", "--seed", strconv.Itoa(seed), "--out", path}, &out, &errb); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := gen("a.csv", 1), gen("b.csv", 1), gen("c.csv", 2)
	if !bytes.Equal(a, b) {
		t.Error("the same seed wrote different bytes")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 wrote the same bytes")
	}
	lines := strings.Split(strings.TrimSuffix(string(a), "\n"), "\n")
	if len(lines) != 701 || lines[0] != "x0,x1,x2,x3,x4,x5,x6,x7,y" || len(strings.Split(lines[700], ",")) != 9 {
		t.Fatalf("%d lines, header %q", len(lines), lines[0])
	}
	// An existing file is refused and left as it was.
	path := filepath.Join(dir, "a.csv")
	var out, errb bytes.Buffer
	err := Main([]string{"synth", "--rows", "5", "--inputs", "2", "--out", path}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("overwriting %s: err %v", path, err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, a) {
		t.Error("the refused run changed the file")
	}
	for _, args := range [][]string{{"--rows", "0", "--inputs", "2", "--out", filepath.Join(dir, "z.csv")}, {"--rows", "5", "--inputs", "2"}} {
		if err := Main(append([]string{"synth"}, args...), &out, &errb); err == nil {
			t.Errorf("synth %v accepted", args)
		}
	}
	// gpzoo train reads it and learns something (the target is far from noise).
	sum, r := trainJSON(t, "--csv", filepath.Join(dir, "c.csv"), "--target", "y", "--inducing", "20", "--iters", "300", "--lr", "0.05")
	if rmse, ok := r["test_rmse"].(float64); !ok || rmse > 0.6 {
		t.Errorf("train on the synthetic CSV: test RMSE %v:\n%s", r["test_rmse"], sum)
	}
}
