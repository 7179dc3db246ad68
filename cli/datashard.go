package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
)

const dataShardUsage = `Usage:
  gpzoo data stats FILE [--test-frac F] [--split-seed S] [--targets y,...] [--out STATS.json]
  gpzoo data shard-stats FILE --shard i/k [--test-frac F] [--split-seed S] [--targets y,...] [--std STATS.json] [--json]

Reading a data set larger than memory by shards (docs/cluster.md, "Data larger than memory"). FILE is a row
file (.gpzr, written by gpzoo synth) or a CSV (then --targets names its target columns; default y).

stats makes the server's one streaming pass: the number of rows and the column means and standard
deviations of the training rows (a row is a test row when a hash of its index and --split-seed falls below
--test-frac), written as JSON to --out (or printed), with the time and the process's peak RSS.

shard-stats loads what worker i of k trains on, as a cluster worker does (cluster.LoadShardRows): only the
rows [i·N/k, (i+1)·N/k), test rows dropped, standardised by --std (the stats file; none: raw), and prints
the shard's rows, test rows, training rows, column means and standard deviations of what it holds, the
load time and the process's peak resident memory (VmHWM).

Flags:
  --shard i/k       the shard (0 ≤ i < k)
  --test-frac F     fraction of rows held out by the row hash (default 0.1)
  --split-seed S    seed of the row hash (default 1)
  --targets NAMES   a CSV's target columns, comma-separated (default y)
  --std FILE        the statistics gpzoo data stats wrote (standardise as the server does)
  --out FILE        (stats) write the statistics here
  --json            (shard-stats) print one JSON object
`

// fileStats is what `gpzoo data stats` writes: the file's rows and the training rows' statistics.
type fileStats struct {
	File     string                 `json:"file"`
	Rows     int                    `json:"rows"`
	Train    int                    `json:"train_rows"`
	Split    datasets.RowSplit      `json:"split"`
	Inputs   []string               `json:"inputs"`
	Targets  []string               `json:"targets"`
	Stats    *datasets.ColumnStats  `json:"stats"`
	Seconds  float64                `json:"seconds"`
	PeakRSS  int64                  `json:"peak_rss_bytes"`
	Standard *datasets.Standardizer `json:"standardizer"`
}

// dataShardCmd runs `gpzoo data stats` and `gpzoo data shard-stats`.
func dataShardCmd(sub string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data "+sub, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, dataShardUsage) }
	shard := fs.String("shard", "", "i/k")
	frac := fs.Float64("test-frac", 0.1, "test fraction")
	seed := fs.Uint64("split-seed", 1, "split seed")
	targets := fs.String("targets", "y", "CSV target columns")
	stdPath := fs.String("std", "", "statistics file")
	out := fs.String("out", "", "statistics output")
	asJSON := fs.Bool("json", false, "JSON output")
	files, err := dataParse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, dataShardUsage)
		return nil
	}
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("data %s: name one FILE (see gpzoo data help)", sub)
	}
	src := datasets.RowSource{Path: files[0], Targets: strings.Split(*targets, ",")}
	split := datasets.RowSplit{Seed: *seed, TestFrac: *frac}
	if err := split.Check(); err != nil {
		return fmt.Errorf("data %s: --test-frac: %w", sub, err)
	}
	start := time.Now()
	if sub == "stats" {
		f, stats, err := cluster.NewFileData(src, split, true)
		if err != nil {
			return fmt.Errorf("data stats: %w", err)
		}
		in, tg, err := src.Columns()
		if err != nil {
			return fmt.Errorf("data stats: %w", err)
		}
		fst := fileStats{File: src.Path, Rows: f.Rows, Train: f.Train, Split: split, Inputs: in, Targets: tg, Stats: stats,
			Seconds: time.Since(start).Seconds(), PeakRSS: peakRSS(os.Getpid()), Standard: f.Std}
		b, err := json.MarshalIndent(fst, "", "  ")
		if err != nil {
			return err
		}
		if *out == "" {
			_, err = fmt.Fprintf(stdout, "%s\n", b)
			return err
		}
		if err := writeNew(*out, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
			return fmt.Errorf("data stats: %w", err)
		}
		fmt.Fprintf(stdout, "%s: %d rows, %d for training; statistics in %s (%.1f s, peak RSS %s)\n", src.Path, f.Rows, f.Train, *out, fst.Seconds, rssString(fst.PeakRSS))
		return nil
	}
	i, k, err := parseShard(*shard)
	if err != nil {
		return fmt.Errorf("data shard-stats: %w", err)
	}
	fd := &cluster.FileData{Source: src, Split: split}
	if *stdPath != "" {
		b, err := os.ReadFile(*stdPath)
		if err != nil {
			return fmt.Errorf("data shard-stats: %w", err)
		}
		var fst fileStats
		if err := json.Unmarshal(b, &fst); err != nil || fst.Standard == nil || fst.Rows < 1 {
			return fmt.Errorf("data shard-stats: %s is not a statistics file of gpzoo data stats (%v)", *stdPath, err)
		}
		if fst.Split != split {
			return fmt.Errorf("data shard-stats: %s was computed with split %+v, not %+v", *stdPath, fst.Split, split)
		}
		fd.Rows, fd.Train, fd.Std = fst.Rows, fst.Train, fst.Standard
	} else if fd.Rows, err = sourceRows(src); err != nil {
		return fmt.Errorf("data shard-stats: %w", err)
	}
	x, y, rows, err := cluster.LoadShardRows(cluster.DataRef{File: fd}, i, k)
	if err != nil {
		return fmt.Errorf("data shard-stats: %w", err)
	}
	secs := time.Since(start).Seconds()
	lo, hi, _ := cluster.ShardRange(fd.Rows, i, k)
	n, d := x.Dims()
	cs := datasets.NewColumnStats(d + 1)
	row := make([]float64, d+1)
	for r := range n {
		copy(row, x.RawRowView(r))
		row[d] = y.At(r, 0)
		cs.Add(row)
	}
	res := struct {
		File    string    `json:"file"`
		Shard   string    `json:"shard"`
		Lo      int       `json:"first_row"`
		Hi      int       `json:"end_row"`
		Train   int       `json:"train_rows"`
		Test    int       `json:"test_rows"`
		Means   []float64 `json:"means"`
		Stds    []float64 `json:"stds"`
		Std     bool      `json:"standardised"`
		Seconds float64   `json:"seconds"`
		PeakRSS int64     `json:"peak_rss_bytes"`
	}{File: src.Path, Shard: fmt.Sprintf("%d/%d", i, k), Lo: lo, Hi: hi, Train: len(rows), Test: hi - lo - len(rows),
		Std: fd.Std != nil, Seconds: secs, PeakRSS: peakRSS(os.Getpid())}
	for j := range d + 1 {
		res.Means = append(res.Means, cs.ColumnMean(j))
		res.Stds = append(res.Stds, cs.Std(j))
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		_, err := fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	fmt.Fprintf(stdout, "%s shard %s: rows [%d, %d): %d training, %d test; loaded in %.1f s; peak RSS %s\n",
		src.Path, res.Shard, lo, hi, res.Train, res.Test, secs, rssString(res.PeakRSS))
	fmt.Fprintf(stdout, "column means %s\ncolumn stds  %s\n", fmtFloats(res.Means), fmtFloats(res.Stds))
	return nil
}

// sourceRows returns the number of rows of src: a row file's header, a CSV's one scan.
func sourceRows(src datasets.RowSource) (int, error) {
	if datasets.SourceFormat(src.Path) == datasets.FormatRows && src.Format == "" || src.Format == datasets.FormatRows {
		f, err := datasets.OpenRowFile(src.Path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		return f.FirstRow + f.Rows, nil
	}
	return datasets.ScanRows(src, 0, -1, func(int, []float64, []float64) error { return nil })
}

// parseShard parses "i/k" with 0 ≤ i < k.
func parseShard(s string) (i, k int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			k, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || k < 1 || i < 0 || i >= k {
		return 0, 0, fmt.Errorf("--shard %q: want i/k with 0 ≤ i < k", s)
	}
	return i, k, nil
}

func fmtFloats(v []float64) string {
	parts := make([]string, len(v))
	for j, x := range v {
		parts[j] = strconv.FormatFloat(x, 'g', 6, 64)
	}
	return strings.Join(parts, " ")
}

func rssString(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
