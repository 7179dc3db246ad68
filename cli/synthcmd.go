package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gpzoo/gpzoo/datasets"
)

const synthUsage = `gpzoo synth: write a seeded synthetic regression CSV (a stand-in for your own table).

Usage:
  gpzoo synth --rows N --inputs D --out FILE.csv [--seed S] [--noise SD]

The table has a header row x0,...,x{D-1},y and N rows: inputs uniform on [-2, 2] and the target
y = f(x) + noise, f smooth and nonlinear in every input (decreasing relevance), noise Gaussian
(datasets.Synthetic). The same flags write the same bytes. gpzoo train reads it:
  gpzoo synth --rows 700 --inputs 8 --seed 1 --out synth.csv
  gpzoo train --csv synth.csv --target y

Flags:
  --rows N       rows (required)
  --inputs D     input columns (required)
  --seed S       seed of every draw (default 1)
  --noise SD     standard deviation of the noise (default %g; 0: none)
  --out FILE     the CSV to write (required); an existing file is never replaced
`

// synthCmd runs `gpzoo synth`: datasets.Synthetic written by datasets.WriteTable to a new file.
func synthCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	d, err := datasets.Synthetic(datasets.SynthConfig{Rows: *rows, Inputs: *inputs, Noise: *noise, Seed: *seed})
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	var buf bytes.Buffer
	if err := datasets.WriteTable(&buf, d, "y"); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err := writeNew(*out, buf.Bytes()); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d rows, inputs x0..x%d, target y (seed %d, noise sd %g)\n", *out, *rows, *inputs-1, *seed, max(*noise, 0))
	return nil
}

// writeNew writes data to a new file at path, refusing to replace anything there (O_EXCL: also a file that
// appears meanwhile); a failed write removes the partial file.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: it is never replaced (remove it or choose another --out)", path)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
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
