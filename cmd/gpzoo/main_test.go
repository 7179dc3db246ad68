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
