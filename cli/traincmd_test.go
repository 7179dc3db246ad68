package cli

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
)

// writeCSV writes a table with a header: columns x1, x2 (numeric), colour (text), y (a smooth function of x1, x2
// plus noise) and class (0/1 by the sign of x1·x2, relabelled 3/7).
func writeCSV(t *testing.T, dir string, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("x1,x2,colour,y,class\n")
	for i := 0; i < n; i++ {
		x1, x2 := 4*rng.Float64()-2, 4*rng.Float64()-2
		y := math.Sin(2*x1) + 0.5*x2 + 0.05*rng.NormFloat64()
		class := 3
		if x1*x2 > 0 {
			class = 7
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%s,%.6f,%d\n", x1, x2, []string{"red", "blue"}[i%2], y, class)
	}
	path := filepath.Join(dir, "table.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestTrainCSVRegressionAndPredict(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 300)
	model := filepath.Join(dir, "reg.gpz")
	var out, errb bytes.Buffer
	err := Main([]string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--model", "svgp",
		"--inducing", "20", "--iters", "300", "--batch", "100", "--lr", "0.05", "--save", model, "--quiet"}, &out, &errb)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "test RMSE") || !strings.Contains(out.String(), model) {
		t.Fatalf("train output lacks the metrics or the model file:\n%s", out.String())
	}
	// Predict on the training file itself (extra columns colour, y, class are ignored): the predictions must
	// follow y.
	pred := filepath.Join(dir, "pred.csv")
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatalf("predict: %v", err)
	}
	recs := readCSVFile(t, pred)
	in := readCSVFile(t, data)
	if len(recs) != len(in) || recs[0][0] != "mean" || recs[0][1] != "variance" {
		t.Fatalf("prediction CSV: %d rows (want %d), header %v", len(recs), len(in), recs[0])
	}
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

func TestTrainCSVClassification(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 300)
	model := filepath.Join(dir, "cls.gpz")
	var out, errb bytes.Buffer
	err := Main([]string{"train", "--csv", data, "--target", "class", "--features", "x2,x1", "--classify",
		"--inducing", "20", "--iters", "200", "--batch", "100", "--lr", "0.05", "--save", model, "--quiet"}, &out, &errb)
	if err != nil {
		t.Fatalf("train: %v", err)
	}
	if !strings.Contains(out.String(), "test accuracy") {
		t.Fatalf("no accuracy in:\n%s", out.String())
	}
	pred := filepath.Join(dir, "pred.csv")
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatalf("predict: %v", err)
	}
	recs := readCSVFile(t, pred)
	if got := strings.Join(recs[0], ","); got != "p_3,p_7,label" {
		t.Fatalf("header %q, want p_3,p_7,label (the original labels)", got)
	}
	in := readCSVFile(t, data)
	right := 0
	for i := 1; i < len(recs); i++ {
		p3, _ := strconv.ParseFloat(recs[i][0], 64)
		p7, _ := strconv.ParseFloat(recs[i][1], 64)
		if math.Abs(p3+p7-1) > 1e-9 {
			t.Fatalf("row %d: probabilities sum to %v", i, p3+p7)
		}
		if recs[i][2] == in[i][4] {
			right++
		}
	}
	if acc := float64(right) / float64(len(recs)-1); acc < 0.8 {
		t.Fatalf("training accuracy %.3f < 0.8", acc)
	}
}

func TestTrainCSVRejectsCategoricalAndBadInput(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 50)
	var out, errb bytes.Buffer
	// Every column but y is a feature by default: colour is text.
	err := Main([]string{"train", "--csv", data, "--target", "y", "--iters", "2", "--quiet", "--save", filepath.Join(dir, "m.gpz")}, &out, &errb)
	if !errors.Is(err, datasets.ErrCategorical) || !strings.Contains(err.Error(), `"colour"`) {
		t.Fatalf("categorical column: got %v, want ErrCategorical naming colour", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "m.gpz")); statErr == nil {
		t.Fatal("a model file was written for a refused table")
	}
	bad := filepath.Join(dir, "ragged.csv")
	os.WriteFile(bad, []byte("a,b,y\n1,2,3\n4,5\n"), 0o644)
	if err := Main([]string{"train", "--csv", bad, "--target", "y", "--quiet"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("ragged CSV: got %v, want an error naming line 3", err)
	}
	if err := Main([]string{"train", "--csv", data, "--target", "nosuch", "--quiet"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("unknown target: got %v", err)
	}
	if err := Main([]string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--model", "nosuch", "--quiet"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "unknown family") {
		t.Fatalf("unknown family: got %v", err)
	}
	if err := Main([]string{"predict", "--model", data, "--input", data}, &out, &errb); err == nil || !strings.Contains(err.Error(), "not a gpzoo model file") {
		t.Fatalf("predict with a CSV as the model: got %v", err)
	}
}

// TestTrainCSVPlots trains on one input column with --plots: the training curves and the predictive plot are
// written; a classifier adds the reliability diagram.
func TestTrainCSVPlots(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 120)
	var out, errb bytes.Buffer
	pd := filepath.Join(dir, "plots")
	if err := Main([]string{"train", "--csv", data, "--target", "y", "--features", "x1", "--inducing", "10", "--iters", "20",
		"--save", filepath.Join(dir, "m.gpz"), "--plots", pd, "--quiet"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	cd := filepath.Join(dir, "plotsc")
	if err := Main([]string{"train", "--csv", data, "--target", "class", "--classify", "--features", "x1,x2", "--inducing", "10",
		"--iters", "20", "--save", filepath.Join(dir, "c.gpz"), "--plots", cd, "--quiet"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ECE = ") {
		t.Fatalf("no calibration error in:\n%s", out.String())
	}
	for _, f := range []string{"plots/objective-step.png", "plots/objective-time.svg", "plots/predictive.png", "plots/predictive.svg",
		"plotsc/reliability.png", "plotsc/objective-step.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 500 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
