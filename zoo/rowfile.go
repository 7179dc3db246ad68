package zoo

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
)

// Defaults of TrainRows.
const (
	// DefaultSampleRows is the number of training rows the server reads to place the inducing inputs (and to
	// initialise the kernel); DefaultTestRows the number of test rows it scores.
	DefaultSampleRows = 20000
	DefaultTestRows   = 20000
)

// RowsConfig says how TrainRows reads a file.
type RowsConfig struct {
	// SampleRows and TestRows bound the training rows the server reads to build the model and the test rows
	// it scores, both the first of their kind in the file (0: DefaultSampleRows, DefaultTestRows).
	SampleRows, TestRows int
}

// TrainRows trains c.Family on the rows of src, a row file (.gpzr) or CSV that need not fit in one machine's
// memory, on a cluster (c.Cluster is required): the server makes one streaming pass for the standardisation of
// the training rows (cluster.NewFileData; a row is a test row by a hash of its index, datasets.IsTestRow, with
// c.TestFraction and c.Seed), reads the first SampleRows training rows to build the model (the inducing inputs,
// k-means on them) and the first TestRows test rows to score it, and the workers read only their shards. The
// model is scaled to every training row of the file. Regression only (a real-valued or count target).
func TrainRows(src datasets.RowSource, c CustomConfig, rc RowsConfig) (*Custom, error) {
	if c.Cluster == nil {
		return nil, fmt.Errorf("%w: training on a file's rows needs workers (Cluster): one process would hold every row", ErrBadCustom)
	}
	if !ClusterFamily(c.Family) && c.Family != "" {
		return nil, fmt.Errorf("%w (family %s)", ErrNotRowSum, c.Family)
	}
	frac := c.TestFraction
	switch {
	case frac == 0:
		frac = 0.1
	case frac < 0:
		frac = 0
	}
	split := datasets.RowSplit{Seed: c.Seed, TestFrac: frac}
	fam, ok := gp.LookupLikelihood(c.Likelihood)
	if c.Likelihood == "" {
		fam, ok = gp.LookupLikelihood(defaultLikelihood(0))
	}
	if !ok {
		return nil, fmt.Errorf("%w: unknown likelihood %q", ErrBadCustom, c.Likelihood)
	}
	if fam.Classes {
		return nil, fmt.Errorf("%w: likelihood %s: training on a file's rows is for regression", ErrBadCustom, fam.Name)
	}
	f, _, err := cluster.NewFileData(src, split, !fam.RawTargets)
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", src.Path, err)
	}
	sample, err := firstRows(src, f.Rows, split, false, cmp.Or(rc.SampleRows, DefaultSampleRows))
	if err != nil {
		return nil, err
	}
	if err := f.Std.ApplyInPlace(sample.X, sample.Y); err != nil {
		return nil, fmt.Errorf("zoo: %w", err)
	}
	var te *datasets.Dataset // original units, scored as a user's file would be
	if frac > 0 {
		if te, err = firstRows(src, f.Rows, split, true, cmp.Or(rc.TestRows, DefaultTestRows)); err != nil && !errors.Is(err, datasets.ErrEmpty) {
			return nil, err
		}
	}
	name := filepath.Base(src.Path)
	sample.Name = name
	if c, err = c.withDefaults(sample); err != nil {
		return nil, err
	}
	c.rows = f.Train
	c.Cluster.Data = cluster.DataRef{File: f}
	if c.Cluster.OnData != nil {
		c.Cluster.OnData(src.Path)
	}
	res := &Result{Entry: "custom/" + c.Family, Dataset: name, Model: c.Family, Seed: c.Seed, NTrain: f.Train,
		NTest: te.N(), DataSource: src.Path, Build: ops.Build, BLAS: ops.BLAS(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	meta := map[string]string{"data": name, "rows": fmt.Sprint(f.Rows), "sample_rows": fmt.Sprint(sample.N())}
	if len(sample.FeatureNames) > 0 {
		names, _ := json.Marshal(sample.FeatureNames)
		meta["features"] = string(names)
	}
	return fit(sample, te, f.Std, c, rand.NewPCG(c.Seed, 0xc5f), res, meta)
}

// firstRows reads the first n rows of src that are test rows (test) or training rows (!test) by split, of the
// file's rows rows: only the rows up to the last one taken.
func firstRows(src datasets.RowSource, rows int, split datasets.RowSplit, test bool, n int) (*datasets.Dataset, error) {
	hi, k := 0, 0
	for ; hi < rows && k < n; hi++ {
		if split.IsTest(hi) == test {
			k++
		}
	}
	if k == 0 {
		return nil, fmt.Errorf("zoo: %s: no rows of that kind: %w", src.Path, datasets.ErrEmpty)
	}
	x, y, _, err := datasets.ReadShard(src, 0, hi, func(r int) bool { return split.IsTest(r) == test })
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", src.Path, err)
	}
	inputs, _, err := src.Columns()
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", src.Path, err)
	}
	return &datasets.Dataset{X: x, Y: y, FeatureNames: inputs}, nil
}
