package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeToyCSV writes n rows of a 2-input regression with a header x0,x1,y.
func writeToyCSV(t *testing.T, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("x0,x1,y\n")
	for range n {
		a, c := 4*rng.Float64()-2, 4*rng.Float64()-2
		fmt.Fprintf(&b, "%g,%g,%g\n", a, c, 10+3*a*a-2*c+0.2*rng.NormFloat64())
	}
	path := filepath.Join(t.TempDir(), "toy.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitFor polls out until re has matched want times (or serve ended, or 30 s passed) and returns the matches.
func waitFor(t *testing.T, out *syncBuffer, served chan error, re *regexp.Regexp, want int) [][]string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if m := re.FindAllStringSubmatch(out.String(), -1); len(m) >= want {
			return m
		}
		select {
		case err := <-served:
			t.Fatalf("serve ended early: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing matching %s after 30 s:\n%s", re, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// workToEnd runs each of cmds as `gpzoo NAME work ARGS` (NAME the command's first word) in this process, waits
// for serve to finish and then for the workers, and fails the test on any error.
func workToEnd(t *testing.T, out *syncBuffer, served chan error, cmds [][]string) {
	t.Helper()
	var wg sync.WaitGroup
	werrs := make([]error, len(cmds))
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			werrs[i] = Main(c, &bytes.Buffer{}, &bytes.Buffer{})
		}()
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("serve did not finish in 2 minutes:\n%s", out.String())
	}
	wg.Wait()
	for i, err := range werrs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
}

// gpzoo cluster serve --csv trains a CSV's model with workers started from the command it prints: the server
// writes the standardised training rows to a row file in --data-out, a worker reads its shard of it (one from
// another copy, through --data-file), and the server saves the model as gpzoo train does.
func TestClusterServeCSV(t *testing.T) {
	csv := writeToyCSV(t, 300)
	dir := t.TempDir()
	model := filepath.Join(dir, "toy.gpz")
	args := []string{"cluster", "serve", "--csv", csv, "--target", "y", "--inducing", "10", "--run", "csvrun", "--workers", "2",
		"--iters", "30", "--lr", "0.05", "--listen", "127.0.0.1:0", "--data-out", dir, "--save", model, "--quiet"}
	out := &syncBuffer{}
	served := make(chan error, 1)
	go func() { served <- Main(args, out, &bytes.Buffer{}) }()
	m := waitFor(t, out, served, regexp.MustCompile(`gpzoo cluster work (.*)\n`), 1)
	fields := strings.Fields(m[0][1])
	file := fields[len(fields)-1]
	if !strings.Contains(m[0][1], "--data-file "+dir) || !strings.HasSuffix(file, ".gpzr") {
		t.Fatalf("the workers' command does not name the row file in %s: %q", dir, m[0][1])
	}
	copyFile := filepath.Join(t.TempDir(), "copy.gpzr")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	for i := range 2 {
		c := strings.Join(fields, " ")
		c = strings.Replace(c, "--shard i/2", fmt.Sprintf("--shard %d/2", i), 1)
		if i == 1 {
			c = strings.Replace(c, file, copyFile, 1)
		}
		cmds = append(cmds, append([]string{"cluster", "work"}, strings.Fields(c)...))
	}
	workToEnd(t, out, served, cmds)
	for _, want := range []string{"cluster: 2 workers, τ=0: 30 updates", "saved the model to " + model} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	var pred bytes.Buffer
	if err := Main([]string{"predict", "--model", model, "--input", csv}, &pred, &bytes.Buffer{}); err != nil {
		t.Fatalf("predicting with the served run's model: %v", err)
	}
}

// Refusals of the cluster commands, each naming what is wrong.
func TestClusterCommandErrors(t *testing.T) {
	csv := writeToyCSV(t, 50)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--csv", csv, "--target", "y", "--model", "sgpr", "--workers", "2"}, "sum over rows"},
		{[]string{"train", "--csv", csv, "--target", "y", "--model", "gpr", "--solver", "cholesky", "--workers", "2"}, "not with the Cholesky solver"},
		{[]string{"train", "--csv", csv, "--target", "y", "--tau", "2"}, "add --workers"},
		{[]string{"train", "--csv", csv, "--target", "y", "--workers", "0"}, "want K ≥ 1"},
		{[]string{"cluster", "serve", "--csv", csv, "--target", "y", "--run", "r"}, "add --workers K"},
		{[]string{"cluster", "serve", "--csv", csv, "--target", "y", "--workers", "2"}, "--run NAME is required"},
		{[]string{"cluster", "serve", "--csv", csv, "--target", "y", "--workers", "2", "--run", "a.b"}, "run name"},
		{[]string{"cluster", "serve", "airfoil/svgp", "--run", "r", "--data-out", "x"}, "--data-out is for --csv"},
		{[]string{"cluster", "frobnicate"}, "unknown subcommand"},
		{[]string{"cluster", "serve", "--csv", csv, "--target", "y", "--workers", "2", "--run", "r", "--rejoin-wait", "1m"}, "--rejoin-wait is for gpr"},
		{[]string{"cluster", "serve", "--csv", csv, "--target", "y", "--model", "gpr", "--workers", "2", "--run", "r", "--rejoin-wait", "-1s"}, "negative"},
	} {
		err := Main(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error about %q", c.args, err, c.want)
		}
	}
}

// gpzoo cluster serve --rows FILE: the workers started from the printed command read their shards of the row
// file itself (--data-file); the server never holds its rows.
func TestClusterServeRows(t *testing.T) {
	dir := t.TempDir()
	rows := filepath.Join(dir, "big.gpzr")
	if err := Main([]string{"synth", "--rows", "3000", "--inputs", "3", "--out", rows}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "big.gpz")
	args := []string{"cluster", "serve", "--rows", rows, "--inducing", "10", "--run", "rowsrun", "--workers", "2",
		"--iters", "30", "--lr", "0.05", "--listen", "127.0.0.1:0", "--save", model, "--quiet"}
	out := &syncBuffer{}
	served := make(chan error, 1)
	go func() { served <- Main(args, out, &bytes.Buffer{}) }()
	m := waitFor(t, out, served, regexp.MustCompile(`gpzoo cluster work (.*)\n`), 1)
	if !strings.HasSuffix(strings.TrimSpace(m[0][1]), "--data-file "+rows) {
		t.Fatalf("the workers' command does not name the row file: %q", m[0][1])
	}
	var cmds [][]string
	for i := range 2 {
		c := strings.Replace(m[0][1], "--shard i/2", fmt.Sprintf("--shard %d/2", i), 1)
		cmds = append(cmds, append([]string{"cluster", "work"}, strings.Fields(c)...))
	}
	workToEnd(t, out, served, cmds)
	for _, want := range []string{"cluster: 2 workers, τ=0: 30 updates", "saved the model to " + model, "test RMSE"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

// gpzoo train --model gpr --workers K trains the exact GP by conjugate gradients, its kernel products computed by
// K worker processes (this test binary as gpzoo cluster work --products); gpzoo cluster serve --csv --model gpr
// prints the products workers' command, and workers started from it serve the run. Both fits are the
// single-process fit (package zoo's TestExactGPOnCluster compares them).
func TestExactGPOnWorkers(t *testing.T) {
	csv := writeToyCSV(t, 1200) // 1080 training rows: 3 row blocks of 512 for 2 workers
	dir := t.TempDir()
	var out bytes.Buffer
	local := filepath.Join(dir, "local.gpz")
	if err := Main([]string{"train", "--csv", csv, "--target", "y", "--model", "gpr", "--workers", "2", "--iters", "3",
		"--subset", "100", "--save", local, "--quiet"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("train on 2 workers: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "kernel products by 2 workers") {
		t.Errorf("the summary does not say the workers computed the products:\n%s", out.String())
	}
	model := filepath.Join(dir, "served.gpz")
	args := []string{"cluster", "serve", "--csv", csv, "--target", "y", "--model", "gpr", "--run", "gprrun", "--workers", "2",
		"--iters", "3", "--subset", "100", "--listen", "127.0.0.1:0", "--save", model, "--quiet", "--rejoin-wait", "1m"}
	sout := &syncBuffer{}
	served := make(chan error, 1)
	go func() { served <- Main(args, sout, &bytes.Buffer{}) }()
	m := waitFor(t, sout, served, regexp.MustCompile(`gpzoo cluster work (.*)\n`), 1)
	if !strings.Contains(m[0][1], "--products") {
		t.Fatalf("the workers' command is not a products worker's: %q", m[0][1])
	}
	var cmds [][]string
	for i := range 2 {
		c := strings.Replace(m[0][1], "--shard i/2", fmt.Sprintf("--shard %d/2", i), 1)
		cmds = append(cmds, append([]string{"cluster", "work"}, strings.Fields(c)...))
	}
	workToEnd(t, sout, served, cmds)
	if !strings.Contains(sout.String(), "saved the model to "+model) {
		t.Errorf("the served run saved no model:\n%s", sout.String())
	}
	var a, b bytes.Buffer
	for _, p := range []struct {
		model string
		out   *bytes.Buffer
	}{{local, &a}, {model, &b}} {
		if err := Main([]string{"predict", "--model", p.model, "--input", csv}, p.out, &bytes.Buffer{}); err != nil {
			t.Fatalf("predicting with %s: %v", p.model, err)
		}
	}
	if a.Len() == 0 || a.String() != b.String() {
		t.Errorf("the two fits on workers predict differently:\n%.300s\n%.300s", a.String(), b.String())
	}
}
