package cluster

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"gonum.org/v1/gonum/mat"
)

// writeFileData writes n rows of a seeded synthetic set as a row file and as a CSV in dir.
func writeFileData(t *testing.T, dir string, n, d int) (bin, csvPath string, ds *datasets.Dataset) {
	t.Helper()
	ds, err := datasets.Synthetic(datasets.SynthConfig{Rows: n, Inputs: d, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n { // columns far from standard
		ds.X.Set(i, 0, 50+10*ds.X.At(i, 0))
		ds.Y.Set(i, 0, 3*ds.Y.At(i, 0)-7)
	}
	bin, csvPath = filepath.Join(dir, "d.gpzr"), filepath.Join(dir, "d.csv")
	var b bytes.Buffer
	if err := datasets.WriteRowFile(&b, ds.X, ds.Y, append(append([]string(nil), ds.FeatureNames...), "y")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := datasets.WriteTable(&b, ds, "y"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, csvPath, ds
}

// TestFileShardsAreTheStandardisedTrainingRows: the workers' shards of a file, read streaming, together hold
// every training row once with its global index, standardised as the in-memory training set is (relative
// 1e-12), the test rows nowhere; the workers' merged partial statistics equal the server's pass; the DataRef
// crosses the wire.
func TestFileShardsAreTheStandardisedTrainingRows(t *testing.T) {
	const n, d, k = 3001, 3, 4
	bin, csvPath, ds := writeFileData(t, t.TempDir(), n, d)
	split := datasets.RowSplit{Seed: 8, TestFrac: 0.15}
	var train []int
	for r := range n {
		if !split.IsTest(r) {
			train = append(train, r)
		}
	}
	tr, err := ds.Subset(train)
	if err != nil {
		t.Fatal(err)
	}
	std, err := datasets.FitStandardizer(tr, true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := std.Apply(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []datasets.RowSource{{Path: bin}, {Path: csvPath, Targets: []string{"y"}}} {
		f, stats, err := NewFileData(src, split, true)
		if err != nil {
			t.Fatal(err)
		}
		if f.Rows != n || f.Train != len(train) || stats.N != len(train) {
			t.Fatalf("%s: %d rows, %d training (stats %d), want %d and %d", src.Path, f.Rows, f.Train, stats.N, n, len(train))
		}
		var ref DataRef
		data, err := encode(DataRef{File: f})
		if err != nil {
			t.Fatal(err)
		}
		if err := decode(data, &ref); err != nil || ref.File == nil || ref.File.Std == nil || ref.File.Rows != n {
			t.Fatalf("DataRef over the wire: %+v, %v", ref.File, err)
		}
		merged := datasets.NewColumnStats(d + 1)
		next := 0
		for i := range k {
			x, y, rows, err := LoadShardRows(ref, i, k)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi, _ := ShardRange(n, i, k)
			if c, _ := f.ShardTrainRows(i, k); c != len(rows) {
				t.Fatalf("shard %d: %d rows, ShardTrainRows says %d", i, len(rows), c)
			}
			for a, r := range rows {
				if r < lo || r >= hi || r != train[next] {
					t.Fatalf("%s shard %d/%d: row %d is global row %d, want %d in [%d, %d)", src.Path, i, k, a, r, train[next], lo, hi)
				}
				for j := range d {
					if got, w := x.At(a, j), want.X.At(next, j); math.Abs(got-w) > 1e-12*math.Max(1, math.Abs(w)) {
						t.Fatalf("%s row %d column %d: %v, in memory %v", src.Path, r, j, got, w)
					}
				}
				if got, w := y.At(a, 0), want.Y.At(next, 0); math.Abs(got-w) > 1e-12*math.Max(1, math.Abs(w)) {
					t.Fatalf("%s row %d target: %v, in memory %v", src.Path, r, got, w)
				}
				next++
			}
			part, err := ShardStats(f, i, k)
			if err != nil {
				t.Fatal(err)
			}
			if err := merged.Merge(part); err != nil {
				t.Fatal(err)
			}
		}
		if next != len(train) {
			t.Fatalf("%s: the shards hold %d rows, want %d", src.Path, next, len(train))
		}
		ms, err := merged.Standardizer(d, true)
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			if math.Abs(ms.XStd[j]/f.Std.XStd[j]-1) > 1e-12 || math.Abs(ms.XMean[j]-f.Std.XMean[j]) > 1e-12*math.Abs(f.Std.XMean[j]) {
				t.Errorf("column %d: merged mean %v std %v, one pass %v %v", j, ms.XMean[j], ms.XStd[j], f.Std.XMean[j], f.Std.XStd[j])
			}
		}
	}
	// the job's training-row count must be the file's
	f, _, err := NewFileData(datasets.RowSource{Path: bin}, split, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := loadShard(&Job{Data: DataRef{File: f}, NumData: f.Train + 1}, nil, 0, 2); err == nil {
		t.Error("a job whose NumData differs from the file's training rows was loaded")
	}
	x, _, _, err := loadShard(&Job{Data: DataRef{File: f}, NumData: f.Train}, nil, 1, 2)
	if r, _ := x.Dims(); err != nil || r != func() int { c, _ := f.ShardTrainRows(1, 2); return c }() {
		t.Errorf("loadShard of a file: %v", err)
	}
	if _, _, _, err := LoadShardRows(DataRef{Name: "kin8nm"}, 0, 2); err == nil {
		t.Error("a Loader's data set loaded by shard")
	}
	if _, _, _, err := LoadShardRows(DataRef{File: f}, 4, 4); err == nil {
		t.Error("shard 4/4 loaded")
	}
}

// TestSyntheticShardRows: a Synthetic set's shards carry their global indices and equal Rows'.
func TestSyntheticShardRows(t *testing.T) {
	s := Synthetic{N: 101, D: 2, Noise: 0.1, Seed: 5}
	x, _, rows, err := LoadShardRows(DataRef{Synthetic: &s}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi, _ := ShardRange(101, 2, 3)
	wx, _, _ := s.Rows(lo, hi)
	if len(rows) != hi-lo || rows[0] != lo || rows[len(rows)-1] != hi-1 || !mat.Equal(x, wx) {
		t.Errorf("shard 2/3: rows %d..%d (%d), want %d..%d", rows[0], rows[len(rows)-1], len(rows), lo, hi-1)
	}
}
