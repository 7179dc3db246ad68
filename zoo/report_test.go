package zoo_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/zoo"
)

func ptr(v float64) *float64 { return &v }

// writeResult saves v (a *zoo.Result or *zoo.MultiResult) as JSON in dir/name and returns the path.
func writeResult(t *testing.T, dir, name string, v interface{ SaveJSON(string) error }) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := v.SaveJSON(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two entries' results, one of them pooled from a multi-split file and a single-split file, give a table with
// one row per entry, each with its splits, mean ± sample std, published numbers and reference.
func TestReportTwoEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := func(split int, rmse, ll, secs float64) *zoo.Result {
		return &zoo.Result{Entry: "boston-bb/sgpr", Dataset: "boston-bb", Model: "sgpr", Split: split, Seed: 1, NTrain: 455, NTest: 51,
			TestRMSE: ptr(rmse), TestLL: ll, TrainSeconds: secs}
	}
	multi, err := zoo.NewMultiResult([]*zoo.Result{reg(0, 2, -2, 1), reg(1, 3, -3, 3)})
	if err != nil {
		t.Fatal(err)
	}
	f1 := writeResult(t, dir, "boston01.json", multi)
	f2 := writeResult(t, dir, "boston2.json", reg(2, 4, -4, 5))
	cls := &zoo.Result{Entry: "banana/svgp-bernoulli", Dataset: "banana", Model: "svgp-bernoulli", Split: 0, Seed: 1, NTrain: 400, NTest: 4900,
		TestAccuracy: ptr(0.9), TestLL: -0.25, TrainSeconds: 12, Published: "stale text from an older build"}
	f3 := writeResult(t, dir, "banana.json", cls)

	var rep zoo.Report
	for _, f := range []string{f1, f2, f3} {
		if err := rep.AddFile(f); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "| entry | data set | splits (n) |") || !strings.HasPrefix(lines[1], "|---") {
		t.Fatalf("want a header, a rule and two rows:\n%s", b.String())
	}
	boston, _ := zoo.Lookup("boston-bb/sgpr")
	banana, _ := zoo.Lookup("banana/svgp-bernoulli")
	cells := func(line string) []string {
		fs := strings.Split(strings.Trim(line, "| "), " | ")
		if len(fs) != 9 {
			t.Fatalf("row with %d cells: %s", len(fs), line)
		}
		return fs
	}
	// Rows sorted by entry: banana, then boston-bb. Boston: RMSE 2, 3, 4 → mean 3, sample std 1; LL −2, −3, −4;
	// seconds 1, 3, 5 → 3.
	bn, bo := cells(lines[2]), cells(lines[3])
	wantBanana := []string{"banana/svgp-bernoulli", "banana", "0 (1)", "—", "-0.25 ± —", "0.9 ± —", "12.0"}
	wantBoston := []string{"boston-bb/sgpr", "boston-bb", "0-2 (3)", "3 ± 1", "-3 ± 1", "—", "3.0"}
	for i := range wantBanana {
		if bn[i] != wantBanana[i] || bo[i] != wantBoston[i] {
			t.Errorf("column %d: banana %q boston %q, want %q and %q", i, bn[i], bo[i], wantBanana[i], wantBoston[i])
		}
	}
	if bn[7] != strings.ReplaceAll(banana.Published, "|", `\|`) || bo[7] != boston.Published || bn[8] != banana.Reference || bo[8] != boston.Reference {
		t.Errorf("published/reference cells: %q %q / %q %q", bn[7], bn[8], bo[7], bo[8])
	}

	// The same split from two files is an error naming both.
	dup := writeResult(t, dir, "dup.json", reg(1, 9, -9, 1))
	if err := rep.AddFile(dup); !errors.Is(err, zoo.ErrBadSplits) || !strings.Contains(err.Error(), dup) || !strings.Contains(err.Error(), f1) {
		t.Errorf("duplicate split: %v", err)
	}
}

// Missing, empty, truncated, corrupt and foreign files give errors naming the file.
func TestLoadResultsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := `{"entry": "boston/sgpr", "split": 0, "n_test": 3, "test_rmse": 2.5, "test_ll": -2}`
	for _, c := range []struct {
		name, content, want string
	}{
		{"empty.json", "  \n", "truncated"},
		{"truncated.json", full[:40], "truncated"},
		{"corrupt.json", `{"entry": boston}`, "corrupt"},
		{"trailing.json", full + " x", "corrupt"},
		{"array.json", `[1, 2]`, "corrupt"},
		{"foreign.json", `{"name": "something else"}`, "entry"},
		{"badtype.json", `{"entry": "boston/sgpr", "split": "zero"}`, "corrupt"},
		{"badmulti.json", `{"entry": "boston/sgpr", "results": [{"entry": "yacht-bb/sgpr"}]}`, "corrupt"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := zoo.LoadResults(path)
		if !errors.Is(err, zoo.ErrBadResultFile) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (want ErrBadResultFile, the path and %q)", c.name, err, c.want)
		}
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := zoo.LoadResults(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
	// Unknown keys (a later release's) are ignored.
	path := filepath.Join(dir, "future.json")
	if err := os.WriteFile(path, []byte(`{"entry": "boston/sgpr", "split": 2, "n_test": 3, "test_rmse": 2.5, "test_ll": -2, "new_key": [1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := zoo.LoadResults(path)
	if err != nil || len(rs) != 1 || rs[0].Split != 2 || *rs[0].TestRMSE != 2.5 {
		t.Errorf("future keys: %v %v", rs, err)
	}
	var rep zoo.Report
	if err := rep.WriteMarkdown(&strings.Builder{}); err == nil {
		t.Error("empty report written")
	}
}
