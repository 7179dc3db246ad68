package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListAndHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"list"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "airfoil/gpr") {
		t.Errorf("list output lacks the default entry:\n%s", out.String())
	}
	out.Reset()
	if err := run([]string{"help"}, &out, &errb); err != nil || !strings.Contains(out.String(), "gpzoo run") {
		t.Errorf("help: %v\n%s", err, out.String())
	}
	if err := run([]string{"frobnicate"}, &out, &errb); err == nil {
		t.Error("unknown command accepted")
	}
	if err := run([]string{"run", "no/such"}, &out, &errb); err == nil {
		t.Error("unknown entry accepted")
	}
	if err := run([]string{"run", "--seed", "x"}, &out, &errb); err == nil {
		t.Error("bad seed accepted")
	}
}

// The default entry on embedded data, flags after the entry, JSON written.
func TestRunDefaultShort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	var out, errb bytes.Buffer
	if err := run([]string{"run", "airfoil/gpr", "--iters", "2", "--quiet", "--data", "", "--out", path}, &out, &errb); err != nil {
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

const sharedData = "../../../shared/data"

// The illustration entry writes its CSV next to --out by default and to --curves when given; `gpzoo illustrate`
// is the same run with --bases and --out (the CSV) renamed; other entries refuse --curves.
func TestRunIllustrationCurves(t *testing.T) {
	dir := t.TempDir()
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
	if err := run([]string{"run", "ringnorm/odvgp-illustration", "--data", sharedData, "--inducing", "5", "--iters", "2",
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
	if err := run([]string{"run", "ringnorm/odvgp-illustration", "--data", sharedData, "--inducing=5", "--iters", "2",
		"--quiet", "--curves", explicit}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if n := readRows(explicit); n != want {
		t.Errorf("--curves: %d lines, want %d", n, want)
	}

	alias := filepath.Join(dir, "alias.csv")
	if err := run([]string{"illustrate", "ringnorm", "--data", sharedData, "--bases", "5", "--iters", "2", "--quiet",
		"--out=" + alias}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if n := readRows(alias); n != want {
		t.Errorf("illustrate --out: %d lines, want %d", n, want)
	}
	if err := run([]string{"illustrate", "twonorm", "--data", sharedData}, &out, &errb); err == nil {
		t.Error("illustrate twonorm accepted")
	}
	if err := run([]string{"run", "airfoil/gpr", "--data", "", "--iters", "1", "--quiet", "--curves", filepath.Join(dir, "x.csv")}, &out, &errb); err == nil {
		t.Error("--curves accepted by airfoil/gpr")
	}
}
