package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gpzoo vbks end to end on a short synthetic run: the tables, the BMA and VBKS-s metrics, and the files.
func TestVBKSCommandShort(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"vbks", "--data", "synthetic:PER*LIN*RQ", "--kernels", "PER*LIN*RQ, SE, LIN+RQ", "--iters", "20",
		"--fractions", "2", "--restarts", "-1", "--inducing", "8", "--top", "2", "--mc", "200", "--out", dir}
	if err := Main(args, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"Kernel posterior q*(k)", "BMA over 2 kernels", "VBKS-s", "True kernel PER*LIN*RQ: rank", "fraction 1.00 (1000 rows)"} {
		if !strings.Contains(out.String()+errb.String(), want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out.String(), errb.String())
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, "posterior.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) != 3 || lines[0] != "fraction,rows,PER*LIN*RQ,SE,LIN+RQ" || !strings.HasPrefix(lines[2], "1,1000,") {
		t.Errorf("posterior.csv:\n%s", csv)
	}
	var rep map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "vbks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep["truth"] != "PER*LIN*RQ" || rep["train"].(float64) != 1000 || rep["test"].(float64) != 1000 {
		t.Errorf("vbks.json: %s", b)
	}
	if fi, err := os.Stat(filepath.Join(dir, "posterior.png")); err != nil || fi.Size() == 0 {
		t.Errorf("posterior.png: %v", err)
	}
}

func TestVBKSCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"vbks"},
		{"vbks", "--data", "synthetic:SE"},
		{"vbks", "--data", "nosuchset"},
		{"vbks", "--data", "synthetic:PER*LIN*RQ", "--kernels", "SE+FOO"},
		{"vbks", "--data", "synthetic:PER*LIN*RQ", "--kernels", "SE,SE"},
	} {
		var out, errb bytes.Buffer
		if err := Main(args, &out, &errb); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
