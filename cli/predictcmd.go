package cli

import (
	"bufio"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"gonum.org/v1/gonum/mat"
)

const predictUsage = `gpzoo predict: predict with a saved model.

Usage:
  gpzoo predict --model FILE.gpz --input X.csv [--out Y.csv] [--samples S] [--seed N]

X.csv has a header row. A model trained by gpzoo train reads its feature columns by name (in any order; other
columns are ignored); a model saved by gpzoo run --save reads every column, in order. Y.csv (default: standard
output) has one row per input row: mean, variance and standard deviation of the target (columns mean, variance,
std; mean_j, variance_j, std_j for several outputs) in the target's original units (std stays finite where the
variance of a target beyond about 1e154 overflows), or, for a classifier, the probability of every class (p_LABEL)
and the most probable label (label).

Flags:
  --model FILE.gpz  the model file (required)
  --input X.csv     the inputs (required)
  --out Y.csv       the predictions (default: standard output)
  --samples S       deep GPs: samples propagated per input (default: the model's test samples, or 100)
  --seed N          seed of deep-GP and Monte-Carlo prediction (default 1)
`

func predictCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, predictUsage) }
	model := fs.String("model", "", "model file")
	input := fs.String("input", "", "input CSV")
	out := fs.String("out", "", "output CSV")
	samples := fs.Int("samples", 0, "deep-GP samples")
	seed := fs.Uint64("seed", 1, "seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("predict: unexpected arguments %q (see gpzoo predict --help)", fs.Args())
	}
	if *model == "" || *input == "" {
		return errors.New("predict: --model FILE.gpz and --input X.csv are required (see gpzoo predict --help)")
	}
	if *samples < 0 {
		return fmt.Errorf("predict: --samples %d: want a count of at least 1 (0: the model's default)", *samples)
	}
	if *out != "" && (sameFile(*out, *input) || sameFile(*out, *model)) {
		return fmt.Errorf("predict: --out %s is the model or the input file: choose another output file", *out)
	}
	if *out != "" {
		if err := modelfile.CheckSavePath(*out); err != nil {
			return fmt.Errorf("predict: --out: %w", err)
		}
	}
	f, err := modelfile.LoadFile(*model, gp.BuildOptions{Rand: rand.New(rand.NewPCG(*seed, 0xb1d))})
	if err != nil {
		return err
	}
	x, err := loadModelInputs(f, *input)
	if err != nil {
		return err
	}
	p, err := f.Predict(x, modelfile.PredictOptions{Samples: *samples, Seed: *seed})
	if err != nil {
		return err
	}
	w := stdout
	var file *os.File
	if *out != "" {
		if file, err = os.Create(*out); err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	bw := bufio.NewWriter(w)
	if err := writePredictions(bw, f, p); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
		n, _ := x.Dims()
		fmt.Fprintf(stdout, "gpzoo predict: %d rows → %s\n", n, *out)
	}
	return nil
}

// loadModelInputs reads the model's input columns from the CSV file path by name (in any order; other columns
// ignored). A model whose inputs have only the generated names x0 … x{D−1} (saved from data without column
// names) reads every column in order when the file lacks those names.
func loadModelInputs(f *modelfile.File, path string) (*mat.Dense, error) {
	names := f.InputNames()
	x, err := datasets.LoadInputs(path, names)
	if err != nil && slices.Equal(names, generatedNames(len(names))) {
		if x, err2 := datasets.LoadInputs(path, nil); err2 == nil {
			return x, nil
		}
	}
	return x, err
}

// generatedNames returns x0 … x{d−1}, the names of inputs saved without column names.
func generatedNames(d int) []string {
	names := make([]string, d)
	for i := range names {
		names[i] = "x" + strconv.Itoa(i)
	}
	return names
}

// writePredictions writes p as CSV: means and variances, or the class probabilities (p_LABEL, in the model's
// label values) and the most probable label.
func writePredictions(w io.Writer, f *modelfile.File, p *modelfile.Prediction) error {
	cw := csv.NewWriter(w)
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if p.Probs != nil {
		n, k := p.Probs.Dims()
		vals, err := f.ClassValues(k)
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		header := make([]string, 0, k+1)
		for _, v := range vals {
			header = append(header, "p_"+ff(v))
		}
		if err := cw.Write(append(header, "label")); err != nil {
			return err
		}
		row := make([]string, k+1)
		for i := 0; i < n; i++ {
			for c, v := range p.Probs.RawRowView(i) {
				row[c] = ff(v)
			}
			row[k] = ff(p.Labels[i])
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	} else {
		if err := writeMeanVar(cw, p.Mean, p.Var, p.Std, ff); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeMeanVar(cw *csv.Writer, mean, variance, sd *mat.Dense, ff func(float64) string) error {
	n, q := mean.Dims()
	header := []string{"mean", "variance", "std"}
	if q > 1 {
		header = header[:0]
		for j := 0; j < q; j++ {
			header = append(header, fmt.Sprintf("mean_%d", j), fmt.Sprintf("variance_%d", j), fmt.Sprintf("std_%d", j))
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, 3*q)
	for i := 0; i < n; i++ {
		for j := 0; j < q; j++ {
			row[3*j], row[3*j+1], row[3*j+2] = ff(mean.At(i, j)), ff(variance.At(i, j)), ff(sd.At(i, j))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	return nil
}
