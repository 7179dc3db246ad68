package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"

	"github.com/gpzoo/gpzoo/client"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
	"github.com/gpzoo/gpzoo/serve"
	"gonum.org/v1/gonum/mat"
)

const predictUsage = `gpzoo predict: predict with a saved model, or with a model gpzoo serve serves.

Usage:
  gpzoo predict --model FILE.gpz --input X.csv [--out Y.csv] [--samples S] [--seed N]
  gpzoo predict --url URL --input X.csv [--out Y.csv] [--token-file F] [--ca FILE] [--seed N]

X.csv has a header row. A model trained by gpzoo train reads its feature columns by name (in any order; other
columns are ignored); a model saved by gpzoo run --save reads every column, in order. Y.csv (default: standard
output) has one row per input row: mean, variance and standard deviation of the target (columns mean, variance,
std; mean_T, variance_T, std_T for each target T of a model trained with --targets, mean_j, ... for other
models of several outputs) in the target's original units (std stays finite where the
variance of a target beyond about 1e154 overflows), or, for a classifier, the probability of every class (p_LABEL)
and the most probable label (label).

With --url the model is a served one: URL is https://HOST:PORT/v2/models/NAME[/versions/VERSION] (REST; http://
on loopback) or grpcs://HOST:PORT/v2/models/NAME[/versions/VERSION] (gRPC; grpc:// on loopback). The input
names come from the model's metadata, the rows go in requests of at most ` + "1000" + ` rows, and Y.csv has the same
columns and numbers as a local prediction with the model file. The bearer token is read from --token-file, else
$` + EnvServeToken + ` (never from the command line, which other users of the machine can read).

Flags:
  --model FILE.gpz  the model file
  --url URL         the served model, instead of --model
  --input X.csv     the inputs (required)
  --out Y.csv       the predictions (default: standard output)
  --samples S       deep GPs: samples propagated per input (default: the model's test samples, or 100; local only:
                    a server uses the model's default)
  --seed N          seed of deep-GP and Monte-Carlo prediction (default 1)
  --token-file F    with --url: the file holding the server's bearer token (default $` + EnvServeToken + `)
  --ca FILE         with --url: the PEM certificate(s) of the authority to trust for https:// or grpcs://
`

func predictCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, predictUsage) }
	model := fs.String("model", "", "model file")
	url := fs.String("url", "", "served model URL")
	input := fs.String("input", "", "input CSV")
	out := fs.String("out", "", "output CSV")
	samples := fs.Int("samples", 0, "deep-GP samples")
	seed := fs.Uint64("seed", 1, "seed")
	tokenFile := fs.String("token-file", "", "token file")
	ca := fs.String("ca", "", "CA certificate file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("predict: unexpected arguments %q (see gpzoo predict --help)", fs.Args())
	}
	if (*model == "") == (*url == "") || *input == "" {
		return errors.New("predict: --model FILE.gpz (or --url URL, not both) and --input X.csv are required (see gpzoo predict --help)")
	}
	if *samples < 0 {
		return fmt.Errorf("predict: --samples %d: want a count of at least 1 (0: the model's default)", *samples)
	}
	if *url == "" && (*tokenFile != "" || *ca != "") {
		return errors.New("predict: --token-file and --ca go with --url")
	}
	if *url != "" && *samples != 0 {
		return errors.New("predict: --samples is for a local model: a server predicts with the model's default samples")
	}
	if *url != "" && *seed == 0 {
		return errors.New("predict: --seed 0 cannot be sent to a server (0 asks for its default): choose another seed")
	}
	if *out != "" && (sameFile(*out, *input) || (*model != "" && sameFile(*out, *model))) {
		return fmt.Errorf("predict: --out %s is the model or the input file: choose another output file", *out)
	}
	if *out != "" {
		if err := modelfile.CheckSavePath(*out); err != nil {
			return fmt.Errorf("predict: --out: %w", err)
		}
	}
	var tab *predictionTable
	var err error
	if *url != "" {
		tab, err = predictRemote(context.Background(), *url, *tokenFile, *ca, *input, *seed)
	} else {
		tab, err = predictLocal(*model, *input, *samples, *seed)
	}
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
	if err := tab.write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "gpzoo predict: %d rows → %s\n", tab.rows(), *out)
	}
	return nil
}

// predictLocal predicts the rows of the CSV file input with the model file.
func predictLocal(model, input string, samples int, seed uint64) (*predictionTable, error) {
	f, err := modelfile.LoadFile(model, gp.BuildOptions{Rand: rand.New(rand.NewPCG(seed, 0xb1d))})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := loadModelInputs(f, input)
	if err != nil {
		return nil, err
	}
	p, err := f.Predict(x, modelfile.PredictOptions{Samples: samples, Seed: seed})
	if err != nil {
		return nil, err
	}
	tab := &predictionTable{mean: p.Mean, variance: p.Var, std: p.Std, probs: p.Probs, labels: p.Labels}
	if f.Meta["targets"] != "" { // trained with --targets: columns mean_<target>, ...
		tab.targets = f.OutputNames()
	}
	if p.Probs != nil {
		_, k := p.Probs.Dims()
		if tab.classes, err = f.ClassValues(k); err != nil {
			return nil, fmt.Errorf("predict: %w", err)
		}
	}
	return tab, nil
}

// loadModelInputs reads the model's input columns from the CSV file path by name (in any order; other columns
// ignored). A model whose inputs have only the generated names x0 … x{D−1} (saved from data without column
// names) reads every column in order when the file lacks those names.
func loadModelInputs(f *modelfile.File, path string) (*mat.Dense, error) {
	return loadNamedInputs(f.InputNames(), path)
}

// loadNamedInputs reads the columns names of the CSV file path (in any order; other columns ignored); the
// generated names x0 … x{D−1} read every column in order when the file lacks those names.
func loadNamedInputs(names []string, path string) (*mat.Dense, error) {
	x, err := datasets.LoadInputs(path, names)
	if err != nil && slices.Equal(names, modelfile.GeneratedInputNames(len(names))) {
		if x, err2 := datasets.LoadInputs(path, nil); err2 == nil {
			return x, nil
		}
	}
	return x, err
}

// predictionTable is what gpzoo predict writes, from a model file or a server: means, variances and standard
// deviations, or a classifier's probabilities, its label values and the most probable labels.
type predictionTable struct {
	mean, variance, std *mat.Dense
	probs               *mat.Dense
	classes, labels     []float64
	targets             []string // the targets' names, for columns mean_<target> (nil: mean_j)
}

func (t *predictionTable) rows() int {
	m := t.mean
	if t.probs != nil {
		m = t.probs
	}
	if m == nil {
		return 0
	}
	n, _ := m.Dims()
	return n
}

// write writes the table as CSV: means and variances, or the class probabilities (p_LABEL, in the model's
// label values) and the most probable label.
func (t *predictionTable) write(w io.Writer) error {
	cw := csv.NewWriter(w)
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if t.probs != nil {
		n, k := t.probs.Dims()
		if len(t.classes) != k || len(t.labels) != n {
			return fmt.Errorf("predict: %d label values and %d labels for %d rows of %d probabilities", len(t.classes), len(t.labels), n, k)
		}
		header := make([]string, 0, k+1)
		for _, v := range t.classes {
			header = append(header, "p_"+ff(v))
		}
		if err := cw.Write(append(header, "label")); err != nil {
			return err
		}
		row := make([]string, k+1)
		for i := 0; i < n; i++ {
			for c, v := range t.probs.RawRowView(i) {
				row[c] = ff(v)
			}
			row[k] = ff(t.labels[i])
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	} else {
		if err := writeMeanVar(cw, t.mean, t.variance, t.std, t.targets, ff); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeMeanVar(cw *csv.Writer, mean, variance, sd *mat.Dense, targets []string, ff func(float64) string) error {
	n, q := mean.Dims()
	header := []string{"mean", "variance", "std"}
	if q > 1 {
		header = header[:0]
		for j := 0; j < q; j++ {
			suffix := strconv.Itoa(j)
			if len(targets) == q {
				suffix = targets[j]
			}
			header = append(header, "mean_"+suffix, "variance_"+suffix, "std_"+suffix)
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

// remoteChunk is the most rows predict --url sends in one request.
const remoteChunk = 1000

// predictRemote predicts the rows of the CSV file input with the served model at rawURL: its input names from
// the model's metadata, the rows in requests of at most remoteChunk rows (each with its first row's index as
// row_offset, so that Monte-Carlo rows draw the numbers of one request; every request after the first to the
// version that answered the first), the outputs gpzoo predict writes (mean, variance and std, or
// probabilities, label and the label values).
func predictRemote(ctx context.Context, rawURL, tokenFile, ca, input string, seed uint64) (*predictionTable, error) {
	token, err := readServeToken(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	target, model, version, err := client.ParseModelURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("predict: --url: %w", err)
	}
	c, err := client.New(target, client.Options{Token: token, CAFile: ca})
	if err != nil {
		return nil, fmt.Errorf("predict: --url: %w", err)
	}
	defer c.Close()
	md, err := c.Metadata(ctx, model, version)
	if err != nil {
		return nil, fmt.Errorf("predict: the metadata of %s: %w", rawURL, err)
	}
	names, d, err := remoteInputs(md)
	if err != nil {
		return nil, fmt.Errorf("predict: %s: %w", rawURL, err)
	}
	x, err := loadNamedInputs(names, input)
	if err != nil {
		return nil, err
	}
	n, cols := x.Dims()
	if cols != d {
		return nil, fmt.Errorf("predict: %s has %d input columns, the model takes %d", input, cols, d)
	}
	classify := slices.ContainsFunc(md.Outputs, func(t oip.TensorMetadata) bool { return t.Name == client.OutProbabilities })
	outputs := []string{client.OutMean, client.OutVariance, client.OutStd}
	if classify {
		outputs = []string{client.OutProbabilities, client.OutLabel, client.OutClasses}
	}
	var parts []*client.Result
	for lo := 0; lo < n; lo += remoteChunk {
		chunk := x.Slice(lo, min(lo+remoteChunk, n), 0, d).(*mat.Dense)
		r, err := c.Infer(ctx, model, chunk, client.Params{Version: version, Seed: seed, RowOffset: lo, Outputs: outputs})
		if err != nil {
			return nil, fmt.Errorf("predict: rows %d–%d at %s: %w", lo+1, min(lo+remoteChunk, n), rawURL, err)
		}
		if version == "" {
			version = r.ModelVersion
		}
		parts = append(parts, r)
	}
	return remoteTable(parts, classify)
}

// remoteInputs reads a served model's input names from its metadata: the one-dimensional ([-1]) input tensors,
// one per feature, in order; the width D from the [-1, D] tensor. A model without per-feature tensors (another
// server's) gives no names (every column of the CSV file, in order).
func remoteInputs(md *oip.ModelMetadata) ([]string, int, error) {
	var names []string
	d := -1
	for _, t := range md.Inputs {
		switch len(t.Shape) {
		case 1:
			names = append(names, t.Name)
		case 2:
			if d < 0 && t.Shape[1] > 0 {
				d = int(t.Shape[1])
			}
		}
	}
	switch {
	case d < 0 && len(names) == 0:
		return nil, 0, errors.New("the model's metadata names no [-1, D] or [-1] input tensor")
	case d < 0:
		d = len(names)
	case len(names) > 0 && len(names) != d:
		return nil, 0, fmt.Errorf("the model's metadata names %d features for %d inputs", len(names), d)
	}
	return names, d, nil
}

// remoteTable joins the answers of the chunks of rows.
func remoteTable(parts []*client.Result, classify bool) (*predictionTable, error) {
	stack := func(name string, get func(r *client.Result) *mat.Dense) (*mat.Dense, error) {
		var all *mat.Dense
		for _, r := range parts {
			m := get(r)
			if m == nil {
				return nil, fmt.Errorf("predict: the server's answer has no %s", name)
			}
			if all == nil {
				all = mat.DenseCopyOf(m)
				continue
			}
			if _, q := m.Dims(); q != all.RawMatrix().Cols {
				return nil, fmt.Errorf("predict: the server's %s changed width between requests", name)
			}
			var s mat.Dense
			s.Stack(all, m)
			all = &s
		}
		return all, nil
	}
	tab := &predictionTable{}
	var err error
	if classify {
		if tab.probs, err = stack(client.OutProbabilities, func(r *client.Result) *mat.Dense { return r.Probs }); err != nil {
			return nil, err
		}
		for _, r := range parts {
			if tab.classes == nil {
				tab.classes = r.Classes
			}
			if len(r.Classes) == 0 || !slices.Equal(r.Classes, tab.classes) {
				return nil, fmt.Errorf("predict: the server's answers give no label values or different ones (%v, %v)", tab.classes, r.Classes)
			}
			tab.labels = append(tab.labels, r.Labels...)
		}
		return tab, nil
	}
	if tab.mean, err = stack(client.OutMean, func(r *client.Result) *mat.Dense { return r.Mean }); err != nil {
		return nil, err
	}
	if t := parts[0].Outputs[client.OutMean]; t != nil { // a model trained with --targets names its columns
		if s, ok := t.Parameters[serve.ParamTargets].(string); ok {
			var names []string
			if json.Unmarshal([]byte(s), &names) == nil {
				tab.targets = names
			}
		}
	}
	if tab.variance, err = stack(client.OutVariance, func(r *client.Result) *mat.Dense { return r.Var }); err != nil {
		return nil, err
	}
	if tab.std, err = stack(client.OutStd, func(r *client.Result) *mat.Dense { return r.Std }); err != nil {
		return nil, err
	}
	return tab, nil
}
