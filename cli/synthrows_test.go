package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"gonum.org/v1/gonum/mat"
)

// TestSynthRowFile: `gpzoo synth --out FILE.gpzr` streams a row file holding the CSV's rows, bit for bit, with
// the CSV's column names; an existing file is not replaced.
func TestSynthRowFile(t *testing.T) {
	dir := t.TempDir()
	bin, csvPath := filepath.Join(dir, "s.gpzr"), filepath.Join(dir, "s.csv")
	for _, out := range []string{bin, csvPath} {
		var o, e bytes.Buffer
		if err := Main([]string{"synth", "--rows", "333", "--inputs", "3", "--seed", "4", "--out", out}, &o, &e); err != nil {
			t.Fatal(err)
		}
	}
	f, err := datasets.OpenRowFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	names := f.Names
	f.Close()
	if len(names) != 4 || names[0] != "x0" || names[3] != "y" || f.Inputs != 3 || f.Rows != 333 {
		t.Fatalf("row file header %+v", f.RowHeader)
	}
	x, y, err := datasets.ReadRows(bin, 0, 333)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := datasets.LoadTable(csvPath, datasets.TableOptions{Target: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(x, tab.Data.X) || !mat.Equal(y, tab.Data.Y) {
		t.Error("the row file's rows differ from the CSV's")
	}
	before, _ := os.ReadFile(bin)
	var o, e bytes.Buffer
	if err := Main([]string{"synth", "--rows", "5", "--inputs", "2", "--out", bin}, &o, &e); err == nil {
		t.Error("an existing row file was replaced")
	}
	if after, _ := os.ReadFile(bin); !bytes.Equal(before, after) {
		t.Error("the refused run changed the file")
	}
}

// TestSynthDataShardStats: `gpzoo data stats` and `gpzoo data shard-stats` on a synthesised row file: the
// shards' training and test rows add up to the file's, and the shards standardised by the statistics file
// have, together, mean 0 and standard deviation 1 in every column.
func TestSynthDataShardStats(t *testing.T) {
	dir := t.TempDir()
	bin, stats := filepath.Join(dir, "s.gpzr"), filepath.Join(dir, "s.json")
	run := func(args ...string) string {
		t.Helper()
		var o, e bytes.Buffer
		if err := Main(args, &o, &e); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, e.String())
		}
		return o.String()
	}
	run("synth", "--rows", "2003", "--inputs", "3", "--seed", "2", "--out", bin)
	run("data", "stats", bin, "--test-frac", "0.2", "--split-seed", "9", "--out", stats)
	const k = 4
	var train, test int
	var n float64
	sum, sq := make([]float64, 4), make([]float64, 4)
	for i := range k {
		var r struct {
			Train       int `json:"train_rows"`
			Test        int `json:"test_rows"`
			Means, Stds []float64
			PeakRSS     int64 `json:"peak_rss_bytes"`
		}
		out := run("data", "shard-stats", bin, "--shard", strconv.Itoa(i)+"/4", "--test-frac", "0.2", "--split-seed", "9", "--std", stats, "--json")
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if _, err := os.Stat("/proc/self/status"); err == nil && r.PeakRSS <= 0 {
			t.Errorf("shard %d: peak RSS %d", i, r.PeakRSS)
		}
		train, test = train+r.Train, test+r.Test
		for j := range 4 { // Σx and Σx² of the shard from its mean and population std
			m, s, c := r.Means[j], r.Stds[j], float64(r.Train)
			sum[j] += c * m
			sq[j] += c * (s*s + m*m)
		}
		n += float64(r.Train)
	}
	var fst struct {
		Rows  int `json:"rows"`
		Train int `json:"train_rows"`
	}
	b, _ := os.ReadFile(stats)
	json.Unmarshal(b, &fst)
	if fst.Rows != 2003 || train != fst.Train || train+test != 2003 || test < 300 || test > 500 {
		t.Fatalf("%d training and %d test rows in the shards; the statistics say %d of %d", train, test, fst.Train, fst.Rows)
	}
	for j := range 4 {
		if m, v := sum[j]/n, sq[j]/n-(sum[j]/n)*(sum[j]/n); math.Abs(m) > 1e-9 || math.Abs(v-1) > 1e-9 {
			t.Errorf("column %d over the shards: mean %v, variance %v (want 0 and 1)", j, m, v)
		}
	}
	for _, args := range [][]string{{"data", "shard-stats", bin}, {"data", "shard-stats", bin, "--shard", "4/4"},
		{"data", "shard-stats", bin, "--shard", "0/2", "--std", stats}, {"data", "stats", bin, "--test-frac", "1"}} {
		var o, e bytes.Buffer
		if err := Main(args, &o, &e); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
