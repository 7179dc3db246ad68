package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/modelfile"
)

// trainKernel trains on a small regression CSV with args (after --csv, --target, --save, --quiet, --inducing),
// checks that train prints and saves the canonical kernel want, predicts from the saved model file and checks
// the predictions are finite.
func trainKernel(t *testing.T, want string, args ...string) {
	t.Helper()
	content, _ := tableOf(60, targetGenerators[0].y, nil)
	trainKernelOn(t, want, content, args...)
}

// trainKernelOn is trainKernel on the CSV content (60 rows: x1, x2, y).
func trainKernelOn(t *testing.T, want string, content []byte, args ...string) {
	t.Helper()
	dir := t.TempDir()
	const n = 60
	data, model, pred := filepath.Join(dir, "data.csv"), filepath.Join(dir, "m.gpz"), filepath.Join(dir, "pred.csv")
	if err := os.WriteFile(data, content, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd := append([]string{"train", "--csv", data, "--target", "y", "--inducing", "10", "--save", model, "--quiet"}, args...)
	if err := Main(cmd, &out, &errb); err != nil {
		t.Fatalf("%v: %v\n%s%s", args, err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "kernel: "+want+" ") {
		t.Errorf("%v: the run summary does not name the kernel %s:\n%s", args, want, out.String())
	}
	f, err := modelfile.LoadFile(model, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Meta["kernel"] != want {
		t.Errorf("%v: model file Meta kernel %q, want %q", args, f.Meta["kernel"], want)
	}
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatalf("%v: predict: %v\n%s", args, err, errb.String())
	}
	recs := readCSVFile(t, pred)
	if len(recs) != n+1 {
		t.Fatalf("%v: %d prediction rows, want %d", args, len(recs)-1, n)
	}
	for i, row := range recs[1:] {
		for j, s := range row {
			if v, err := strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%v: prediction row %d, column %s: %q", args, i+1, recs[0][j], s)
			}
		}
	}
}

// TestTrainEveryKernel: every registered kernel family is accepted by train's --kernel, trains an SVGP and
// predicts from the saved model file. A newly registered kernel is covered without changing the test.
func TestTrainEveryKernel(t *testing.T) {
	fams := gp.KernelFamilies()
	if !slices.ContainsFunc(fams, func(f gp.KernelFamily) bool { return f.Name == "se" }) {
		t.Errorf("the default kernel se is not registered")
	}
	for _, fam := range fams {
		t.Run(fam.Name, func(t *testing.T) {
			want := strings.ToUpper(fam.Name)
			switch fam.Kind { // the grammar's base kernels print by their short names
			case gp.KindPeriodic:
				want = "PER"
			case gp.KindLinear:
				want = "LIN"
			}
			content, _ := tableOf(60, targetGenerators[0].y, nil)
			k, err := fam.New(gp.KernelOptions{InputDim: 2, ARD: true})
			if err != nil {
				t.Fatal(err)
			}
			trainKernelOn(t, want, withCategories(content, gp.CategoricalInputs(k)), "--kernel", fam.Name, "--iters", "3")
		})
	}
}

// withCategories rewrites the CSV content's input columns that a kernel reads as category indices (a coregion
// kernel's task column) to the indices 0, 1, …, Levels−1 in turn.
func withCategories(content []byte, cats []gp.CategoricalInput) []byte {
	if len(cats) == 0 {
		return content
	}
	lines := strings.Split(strings.TrimSuffix(string(content), "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		cells := strings.Split(lines[i], ",")
		for _, c := range cats {
			cells[c.Column] = strconv.Itoa((i - 1) % c.Levels)
		}
		lines[i] = strings.Join(cells, ",")
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// TestTrainKernelExpressions: an expression, and a named kernel with the deep GP and the exact GP.
func TestTrainKernelExpressions(t *testing.T) {
	k52, k32 := namedKernel(t, "matern52"), namedKernel(t, "matern32", "matern52")
	for _, c := range []struct {
		want string
		args []string
	}{
		{"PER+SE", []string{"--kernel", "se+per", "--iters", "3"}},
		{"LIN*SE+PER", []string{"--kernel", "per + SE*linear", "--iters", "3"}},
		{strings.ToUpper(k52), []string{"--kernel", k52, "--model", "dgp", "--iters", "3"}},
		{strings.ToUpper(k32), []string{"--kernel", k32, "--model", "gpr", "--iters", "3"}},
		{"SE", []string{"--iters", "3"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if slices.Contains(c.args, "dgp") {
				needWhite(t, "--model dgp")
			}
			trainKernel(t, c.want, c.args...)
		})
	}
}

// TestTrainHelpListsKernels: train's help lists every registered kernel with its Doc line and says expressions
// are accepted; a malformed or unknown --kernel is refused before the data are read, naming the flag and the
// grammar's error (with its position).
func TestTrainHelpListsKernels(t *testing.T) {
	var out, errb bytes.Buffer
	if err := Main([]string{"train", "--help"}, &out, &errb); err != nil {
		t.Fatalf("train --help: %v, want success", err)
	}
	help := out.String()
	for _, f := range gp.KernelFamilies() {
		if !strings.Contains(help, "  "+f.Name+" ") || !strings.Contains(help, f.Doc) {
			t.Errorf("train --help does not list %s with its Doc %q", f.Name, f.Doc)
		}
	}
	if !strings.Contains(help, "--kernel EXPR") || !strings.Contains(help, "expression") {
		t.Errorf("train --help does not document --kernel expressions:\n%s", help)
	}
	missing := filepath.Join(t.TempDir(), "none.csv")
	for _, c := range []struct{ expr, mention string }{
		{"se+", "byte 2"},
		{"nosuch", `unknown kernel "nosuch"`},
		{"se*(per", "never closed"},
	} {
		err := Main([]string{"train", "--csv", missing, "--target", "y", "--kernel", c.expr}, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "--kernel") || !strings.Contains(err.Error(), c.mention) || strings.Contains(err.Error(), "none.csv") {
			t.Errorf("--kernel %q: %v (want the flag and %q named before the missing file)", c.expr, err, c.mention)
		}
	}
}

// namedKernel returns the family name want if it is registered, else another registered family that prints by
// its own name (standIn), so that a test needing "some named kernel" runs whichever kernels are registered.
func namedKernel(t *testing.T, want string, avoid ...string) string {
	t.Helper()
	name := standIn(want, avoid...)
	if name == "" {
		t.Skipf("no registered kernel other than the base kernels to stand in for %s", want)
	}
	return name
}

// standIn returns want if it is registered, else a registered stationary family with the hyperparameters
// (variance, length-scales) that is not SE and not in avoid (so not a base kernel of the grammar, which print by
// short names, nor constant or white); "" if there is none.
func standIn(want string, avoid ...string) string {
	if _, ok := gp.LookupKernel(want); ok {
		return want
	}
	for _, f := range gp.KernelFamilies() {
		if f.Kind == gp.KindSquaredExp || slices.Contains(avoid, f.Name) {
			continue
		}
		k, err := f.New(gp.KernelOptions{InputDim: 2, ARD: true})
		if s, ok := k.(*gp.Stationary); err == nil && ok && len(s.Cov().Hypers()) == 2 {
			return f.Name
		}
	}
	return ""
}

// needWhite skips the test if kernel white is not registered (kernel_white.go deleted): what (a deep GP) adds
// one to its inner layers' kernels (dgp.InnerKernel).
func needWhite(t *testing.T, what string) {
	t.Helper()
	gptest.NeedKernel(t, "white", what+": a deep GP's inner layers add a white kernel (dgp.InnerKernel)")
}
