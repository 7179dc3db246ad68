package cli

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/serve"
	"github.com/gpzoo/gpzoo/zoo"
)

// writeTwoTargets writes a seeded table of inputs x1, x2 and targets a (small) and b (large, in other units,
// sharing a's sin(2·x1)), with exactly 30% of b's cells empty (rows i with i%10 < 3); bad edits cells first.
func writeTwoTargets(t *testing.T, dir, name string, n int, bad func(row int, cells []string)) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(32, 2))
	var b strings.Builder
	b.WriteString("x1,x2,a,b\n")
	for i := range n {
		x1, x2 := 4*rng.Float64()-2, 4*rng.Float64()-2
		a := math.Sin(2*x1) + 0.5*x2 + 0.05*rng.NormFloat64()
		bv := 10*(math.Sin(2*x1)-0.3*x2) + 5 + 0.3*rng.NormFloat64()
		cells := []string{strconv.FormatFloat(x1, 'f', 6, 64), strconv.FormatFloat(x2, 'f', 6, 64), strconv.FormatFloat(a, 'f', 6, 64), strconv.FormatFloat(bv, 'f', 6, 64)}
		if i%10 < 3 {
			cells[3] = ""
		}
		if bad != nil {
			bad(i+1, cells)
		}
		b.WriteString(strings.Join(cells, ",") + "\n")
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTrainTargetsMissingAndPredict: gpzoo train --targets a,b on a table with 30% of b's cells empty (independent
// outputs, then an LMC of 2 latent GPs) reports the empty cells and scores the observed ones; gpzoo predict writes
// mean_a, variance_a, std_a, mean_b, variance_b, std_b, finite, with b's predictions following b on the rows
// where it was observed and in b's units on the rows where it was missing.
func TestTrainTargetsMissingAndPredict(t *testing.T) {
	dir := t.TempDir()
	data := writeTwoTargets(t, dir, "two.csv", 200, nil)
	for _, extra := range [][]string{nil, {"--lmc", "2"}} {
		model := filepath.Join(dir, fmt.Sprintf("two%d.gpz", len(extra)))
		var out, errb bytes.Buffer
		args := append([]string{"train", "--csv", data, "--targets", "a,b", "--inducing", "20", "--iters", "400", "--lr", "0.05",
			"--save", model, "--quiet"}, extra...)
		if err := Main(args, &out, &errb); err != nil {
			t.Fatalf("train %v: %v\n%s", extra, err, errb.String())
		}
		s := out.String()
		for _, want := range []string{`targets "a", "b"`, "60 of 400 target cells empty", "observed target cells", "RMSE per output"} {
			if !strings.Contains(s, want) {
				t.Errorf("train %v: output lacks %q:\n%s", extra, want, s)
			}
		}
		pred := filepath.Join(dir, "pred.csv")
		if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
			t.Fatalf("predict: %v", err)
		}
		recs, in := readCSVFile(t, pred), readCSVFile(t, data)
		if got := strings.Join(recs[0], ","); got != "mean_a,variance_a,std_a,mean_b,variance_b,std_b" || len(recs) != len(in) {
			t.Fatalf("prediction CSV header %q, %d rows; want mean_a,...,std_b and %d rows", got, len(recs), len(in))
		}
		var seObs, vObs, seMiss, vMiss float64
		var nObs, nMiss int
		for i, r := range recs[1:] {
			for j, c := range r {
				v, err := strconv.ParseFloat(c, 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || (j%3 != 0 && !(v > 0)) {
					t.Fatalf("row %d column %s: %q is not a finite prediction", i+1, recs[0][j], c)
				}
			}
			mb, _ := strconv.ParseFloat(r[3], 64)
			if in[i+1][3] != "" {
				b, _ := strconv.ParseFloat(in[i+1][3], 64)
				seObs, vObs, nObs = seObs+(b-mb)*(b-mb), vObs+(b-5)*(b-5), nObs+1
				continue
			}
			// The row's b is missing: compare with the noiseless function it would have had.
			x1, _ := strconv.ParseFloat(in[i+1][0], 64)
			x2, _ := strconv.ParseFloat(in[i+1][1], 64)
			f := 10*(math.Sin(2*x1)-0.3*x2) + 5
			seMiss, vMiss, nMiss = seMiss+(f-mb)*(f-mb), vMiss+(f-5)*(f-5), nMiss+1
		}
		t.Logf("%v: b's R² on the rows where it was observed %.3f (%d), where it was missing %.3f (%d)", extra, 1-seObs/vObs, nObs, 1-seMiss/vMiss, nMiss)
		if nMiss != 60 || 1-seObs/vObs < 0.9 || 1-seMiss/vMiss < 0.8 {
			t.Errorf("%v: b's predictions explain %.3f of its variance where observed, %.3f where missing (%d rows): want ≥ 0.9, ≥ 0.8 and 60 rows",
				extra, 1-seObs/vObs, 1-seMiss/vMiss, nMiss)
		}
	}
}

// TestTrainTargetsErrors: a NaN target and an empty input cell keep their errors naming the row and the column;
// missing targets with gpr or with the heteroscedastic likelihood are a *zoo.MissingTargetsError saying what
// would work; --target with --targets, and --lmc with a decoupled dgp, are refused.
func TestTrainTargetsErrors(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) error {
		var out, errb bytes.Buffer
		return Main(append([]string{"train", "--iters", "5", "--quiet", "--force"}, args...), &out, &errb)
	}
	nan := writeTwoTargets(t, dir, "nan.csv", 40, func(row int, c []string) {
		if row == 7 {
			c[2] = "NaN"
		}
	})
	emptyIn := writeTwoTargets(t, dir, "emptyin.csv", 40, func(row int, c []string) {
		if row == 12 {
			c[1] = ""
		}
	})
	for _, c := range []struct {
		path, column string
		row          int
		sentinel     error
	}{{nan, "a", 7, datasets.ErrNonFinite}, {emptyIn, "x2", 12, datasets.ErrFormat}} {
		err := run("--csv", c.path, "--targets", "a,b")
		var te *datasets.TableError
		if !errors.As(err, &te) || te.Row != c.row || te.Column != c.column || !errors.Is(err, c.sentinel) ||
			!strings.Contains(err.Error(), fmt.Sprintf("data row %d", c.row)) || !strings.Contains(err.Error(), strconv.Quote(c.column)) {
			t.Errorf("%s: %v, want a *datasets.TableError naming data row %d and column %q", filepath.Base(c.path), err, c.row, c.column)
		}
	}
	data := writeTwoTargets(t, dir, "two.csv", 40, nil)
	for _, args := range [][]string{{"--model", "gpr"}, {"--model", "sgpr"}, {"--likelihood", "heteroscedastic"}} {
		err := run(append([]string{"--csv", data, "--targets", "a,b", "--save", filepath.Join(dir, "m.gpz")}, args...)...)
		var me *zoo.MissingTargetsError
		if !errors.As(err, &me) || !errors.Is(err, zoo.ErrBadCustom) || !strings.Contains(err.Error(), "12 of 80 target cells are empty") {
			t.Errorf("%v: %v, want a *zoo.MissingTargetsError", args, err)
		} else if args[0] == "--likelihood" && !strings.Contains(err.Error(), "need gaussian or studentt") {
			t.Errorf("%v: %v, want the likelihoods that handle missing targets named", args, err)
		}
	}
	for _, args := range [][]string{{"--target", "a", "--targets", "a,b"}, {"--targets", "a,b", "--model", "dgp", "--layer-family", "decoupled", "--lmc", "2"}, {"--targets", "a,b", "--lmc", "0"}} {
		if err := run(append([]string{"--csv", data, "--save", filepath.Join(dir, "m.gpz")}, args...)...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestPredictRemoteTargets: a 2-target model served over REST and gRPC gives gpzoo predict --url the bytes of a
// local prediction, columns mean_a, ..., std_b named from the tensors' parameters.targets.
func TestPredictRemoteTargets(t *testing.T) {
	dir := t.TempDir()
	data := writeTwoTargets(t, dir, "two.csv", 60, nil)
	model := filepath.Join(dir, "two.gpz")
	var out, errb bytes.Buffer
	if err := Main([]string{"train", "--csv", data, "--targets", "a,b", "--inducing", "8", "--iters", "30", "--save", model, "--quiet"}, &out, &errb); err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	src, err := serve.ParseModelSource("two=" + model)
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(serve.Config{GRPCListen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, src)
	if err != nil {
		t.Fatal(err)
	}
	restAddr, grpcAddr := serveBoth(t, s)
	predict := func(args ...string) []byte {
		t.Helper()
		path := filepath.Join(t.TempDir(), "y.csv")
		if err := Main(append([]string{"predict", "--out", path, "--input", data}, args...), &out, &errb); err != nil {
			t.Fatalf("predict %v: %v", args, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	local := predict("--model", model)
	if !bytes.HasPrefix(local, []byte("mean_a,variance_a,std_a,mean_b,variance_b,std_b\n")) {
		t.Fatalf("local header: %q", local[:min(60, len(local))])
	}
	for _, url := range []string{"http://" + restAddr + "/v2/models/two", "grpc://" + grpcAddr + "/v2/models/two"} {
		if remote := predict("--url", url); !bytes.Equal(remote, local) {
			t.Errorf("%s: differs from the local prediction:\n%s\n%s", url, head(remote), head(local))
		}
	}
}

// TestTrainTargetsHeteroscedastic: the heteroscedastic likelihood (2 latents per target) with two complete targets
// trains a model of 4 latent GPs whose model file loads (its SVGP Spec accepts 2 latents per target column) and
// predicts mean_a, ..., std_b.
func TestTrainTargetsHeteroscedastic(t *testing.T) {
	dir := t.TempDir()
	data := writeTwoTargets(t, dir, "full.csv", 60, func(_ int, c []string) {
		if c[3] == "" {
			x1, _ := strconv.ParseFloat(c[0], 64)
			c[3] = strconv.FormatFloat(10*math.Sin(2*x1)+5, 'f', 6, 64)
		}
	})
	model := filepath.Join(dir, "het.gpz")
	var out, errb bytes.Buffer
	if err := Main([]string{"train", "--csv", data, "--targets", "a,b", "--likelihood", "heteroscedastic", "--inducing", "8", "--iters", "30",
		"--save", model, "--quiet"}, &out, &errb); err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	pred := filepath.Join(dir, "pred.csv")
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatalf("predict: %v", err)
	}
	recs := readCSVFile(t, pred)
	if got := strings.Join(recs[0], ","); got != "mean_a,variance_a,std_a,mean_b,variance_b,std_b" || len(recs) != 61 {
		t.Errorf("header %q, %d rows", got, len(recs))
	}
}
