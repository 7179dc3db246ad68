package cli

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/gp/modelfile"
)

// gpzoo train --model gpr trains by conjugate gradients when a Cholesky fit would exceed the memory budget (here
// 64 KiB, so that a small table takes the path a large one takes by default), says so, and its model file
// predicts through gpzoo predict unchanged.
func TestTrainGPRByCG(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 400)
	model := filepath.Join(dir, "cg.gpz")
	var out, errb bytes.Buffer
	err := Main([]string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--model", "gpr", "--memory", "64KiB",
		"--iters", "3", "--subset", "100", "--probes", "4", "--precond-rank", "8", "--max-precond-rank", "0", "--cg-tol", "0.5", "--save", model, "--quiet"}, &out, &errb)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	f, err := modelfile.LoadFile(model, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Model.(*cg.GPR).Config().Solver; c.PrecondRank != 8 || c.MaxPrecondRank != -1 {
		t.Errorf("the model file's solver: rank %d, raised up to %d; want 8, never raised (-1)", c.PrecondRank, c.MaxPrecondRank)
	}
	s := out.String()
	for _, want := range []string{"exact GP: cg (360 rows: a Cholesky fit would take about", "beyond the memory budget of 0.00 GiB",
		"4 rademacher probes", "CG tolerance 0.5", "started from lbfgs by Cholesky on 100 random rows", "prediction cache: α in", "test RMSE"} {
		if !strings.Contains(s, want) {
			t.Errorf("train output lacks %q:\n%s", want, s)
		}
	}
	pred := filepath.Join(dir, "pred.csv")
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatalf("predict: %v", err)
	}
	recs, in := readCSVFile(t, pred), readCSVFile(t, data)
	se, vy := 0.0, 0.0
	for i := 1; i < len(recs); i++ {
		m, _ := strconv.ParseFloat(recs[i][0], 64)
		v, _ := strconv.ParseFloat(recs[i][1], 64)
		y, _ := strconv.ParseFloat(in[i][3], 64)
		if !(v > 0) {
			t.Fatalf("row %d: variance %v", i, v)
		}
		se += (m - y) * (m - y)
		vy += y * y
	}
	if se/vy > 0.1 {
		t.Fatalf("predictions explain too little: SSE/Σy² = %.3f", se/vy)
	}
}

// --variances exact: the CG fit builds no LOVE cache, says so, and its model file keeps the choice and predicts
// through gpzoo predict.
func TestTrainGPRExactVariances(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 300)
	model := filepath.Join(dir, "cg.gpz")
	var out, errb bytes.Buffer
	err := Main([]string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--model", "gpr", "--solver", "cg",
		"--iters", "2", "--subset", "80", "--variances", "exact", "--save", model, "--quiet"}, &out, &errb)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "variances by CG solves at each prediction") {
		t.Errorf("the summary does not say how variances are computed:\n%s", s)
	}
	f, err := modelfile.LoadFile(model, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := f.Model.(*cg.GPR); !ok || !m.Config().ExactVariance {
		t.Fatalf("the model file's model %T does not keep --variances exact", f.Model)
	}
	pred := filepath.Join(dir, "pred.csv")
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatalf("predict: %v", err)
	}
	recs := readCSVFile(t, pred)
	for i := 1; i < len(recs); i++ {
		if v, _ := strconv.ParseFloat(recs[i][1], 64); !(v > 0) {
			t.Fatalf("row %d: variance %q", i, recs[i][1])
		}
	}
}

// With --solver auto, CG settings are taken and, when the rows fit Cholesky after all, the summary names them as
// unused instead of dropping them silently.
func TestTrainGPRAutoUnusedCGFlags(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 60)
	var out, errb bytes.Buffer
	err := Main([]string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--model", "gpr", "--lr", "0.05", "--probes", "4",
		"--save", filepath.Join(dir, "m.gpz"), "--quiet"}, &out, &errb)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "exact GP: cholesky") || !strings.Contains(s, "unused by Cholesky: --lr, --probes") {
		t.Errorf("the summary does not name the unused CG flags:\n%s", s)
	}
}

// The exact GP's flags are checked before anything runs.
func TestTrainGPRFlagErrors(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 30)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gpr", "--solver", "qr"}, "--solver"},
		{[]string{"--model", "gpr", "--probes", "0"}, "--probes 0"},
		{[]string{"--model", "gpr", "--precond-rank", "-2"}, "--precond-rank"},
		{[]string{"--model", "gpr", "--max-precond-rank", "-1"}, "--max-precond-rank -1"},
		{[]string{"--model", "gpr", "--solver", "cholesky", "--max-precond-rank", "50"}, "not --solver cholesky"},
		{[]string{"--model", "gpr", "--cg-tol", "0"}, "--cg-tol"},
		{[]string{"--model", "gpr", "--subset", "1"}, "--subset 1"},
		{[]string{"--model", "gpr", "--memory", "lots"}, "--memory"},
		{[]string{"--model", "gpr", "--solver", "cholesky", "--lr", "0.1"}, "not --solver cholesky"},
		{[]string{"--model", "gpr", "--solver", "cholesky", "--probes", "5"}, "not --solver cholesky"},
		{[]string{"--model", "svgp", "--solver", "cg"}, "is for --model gpr"},
		{[]string{"--model", "sgpr", "--lr", "0.1"}, "does not apply to --model sgpr"},
		{[]string{"--model", "gpr", "--variances", "sometimes"}, "--variances"},
		{[]string{"--model", "gpr", "--love-rank", "0"}, "--love-rank 0"},
		{[]string{"--model", "gpr", "--variances", "exact", "--love-rank", "50"}, "--love-rank sets the LOVE cache"},
		{[]string{"--model", "gpr", "--solver", "cholesky", "--variances", "exact"}, "not --solver cholesky"},
		{[]string{"--model", "svgp", "--love-rank", "20"}, "is for --model gpr"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--quiet", "--save", filepath.Join(dir, "m.gpz")}, c.args...)
		if err := Main(args, &out, &errb); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
	}{{"4GiB", 4 << 30}, {"512MiB", 512 << 20}, {"2GB", 2e9}, {"100", 100}, {"64 KiB", 64 << 10}} {
		if got, err := parseBytes(c.in); err != nil || got != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}
