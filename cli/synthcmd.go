package cli

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/gpzoo/gpzoo/datasets"
)

const synthUsage = `gpzoo synth: write a seeded synthetic regression table (a stand-in for your own data).

Usage:
  gpzoo synth --rows N --inputs D --out FILE.csv|FILE.gpzr [--seed S] [--noise SD]

The table has a header row x0,...,x{D-1},y and N rows: inputs uniform on [-2, 2] and the target
y = f(x) + noise, f smooth and nonlinear in every input (decreasing relevance), noise Gaussian
(datasets.Synthetic). The same flags write the same bytes. A FILE ending in .gpzr is written as gpzoo's
binary row file (fixed-width float64 rows behind a checksummed header, so a worker seeks to its shard:
docs/cluster.md, "Data larger than memory"). Rows are generated and written one at a time, so any N fits in
memory.
gpzoo train reads the CSV:
  gpzoo synth --rows 700 --inputs 8 --seed 1 --out synth.csv
  gpzoo train --csv synth.csv --target y

Flags:
  --rows N       rows (required)
  --inputs D     input columns (required)
  --seed S       seed of every draw (default 1)
  --noise SD     standard deviation of the noise (default %g; 0: none)
  --out FILE     the CSV, or row file (.gpzr), to write (required); an existing file is never replaced
`

// synthCmd runs `gpzoo synth`: datasets.Synthetic written by datasets.WriteTable to a new file.
func synthCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("synth", stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, synthUsage, datasets.DefaultSynthNoise) }
	rows := fs.Int("rows", 0, "rows")
	inputs := fs.Int("inputs", 0, "input columns")
	seed := fs.Uint64("seed", 1, "seed")
	noise := fs.Float64("noise", datasets.DefaultSynthNoise, "noise standard deviation")
	out := fs.String("out", "", "output CSV")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("synth: unexpected arguments %q (see gpzoo synth --help)", fs.Args())
	}
	if *rows < 1 || *inputs < 1 || *out == "" {
		return errors.New("synth: --rows N ≥ 1, --inputs D ≥ 1 and --out FILE are required (see gpzoo synth --help)")
	}
	if *noise == 0 {
		*noise = -1 // SynthConfig: 0 is the default, negative none
	}
	g, err := datasets.NewSynthStream(datasets.SynthConfig{Rows: *rows, Inputs: *inputs, Noise: *noise, Seed: *seed})
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	write := writeSynthCSV
	if datasets.SourceFormat(*out) == datasets.FormatRows {
		write = writeSynthRows
	}
	if err := writeNew(*out, func(w io.Writer) error { return write(w, g, *rows) }); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d rows, inputs x0..x%d, target y (seed %d, noise sd %g)\n", *out, *rows, *inputs-1, *seed, max(*noise, 0))
	return nil
}

// writeSynthCSV streams n rows of g as the CSV datasets.WriteTable writes for datasets.Synthetic: the same
// bytes, one row in memory at a time.
func writeSynthCSV(w io.Writer, g *datasets.SynthStream, n int) error {
	cw := csv.NewWriter(w)
	names := g.Names()
	if err := cw.Write(append(names, "y")); err != nil {
		return err
	}
	x := make([]float64, len(names))
	rec := make([]string, len(names)+1)
	for range n {
		y := g.Next(x)
		for j, v := range x {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		rec[len(x)] = strconv.FormatFloat(y, 'g', -1, 64)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeSynthRows streams n rows of g as a row file (datasets.RowWriter).
func writeSynthRows(w io.Writer, g *datasets.SynthStream, n int) error {
	names := g.Names()
	d := len(names)
	rw, err := datasets.NewRowWriter(w, n, 0, d, append(names, "y"))
	if err != nil {
		return err
	}
	row := make([]float64, d+1)
	for range n {
		row[d] = g.Next(row[:d])
		if err := rw.Write(row); err != nil {
			return err
		}
	}
	return rw.Close()
}

// writeNew creates a new file at path, refusing to replace anything there (O_EXCL: also a file that appears
// meanwhile), and streams write's output into it through a buffer; a failed write removes the partial file.
func writeNew(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: it is never replaced (remove it or choose another --out)", path)
	}
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
