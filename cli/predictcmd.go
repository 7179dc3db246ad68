package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
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
	features, err := modelFeatures(f)
	if err != nil {
		return err
	}
	x, err := datasets.LoadInputs(*input, features)
	if err != nil {
		return err
	}
	s := *samples
	if s == 0 {
		s, _ = strconv.Atoi(f.Meta["test_samples"])
	}
	p, err := f.Predict(x, gp.PredictOptions{Samples: s, Rand: rand.New(rand.NewPCG(*seed, 0x7e57))})
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
	if err := writePredictions(bw, p, f.Meta["labels"]); err != nil {
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

// modelFeatures returns the feature columns the model reads: the names saved by gpzoo train, else nil (every
// column of the input, in order).
func modelFeatures(f *modelfile.File) ([]string, error) {
	s := f.Meta["features"]
	if s == "" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(s), &names); err != nil {
		return nil, fmt.Errorf("predict: the model's feature names: %w", err)
	}
	return names, nil
}

// writePredictions writes p as CSV: means and variances, or class probabilities and the most probable label
// (labels: the JSON list of the original label values, "" for 0..K−1).
func writePredictions(w io.Writer, p *modelfile.Prediction, labels string) error {
	cw := csv.NewWriter(w)
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if p.Probs != nil {
		n, k := p.Probs.Dims()
		vals := make([]float64, k)
		for c := range vals {
			vals[c] = float64(c)
		}
		if labels != "" {
			if err := json.Unmarshal([]byte(labels), &vals); err != nil || len(vals) != k {
				return fmt.Errorf("predict: the model's labels %q do not match its %d classes", labels, k)
			}
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
			pr := p.Probs.RawRowView(i)
			for c, v := range pr {
				row[c] = ff(v)
			}
			row[k] = ff(vals[slices.Index(pr, slices.Max(pr))])
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
