package datasets

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestIsTestRowFraction(t *testing.T) {
	const n = 1_000_000
	for _, frac := range []float64{0.1, 0.25, 0.5} {
		k := 0
		for r := range n {
			if IsTestRow(3, r, frac) {
				k++
			}
		}
		// binomial standard deviation √(n·f·(1−f)) ≤ 500: 6σ
		if got := float64(k) / n; math.Abs(got-frac) > 6*math.Sqrt(frac*(1-frac)/n) {
			t.Errorf("fraction %v: %d of %d rows are test rows (%v)", frac, k, n, got)
		}
	}
	same, diff := 0, 0
	for r := range 10000 {
		if IsTestRow(3, r, 0.3) == IsTestRow(4, r, 0.3) {
			same++
		} else {
			diff++
		}
		if IsTestRow(3, r, 0) || !IsTestRow(3, r, 1) || IsTestRow(3, r, math.NaN()) {
			t.Fatal("fractions 0, 1, NaN")
		}
		if IsTestRow(3, r, 0.1) && !IsTestRow(3, r, 0.3) {
			t.Fatal("a test row at fraction 0.1 is not one at 0.3")
		}
	}
	if diff < 3000 { // seeds 3 and 4 disagree on about 2·0.3·0.7 = 42% of rows
		t.Errorf("seeds 3 and 4 agree on %d of 10000 rows", same)
	}
}

// TestReadShardIndependentOfSharding: the shards of a file, read with the test rows dropped, are together the
// file's training rows, whatever k is, in both formats.
func TestReadShardIndependentOfSharding(t *testing.T) {
	d := synthForTest(t, 997, 4)
	dir := t.TempDir()
	bin, csvPath := filepath.Join(dir, "s.gpzr"), filepath.Join(dir, "s.csv")
	writeRowFile(t, bin, d)
	var b bytes.Buffer
	if err := WriteTable(&b, d, "y"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(csvPath, b.Bytes(), 0o644)
	split := RowSplit{Seed: 11, TestFrac: 0.2}
	var want []int
	for r := range 997 {
		if !split.IsTest(r) {
			want = append(want, r)
		}
	}
	keep := func(r int) bool { return !split.IsTest(r) }
	for _, src := range []RowSource{{Path: bin}, {Path: csvPath, Targets: []string{"y"}}} {
		for _, k := range []int{1, 3, 4} {
			var rows []int
			for i := range k {
				lo, hi := i*997/k, (i+1)*997/k
				x, y, rs, err := ReadShard(src, lo, hi, keep)
				if err != nil {
					t.Fatalf("%s shard %d/%d: %v", src.Path, i, k, err)
				}
				if n := split.TrainRows(lo, hi); len(rs) != n {
					t.Fatalf("%d rows, TrainRows says %d", len(rs), n)
				}
				for a, r := range rs {
					if r < lo || r >= hi || !mat.Equal(x.RowView(a), d.X.RowView(r)) || y.At(a, 0) != d.Y.At(r, 0) {
						t.Fatalf("%s shard %d/%d: row %d (global %d) differs from the data", src.Path, i, k, a, r)
					}
				}
				rows = append(rows, rs...)
			}
			if !equalInts(rows, want) {
				t.Fatalf("%s, %d shards: %d rows kept, want the %d training rows", src.Path, k, len(rows), len(want))
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadShardCSVColumnsAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	os.WriteFile(path, []byte("id; b ;y;a\nq;1;10;100\nr;2;20;200\ns;3;x;300\n"), 0o644)
	src := RowSource{Path: path, Targets: []string{"y"}, Features: []string{"a", "b"}}
	x, y, rows, err := ReadShard(src, 1, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.At(0, 0) != 200 || x.At(0, 1) != 2 || y.At(0, 0) != 20 || rows[0] != 1 {
		t.Fatalf("row 1: x %v, y %v, rows %v", mat.Formatted(x), mat.Formatted(y), rows)
	}
	in, tg, err := src.Columns()
	if err != nil || strings.Join(in, ",") != "a,b" || strings.Join(tg, ",") != "y" {
		t.Fatalf("columns %v %v %v", in, tg, err)
	}
	// the id column is not an input by name: the unconverted rows before lo hold anything
	if _, _, _, err := ReadShard(src, 2, 3, nil); !errors.Is(err, ErrFormat) {
		t.Errorf("row 2's target x: %v", err)
	}
	if _, _, _, err := ReadShard(src, 3, 5, nil); !errors.Is(err, ErrIndex) { // row 2's x is read past
		t.Errorf("rows past the end: %v", err)
	}
	if _, _, _, err := ReadShard(RowSource{Path: path, Targets: []string{"z"}}, 0, 1, nil); !errors.Is(err, ErrFormat) {
		t.Errorf("a target not in the header: %v", err)
	}
	if _, _, _, err := ReadShard(RowSource{Path: path}, 0, 1, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("no target: %v", err)
	}
	if _, _, _, err := ReadShard(RowSource{Path: path, Targets: []string{"y"}}, 0, 1, nil); !errors.Is(err, ErrFormat) {
		t.Errorf("the text column id read as an input: %v", err)
	}
	if _, _, _, err := ReadShard(src, 0, 2, func(int) bool { return false }); !errors.Is(err, ErrEmpty) {
		t.Errorf("no row kept: %v", err)
	}
}

// TestFitSourceStatsMatchesInMemory: one streaming pass over a file's training rows gives FitStandardizer's
// statistics of those rows (relative 1e-12), in both formats; shards' partial statistics merged give the same.
func TestFitSourceStatsMatchesInMemory(t *testing.T) {
	d := synthForTest(t, 50_000, 3)
	// offsets and scales that make a naive Σx² formula lose digits
	for i := range d.N() {
		row := d.X.RawRowView(i)
		row[0] = 1e3 + row[0]*1e-1
		row[2] *= 1e8
		d.Y.Set(i, 0, d.Y.At(i, 0)-3e4)
	}
	dir := t.TempDir()
	bin, csvPath := filepath.Join(dir, "s.gpzr"), filepath.Join(dir, "s.csv")
	writeRowFile(t, bin, d)
	var b bytes.Buffer
	if err := WriteTable(&b, d, "y"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(csvPath, b.Bytes(), 0o644)
	split := RowSplit{Seed: 5, TestFrac: 0.1}
	var idx []int
	for r := range d.N() {
		if !split.IsTest(r) {
			idx = append(idx, r)
		}
	}
	tr, err := d.Subset(idx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FitStandardizer(tr, true)
	if err != nil {
		t.Fatal(err)
	}
	close := func(what string, got, want []float64) {
		t.Helper()
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-12*math.Abs(want[j]) {
				t.Errorf("%s[%d] = %v, in memory %v (relative %v)", what, j, got[j], want[j], math.Abs(got[j]/want[j]-1))
			}
		}
	}
	check := func(name string, cs *ColumnStats) {
		t.Helper()
		if cs.N != len(idx) {
			t.Fatalf("%s: %d rows, want %d", name, cs.N, len(idx))
		}
		got, err := cs.Standardizer(3, true)
		if err != nil {
			t.Fatal(err)
		}
		close(name+" XMean", got.XMean, want.XMean)
		close(name+" XStd", got.XStd, want.XStd)
		close(name+" YMean", got.YMean, want.YMean)
		close(name+" YStd", got.YStd, want.YStd)
	}
	for _, src := range []RowSource{{Path: bin}, {Path: csvPath, Targets: []string{"y"}}} {
		cs, rows, err := FitSourceStats(src, split)
		if err != nil {
			t.Fatal(err)
		}
		if rows != d.N() {
			t.Fatalf("%s: %d rows, want %d", src.Path, rows, d.N())
		}
		check(src.Path, cs)
	}
	// four workers' partial statistics, merged as a server would
	total := NewColumnStats(4)
	for i := range 4 {
		part := NewColumnStats(4)
		lo, hi := i*d.N()/4, (i+1)*d.N()/4
		if _, err := ScanRows(RowSource{Path: bin}, lo, hi, func(r int, x, y []float64) error {
			if !split.IsTest(r) {
				part.Add(append(append([]float64(nil), x...), y...))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := total.Merge(part); err != nil {
			t.Fatal(err)
		}
	}
	check("merged", total)
	if err := total.Merge(NewColumnStats(3)); !errors.Is(err, ErrShape) {
		t.Errorf("merging statistics of 3 columns into 4: %v", err)
	}
	st, _ := total.Standardizer(3, false)
	if st.YMean[0] != 0 || st.YStd[0] != 1 {
		t.Errorf("targets not standardised: mean %v std %v", st.YMean, st.YStd)
	}
}

func TestApplyInPlaceMatchesApply(t *testing.T) {
	d := synthForTest(t, 200, 3)
	s, err := FitStandardizer(d, true)
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	x, y := mat.DenseCopyOf(d.X), mat.DenseCopyOf(d.Y)
	if err := s.ApplyInPlace(x, y); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(x, z.X) || !mat.Equal(y, z.Y) {
		t.Error("ApplyInPlace differs from Apply")
	}
	if err := s.ApplyInPlace(mat.NewDense(2, 2, nil), nil); !errors.Is(err, ErrShape) {
		t.Errorf("2 columns for 3: %v", err)
	}
}

// TestColumnStatsShifted: a column whose mean is 10⁹ times its spread keeps its digits (the exact population
// std by math/big, relative 1e-13), whether added in one stream or merged from parts.
func TestColumnStatsShifted(t *testing.T) {
	d := synthForTest(t, 20_000, 1)
	xs := make([]float64, d.N())
	one, parts := NewColumnStats(1), []*ColumnStats{NewColumnStats(1), NewColumnStats(1), NewColumnStats(1)}
	for i := range xs {
		xs[i] = 1e6 + d.X.At(i, 0)*1e-3
		one.Add(xs[i : i+1])
		parts[i*3/len(xs)].Add(xs[i : i+1])
	}
	merged := NewColumnStats(1)
	for _, p := range parts {
		merged.Merge(p)
	}
	const prec = 400
	nb := new(big.Float).SetPrec(prec).SetInt64(int64(len(xs)))
	sum := new(big.Float).SetPrec(prec)
	for _, v := range xs {
		sum.Add(sum, new(big.Float).SetPrec(prec).SetFloat64(v))
	}
	mean := new(big.Float).SetPrec(prec).Quo(sum, nb)
	ss := new(big.Float).SetPrec(prec)
	for _, v := range xs {
		dv := new(big.Float).SetPrec(prec).Sub(new(big.Float).SetPrec(prec).SetFloat64(v), mean)
		ss.Add(ss, dv.Mul(dv, dv))
	}
	std, _ := ss.Quo(ss, nb).Sqrt(ss).Float64()
	m, _ := mean.Float64()
	for name, cs := range map[string]*ColumnStats{"streamed": one, "merged": merged} {
		if got := cs.Std(0); math.Abs(got/std-1) > 1e-13 {
			t.Errorf("%s: std %.17g, exact %.17g", name, got, std)
		}
		if got := cs.ColumnMean(0); math.Abs(got-m) > 1e-15*m {
			t.Errorf("%s: mean %.17g, exact %.17g", name, got, m)
		}
	}
}
