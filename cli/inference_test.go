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
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/gp/modelfile"
)

// TestTrainInference: `gpzoo train --model gpr --likelihood L --inference laplace|ep` fits an exact GP with a
// non-Gaussian likelihood (gp/approx), saves it, and `gpzoo predict` answers from the model file: class
// probabilities for the Bernoulli likelihoods (most training labels predicted right), means and variances
// otherwise; the model file names the inference. Without --inference a classifier takes EP, counts Laplace.
func TestTrainInference(t *testing.T) {
	for _, c := range []struct {
		lik, inference, want string // want: the inference the model file records
	}{
		{"bernoulli", "laplace", "laplace"}, {"bernoulli-logit", "ep", "ep"}, {"bernoulli", "", "ep"},
		{"poisson", "ep", "ep"}, {"poisson", "", "laplace"}, {"studentt", "laplace", "laplace"},
	} {
		t.Run(c.lik+"/"+c.inference, func(t *testing.T) {
			fam, _ := gp.LookupLikelihood(c.lik)
			dir := t.TempDir()
			content, _ := familyCSV(t, fam, 50)
			data, model, pred := filepath.Join(dir, "data.csv"), filepath.Join(dir, "m.gpz"), filepath.Join(dir, "pred.csv")
			if err := os.WriteFile(data, content, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"train", "--csv", data, "--target", "y", "--model", "gpr", "--likelihood", c.lik, "--iters", "15",
				"--restarts", "2", "--save", model, "--quiet"}
			if c.inference != "" {
				args = append(args, "--inference", c.inference)
			}
			var out, errb bytes.Buffer
			if err := Main(args, &out, &errb); err != nil {
				t.Fatalf("train: %v\n%s%s", err, out.String(), errb.String())
			}
			f, err := modelfile.LoadFile(model, gp.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m, ok := f.Model.(*approx.GP)
			if !ok || string(m.Inference) != c.want || f.Meta["inference"] != c.want {
				t.Fatalf("model file: a %T with inference %v (meta %q), want an approx.GP with %s", f.Model, m.Inference, f.Meta["inference"], c.want)
			}
			if !strings.Contains(out.String(), "L-BFGS starts") {
				t.Errorf("the summary does not describe the restarts:\n%s", out.String())
			}
			if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
				t.Fatalf("predict: %v\n%s", err, errb.String())
			}
			recs := readCSVFile(t, pred)
			want := []string{"mean", "variance", "std"}
			if fam.Classes {
				want = []string{"p_0", "p_1", "label"}
			}
			if len(recs) != 51 || !slices.Equal(recs[0], want) {
				t.Fatalf("prediction CSV: %d rows, header %v (want %v)", len(recs), recs[0], want)
			}
			in := readCSVFile(t, data)
			right := 0
			for i, row := range recs[1:] {
				for j, s := range row {
					if v, err := strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("prediction row %d, column %s: %q", i+1, recs[0][j], s)
					}
				}
				if fam.Classes && row[2] == in[i+1][2] {
					right++
				}
			}
			if fam.Classes && right < 35 { // 70% of the training labels (chance: about half)
				t.Errorf("%d of 50 training labels predicted", right)
			}
		})
	}
}

// TestTrainInferenceRefused: --inference and --restarts where they cannot apply are refused before the data are
// read (a missing file is not reported), naming the flag; a Gaussian likelihood refuses an approximation.
func TestTrainInferenceRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.csv")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "svgp", "--inference", "ep"}, "--inference"},
		{[]string{"--model", "gpr", "--inference", "vb"}, "--inference"},
		{[]string{"--model", "gpr", "--restarts", "0"}, "--restarts"},
		{[]string{"--model", "sgpr", "--restarts", "2"}, "--restarts"},
	} {
		var out, errb bytes.Buffer
		err := Main(append([]string{"train", "--csv", missing, "--target", "y"}, c.args...), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "none.csv") {
			t.Errorf("%v: %v (want %s named before the missing file)", c.args, err, c.want)
		}
	}
	dir := t.TempDir()
	fam, _ := gp.LookupLikelihood("gaussian")
	content, _ := familyCSV(t, fam, 20)
	data := filepath.Join(dir, "data.csv")
	if err := os.WriteFile(data, content, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := Main([]string{"train", "--csv", data, "--target", "y", "--model", "gpr", "--inference", "laplace", "--save", filepath.Join(dir, "m.gpz"), "--quiet"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "gaussian") {
		t.Errorf("gpr --inference laplace with the gaussian likelihood: %v", err)
	}
}
