package cli

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
)

// targetGenerators make the target of a test table from its inputs, tried in order for a likelihood family that
// is not a classifier: the first whose every value the family's CheckTarget accepts is used.
var targetGenerators = []struct {
	name string
	y    func(x1, x2 float64, rng *rand.Rand) float64
}{
	{"reals", func(x1, x2 float64, rng *rand.Rand) float64 { return math.Sin(2*x1) + 0.5*x2 + 0.1*rng.NormFloat64() }},
	{"counts", func(x1, x2 float64, rng *rand.Rand) float64 { return poissonDraw(math.Exp(1+math.Sin(x1)+0.3*x2), rng) }},
	{"positive reals", func(x1, x2 float64, rng *rand.Rand) float64 {
		return math.Exp(math.Sin(x1) + 0.3*x2 + 0.1*rng.NormFloat64())
	}},
}

// poissonDraw returns a Poisson(rate) count (Knuth's product of uniforms; small rates only).
func poissonDraw(rate float64, rng *rand.Rand) float64 {
	limit, p, k := math.Exp(-rate), 1.0, 0.0
	for {
		if p *= rng.Float64(); p < limit {
			return k
		}
		k++
	}
}

// familyCSV returns a small table (columns x1, x2, y) suited to fam: class labels 0/1 for a classifier, else the
// first of targetGenerators whose values fam.CheckTarget accepts; and what the target holds.
func familyCSV(t *testing.T, fam gp.LikelihoodFamily, n int) ([]byte, string) {
	t.Helper()
	gens := targetGenerators
	if fam.Classes {
		gens = nil
	}
	for _, g := range gens {
		if b, ok := tableOf(n, g.y, fam.CheckTarget); ok {
			return b, g.name
		}
	}
	if fam.Classes {
		b, _ := tableOf(n, func(x1, x2 float64, _ *rand.Rand) float64 {
			if x1*x2 > 0 {
				return 1
			}
			return 0
		}, nil)
		return b, "class labels"
	}
	t.Fatalf("likelihood %s accepts none of the test's targets (reals, counts, positive reals): add a generator to targetGenerators", fam.Name)
	return nil, ""
}

// tableOf returns the CSV of n rows of x1, x2 ~ U(-2, 2) and y(x1, x2), and whether check (nil: none) accepts every y.
func tableOf(n int, y func(x1, x2 float64, rng *rand.Rand) float64, check func(float64) error) ([]byte, bool) {
	rng := rand.New(rand.NewPCG(21, 22))
	var b bytes.Buffer
	b.WriteString("x1,x2,y\n")
	for i := 0; i < n; i++ {
		x1, x2 := 4*rng.Float64()-2, 4*rng.Float64()-2
		v := y(x1, x2, rng)
		if check != nil && check(v) != nil {
			return nil, false
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%s\n", x1, x2, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return b.Bytes(), true
}

// TestTrainEveryLikelihood: every registered likelihood family is accepted by train's --likelihood, trains on a
// small CSV suited to it, is saved, and predict answers from the model file with the header of its kind. A newly
// registered likelihood is covered without changing the test.
func TestTrainEveryLikelihood(t *testing.T) {
	fams := gp.LikelihoodFamilies()
	for _, want := range []string{"gaussian", "studentt", "bernoulli", "poisson", "robustmax", "softmax"} {
		if !slices.ContainsFunc(fams, func(f gp.LikelihoodFamily) bool { return f.Name == want }) {
			t.Errorf("the built-in likelihood %s is not registered", want)
		}
	}
	const n = 60
	for _, fam := range fams {
		t.Run(fam.Name, func(t *testing.T) {
			dir := t.TempDir()
			content, what := familyCSV(t, fam, n)
			if fam.Name == "poisson" && what != "counts" {
				t.Fatalf("poisson trains on %s, want counts", what)
			}
			data, model, pred := filepath.Join(dir, "data.csv"), filepath.Join(dir, "m.gpz"), filepath.Join(dir, "pred.csv")
			if err := os.WriteFile(data, content, 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if err := Main([]string{"train", "--csv", data, "--target", "y", "--likelihood", fam.Name, "--iters", "3",
				"--inducing", "10", "--save", model, "--quiet"}, &out, &errb); err != nil {
				t.Fatalf("train --likelihood %s on %s: %v\n%s%s", fam.Name, what, err, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "saved the model to "+model) {
				t.Fatalf("train's output does not name the model file:\n%s", out.String())
			}
			if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
				t.Fatalf("predict: %v\n%s", err, errb.String())
			}
			recs := readCSVFile(t, pred)
			want := []string{"mean", "variance", "std"}
			if fam.Classes {
				want = []string{"p_0", "p_1", "label"}
			}
			if len(recs) != n+1 || !slices.Equal(recs[0], want) {
				t.Fatalf("prediction CSV: %d rows (want %d), header %v (want %v)", len(recs), n+1, recs[0], want)
			}
			for i, row := range recs[1:] {
				for j, s := range row {
					if v, err := strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("prediction row %d, column %s: %q", i+1, recs[0][j], s)
					}
				}
			}
		})
	}
}

// TestTrainHelpListsLikelihoods: train's help lists every registered likelihood with its Doc line, and an unknown
// --likelihood is refused before reading the data, naming every registered one.
func TestTrainHelpListsLikelihoods(t *testing.T) {
	var out, errb bytes.Buffer
	if err := Main([]string{"train", "--help"}, &out, &errb); err != nil {
		t.Fatalf("train --help: %v, want success", err)
	}
	help := out.String()
	for _, f := range gp.LikelihoodFamilies() {
		if !strings.Contains(help, "  "+f.Name+" ") || !strings.Contains(help, f.Doc) {
			t.Errorf("train --help does not list %s with its Doc %q", f.Name, f.Doc)
		}
	}
	err := Main([]string{"train", "--csv", filepath.Join(t.TempDir(), "none.csv"), "--target", "y", "--likelihood", "nope"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "--likelihood") || strings.Contains(err.Error(), "none.csv") {
		t.Fatalf("unknown likelihood: %v (want the flag named before the missing file)", err)
	}
	for _, f := range gp.LikelihoodFamilies() {
		if !strings.Contains(err.Error(), f.Name) {
			t.Errorf("the unknown-likelihood error does not name %s: %v", f.Name, err)
		}
	}
}

// TestPoissonCounts: a Poisson model is trained and predicts in counts: the model file's standardizer leaves the
// target as it is (mean 0, deviation 1), and the predicted means follow the counts' scale.
func TestPoissonCounts(t *testing.T) {
	dir := t.TempDir()
	data, model, pred := filepath.Join(dir, "counts.csv"), filepath.Join(dir, "c.gpz"), filepath.Join(dir, "pred.csv")
	// Counts around 20·e^{±0.5}: far from standardised values, so a standardised target would show.
	b, ok := tableOf(200, func(x1, x2 float64, rng *rand.Rand) float64 { return poissonDraw(20*math.Exp(0.5*math.Sin(x1)), rng) }, nil)
	if !ok {
		t.Fatal("table")
	}
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := Main([]string{"train", "--csv", data, "--target", "y", "--likelihood", "poisson", "--iters", "400", "--lr", "0.05",
		"--inducing", "15", "--save", model, "--quiet"}, &out, &errb); err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "poisson: not standardised") {
		t.Errorf("train's first line does not say the counts are not standardised:\n%s", out.String())
	}
	f, err := modelfile.LoadFile(model, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Standardizer; s == nil || !slices.Equal(s.YMean, []float64{0}) || !slices.Equal(s.YStd, []float64{1}) || f.Meta["likelihood"] != "poisson" {
		t.Fatalf("model file: standardizer %+v, likelihood %q; want the target kept in counts (mean 0, deviation 1)", f.Standardizer, f.Meta["likelihood"])
	}
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	recs, in := readCSVFile(t, pred), readCSVFile(t, data)
	sum, sumY := 0.0, 0.0
	for i, row := range recs[1:] {
		m, _ := strconv.ParseFloat(row[0], 64)
		v, _ := strconv.ParseFloat(row[1], 64)
		y, _ := strconv.ParseFloat(in[i+1][2], 64)
		if !(v >= m) { // a Poisson predictive variance is at least its mean
			t.Fatalf("row %d: variance %v below the mean %v", i+1, v, m)
		}
		sum, sumY = sum+m, sumY+y
	}
	if r := sum / sumY; !(r > 0.8 && r < 1.25) {
		t.Errorf("mean prediction %v, mean count %v: not in counts", sum/200, sumY/200)
	}
}
