package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/zoo"
)

func TestListAndHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if err := Main([]string{"list"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "airfoil/gpr") {
		t.Errorf("list output lacks the default entry:\n%s", out.String())
	}
	// One line per entry, the summaries in one column.
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	es := zoo.Entries()
	if len(lines) != len(es) {
		t.Fatalf("list: %d lines for %d entries", len(lines), len(es))
	}
	col := strings.Index(lines[0], strings.Fields(es[0].Summary)[0])
	for i, l := range lines {
		if !strings.HasPrefix(l, es[i].Name+" ") || strings.TrimSpace(l[:col]) != es[i].Name || l[col] == ' ' ||
			utf8.RuneCountInString(l[col:]) > listWidth {
			t.Errorf("list line %d not aligned at column %d or too long: %q", i, col, l)
		}
	}
	out.Reset()
	if err := Main([]string{"list", "--long"}, &out, &errb); err != nil || !strings.Contains(out.String(), "published: ") ||
		strings.Count(out.String(), "reference: ") != len(es) {
		t.Errorf("list --long: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := Main([]string{"help"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(out.String(), "gpzoo "+c.name) {
			t.Errorf("help does not list %q:\n%s", c.name, out.String())
		}
	}
	if err := Main([]string{"frobnicate"}, &out, &errb); err == nil {
		t.Error("unknown command accepted")
	}
	if err := Main([]string{"run", "no/such"}, &out, &errb); err == nil {
		t.Error("unknown entry accepted")
	}
	if err := Main([]string{"run", "--seed", "x"}, &out, &errb); err == nil {
		t.Error("bad seed accepted")
	}
	if err := Main([]string{"run", "--split", "1", "--splits", "0-2"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "exclude") {
		t.Errorf("--split with --splits: %v", err)
	}
	if err := Main([]string{"run", "--splits", "2-1"}, &out, &errb); err == nil {
		t.Error("--splits 2-1 accepted")
	}
	if err := Main([]string{"report"}, &out, &errb); err == nil {
		t.Error("report without files accepted")
	}
}

// The showcase (no entry, no split flags) runs the default entry on the default splits and prints each split,
// the aggregate and the published numbers; with --out it writes the multi-split JSON (what CI's smoke run greps).
func TestRunShowcaseShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "showcase.json")
	var out, errb bytes.Buffer
	if err := Main([]string{"run", "--iters", "2", "--inducing", "5", "--batch", "64", "--quiet", "--data", "", "--out", path}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	want, err := zoo.ParseSplits(zoo.DefaultSplits)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range want {
		if !strings.Contains(out.String(), fmt.Sprintf("%s split %d: test RMSE", zoo.DefaultEntry, k)) {
			t.Errorf("no line for split %d:\n%s", k, out.String())
		}
	}
	if !strings.Contains(out.String(), fmt.Sprintf("ours (%d splits): RMSE", len(want))) || !strings.Contains(out.String(), "| published: ") {
		t.Errorf("no comparison line:\n%s", out.String())
	}
	rs, err := zoo.LoadResults(path)
	if err != nil || len(rs) != len(want) {
		t.Fatalf("showcase JSON: %d results, %v", len(rs), err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"test_rmse"`) {
		t.Errorf("showcase JSON lacks test_rmse: %v\n%s", err, b)
	}
}

// --splits runs and writes several splits; gpzoo report tabulates them with a single-split result of another
// entry, and with --against pairs them split by split; a corrupt result file is an error naming it.
func TestSplitsAndReport(t *testing.T) {
	dir := t.TempDir()
	multi, single, md := filepath.Join(dir, "svgp.json"), filepath.Join(dir, "gpr.json"), filepath.Join(dir, "table.md")
	var out, errb bytes.Buffer
	if err := Main([]string{"run", "airfoil/svgp", "--splits", "1,4", "--iters", "2", "--inducing", "5", "--quiet", "--data", "", "--out", multi}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "splits 1,4 (n=2)") || !strings.Contains(out.String(), "airfoil/svgp split 4:") {
		t.Errorf("--splits output:\n%s", out.String())
	}
	if err := Main([]string{"run", "airfoil/gpr", "--split", "2", "--iters", "2", "--quiet", "--data", "", "--out", single}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	out.Reset()
	if err := Main([]string{"report", multi, "--out", md, single}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	table := string(b)
	if !strings.Contains(table, "| airfoil/gpr | airfoil | 2 (1) | ") || !strings.Contains(table, "| airfoil/svgp | airfoil | 1,4 (2) | ") ||
		strings.Count(table, "\n") != 4 {
		t.Errorf("report table:\n%s", table)
	}
	out.Reset()
	if err := Main([]string{"report", single}, &out, &errb); err != nil || !strings.Contains(out.String(), "| airfoil/gpr |") {
		t.Errorf("report to stdout: %v\n%s", err, out.String())
	}
	// --against gpr: svgp's splits 1 and 4 pair with gpr's (split 2 has no partner).
	gpr14 := filepath.Join(dir, "gpr14.json")
	if err := Main([]string{"run", "airfoil/gpr", "--splits", "1,4", "--iters", "2", "--quiet", "--data", "", "--out", gpr14}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	out.Reset()
	if err := Main([]string{"report", "--against", "gpr", multi, single, gpr14}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "| airfoil/svgp | airfoil/gpr | 1,4 (2) | ") || !strings.Contains(s, "| airfoil/gpr | airfoil | 1,2,4 (3) | ") || strings.Contains(s, "| airfoil/gpr | airfoil/gpr |") {
		t.Errorf("report --against gpr:\n%s", s)
	}
	if err := Main([]string{"report", "--against", "dgp", multi}, &out, &errb); err == nil || !strings.Contains(err.Error(), `"dgp"`) {
		t.Errorf("report --against a model no entry has: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"entry": "airfoil/gpr", "split": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Main([]string{"report", single, bad}, &out, &errb); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated result file: %v", err)
	}
}

// The default entry on embedded data, flags after the entry, JSON written.
func TestRunDefaultShort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	var out, errb bytes.Buffer
	if err := Main([]string{"run", "airfoil/gpr", "--iters", "2", "--quiet", "--data", "", "--out", path}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["entry"] != "airfoil/gpr" || m["n_train"].(float64) != 1353 || m["test_rmse"] == nil {
		t.Errorf("unexpected JSON: %s", b)
	}
	if !strings.Contains(out.String(), "test RMSE") {
		t.Errorf("no metrics printed:\n%s", out.String())
	}
}

// The illustration entry writes its CSV next to --out by default and to --curves when given; `gpzoo illustrate`
// is the same run with --bases and --out (the CSV) renamed; other entries refuse --curves.
func TestRunIllustrationCurves(t *testing.T) {
	dir := t.TempDir()
	data := datatest.Fake(t, "ringnorm", "twonorm") // generated data in the benchmark layout
	readRows := func(path string) int {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	const want = 1 + 6*2 // header, six methods × two iterations
	var out, errb bytes.Buffer
	jsonPath := filepath.Join(dir, "r.json")
	if err := Main([]string{"run", "ringnorm/odvgp-illustration", "--data", data, "--inducing", "5", "--iters", "2",
		"--quiet", "--out", jsonPath}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if n := readRows(filepath.Join(dir, "r.curves.csv")); n != want {
		t.Errorf("r.curves.csv: %d lines, want %d", n, want)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if c, ok := m["curves"].(map[string]any); !ok || c["file"] != filepath.Join(dir, "r.curves.csv") || m["test_ll"] != nil {
		t.Errorf("unexpected JSON: %s", b)
	}
	if !strings.Contains(out.String(), "no test metrics") || !strings.Contains(out.String(), "COUPLEDNAT") {
		t.Errorf("summary:\n%s", out.String())
	}

	explicit := filepath.Join(dir, "explicit.csv")
	if err := Main([]string{"run", "ringnorm/odvgp-illustration", "--data", data, "--inducing=5", "--iters", "2",
		"--quiet", "--curves", explicit}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if n := readRows(explicit); n != want {
		t.Errorf("--curves: %d lines, want %d", n, want)
	}

	alias := filepath.Join(dir, "alias.csv")
	if err := Main([]string{"illustrate", "ringnorm", "--data", data, "--bases", "5", "--iters", "2", "--quiet",
		"--out=" + alias}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if n := readRows(alias); n != want {
		t.Errorf("illustrate --out: %d lines, want %d", n, want)
	}
	if err := Main([]string{"illustrate", "twonorm", "--data", data}, &out, &errb); err == nil {
		t.Error("illustrate twonorm accepted")
	}
	if err := Main([]string{"run", "airfoil/gpr", "--data", "", "--iters", "1", "--quiet", "--curves", filepath.Join(dir, "x.csv")}, &out, &errb); err == nil {
		t.Error("--curves accepted by airfoil/gpr")
	}
}

// TestHelpAndUsageExits: every command's --help succeeds and prints its usage to standard output (nothing to
// standard error), and an unknown command, subcommand or flag is a usage error (ErrUsage: exit status 2), a failed run is not.
func TestHelpAndUsageExits(t *testing.T) {
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		for _, h := range []string{"--help", "-h"} {
			var out, errb bytes.Buffer
			err := Main([]string{c.name, h}, &out, &errb)
			if err != nil || ExitCode(err) != 0 {
				t.Errorf("gpzoo %s %s: %v (exit %d), want success", c.name, h, err, ExitCode(err))
			}
			if out.Len() == 0 || errb.Len() != 0 {
				t.Errorf("gpzoo %s %s: %d bytes on stdout, %d on stderr; want the usage on stdout only", c.name, h, out.Len(), errb.Len())
			}
		}
	}
	for _, args := range [][]string{{"bogus"}, {"train", "--bogus"}, {"run", "--iters", "x"}, {"predict", "--model"}, {"list", "-x"},
		{"cluster", "bogus"}, {"cluster", "work", "--bogus"}, {"table", "bogus"}, {"table", "run", "--bogus"}, {"data", "fetch", "--bogus"}, {"data", "--bogus"}, {"data", "bogus"}} {
		var out, errb bytes.Buffer
		err := Main(args, &out, &errb)
		if !errors.Is(err, ErrUsage) || ExitCode(err) != 2 {
			t.Errorf("gpzoo %v: %v (exit %d), want a usage error (exit 2)", args, err, ExitCode(err))
		}
	}
	var out, errb bytes.Buffer
	err := Main([]string{"train", "--csv", "/nonexistent/file.csv", "--target", "y", "--quiet"}, &out, &errb)
	if err == nil || errors.Is(err, ErrUsage) || ExitCode(err) != 1 {
		t.Errorf("a failed run: %v (exit %d), want exit 1", err, ExitCode(err))
	}
}
