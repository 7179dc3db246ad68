// Command gpzoo runs gpzoo's model zoo: `gpzoo list` shows the entries, `gpzoo run [ENTRY]` trains one and
// reports its test metrics (the default entry runs on data embedded in the binary); entries that write training
// curves (ringnorm/odvgp-illustration) write them as CSV to --curves.
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/zoo"
)

const usage = `gpzoo: Gaussian-process models in Go.

Usage:
  gpzoo list                       list the zoo's entries
  gpzoo run [ENTRY] [flags]        train ENTRY (default %s) and report test metrics
  gpzoo illustrate [ringnorm] [flags]
                                   short for gpzoo run %[3]s (see below)
  gpzoo help                       this text

Flags of run:
  --data DIR       benchmark data directory (default $%[2]s; empty: data embedded in the binary)
  --split K        train/test split (fold) of the data set's protocol (default 0)
  --seed S         random seed (default 1)
  --iters N        training iterations (default: the entry's)
  --optimizer O    lbfgs or adam (default: the entry's)
  --inducing M     number of inducing points of sparse entries (default: the entry's)
  --batch B        minibatch size of minibatch entries (default: the entry's)
  --natgrad        natural-gradient steps on q(u) of SVGP entries (Adam on the rest); for deep GPs on the
                   last layer's q(u)
  --test-samples S deep GPs: samples propagated per test point (default: the entry's, usually 100)
  --out FILE.json  write the result as one JSON object
  --curves FILE    CSV of the training curves of entries that write them (default: R.curves.csv next to
                   --out R.json, else %[4]s in the working directory)
  --quiet          no progress output

The entry %[3]s trains COUPLED, COUPLEDNAT, DECOUPLED, HYBRID, ORTH and ORTHNAT
(seed 001 Fig. 2b: fixed hyperparameters and bases, full batch; --inducing M sets |γ| = |β|, default 500;
--iters N steps per method, default 100, ≈2–3 s per step and method at 500) and writes their ELBO per
iteration to --curves (method,iteration,elbo,seconds). It has no test metrics: the result reports per method
the final ELBO, the first iteration within 1%% of the best final ELBO and the seconds.

gpzoo illustrate takes the flags of run, with --bases M for --inducing M and --out FILE.csv for --curves.
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gpzoo:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout)
		return nil
	}
	switch args[0] {
	case "help", "-h", "--help":
		printUsage(stdout)
		return nil
	case "list":
		return list(stdout)
	case "run":
		return runEntry(args[1:], stdout, stderr)
	case "illustrate":
		return illustrate(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown command %q (try `gpzoo help`)", args[0])
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, usage, zoo.DefaultEntry, datasets.EnvDataDir, zoo.IllustrationEntry, zoo.IllustrationCurvesFile)
}

func list(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range zoo.Entries() {
		fmt.Fprintf(tw, "%s\t%s\n", e.Name, e.Summary)
	}
	return tw.Flush()
}

// splitArgs separates the positional ENTRY from flags, so flags may come before or after it.
func splitArgs(args []string) (pos, flags []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && i+1 < len(args) && !isBoolFlag(a) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return pos, flags
}

func isBoolFlag(a string) bool {
	switch strings.TrimLeft(a, "-") {
	case "quiet", "natgrad":
		return true
	}
	return false
}

func runEntry(args []string, stdout, stderr io.Writer) error {
	pos, flags := splitArgs(args)
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", datasets.DefaultDir(), "benchmark data directory")
	split := fs.Int("split", 0, "split")
	seed := fs.String("seed", "1", "seed")
	iters := fs.Int("iters", 0, "iterations")
	optimizer := fs.String("optimizer", "", "lbfgs or adam")
	inducing := fs.Int("inducing", 0, "inducing points")
	batch := fs.Int("batch", 0, "minibatch size")
	out := fs.String("out", "", "JSON result file")
	quiet := fs.Bool("quiet", false, "no progress output")
	natgrad := fs.Bool("natgrad", false, "natural gradients on q(u)")
	curves := fs.String("curves", "", "CSV file of the training curves")
	testSamples := fs.Int("test-samples", 0, "deep GPs: propagated samples at test time")
	if err := fs.Parse(flags); err != nil {
		return err
	}
	if len(pos) > 1 {
		return fmt.Errorf("run takes one entry, got %q", pos)
	}
	name := zoo.DefaultEntry
	if len(pos) == 1 {
		name = pos[0]
	}
	s, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return fmt.Errorf("--seed: %w", err)
	}
	e, err := zoo.Lookup(name)
	if err != nil {
		return err
	}
	o := zoo.Options{DataDir: *data, Split: *split, Seed: s, Iters: *iters, Optimizer: *optimizer, Inducing: *inducing,
		BatchSize: *batch, NatGrad: *natgrad, CurvesOut: *curves, TestSamples: *testSamples}
	if e.WritesCurves && o.CurvesOut == "" && *out != "" {
		o.CurvesOut = curvesNextTo(*out)
	}
	if !*quiet {
		o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
		if isTerminal(stderr) {
			o.Progress = stderr
		}
	}
	fmt.Fprintf(stdout, "gpzoo run %s: %s\n", e.Name, e.Summary)
	r, err := e.Run(o)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, r.Summary())
	if *out != "" {
		if err := r.SaveJSON(*out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  wrote %s\n", *out)
	}
	return nil
}

// curvesNextTo returns the default CSV file of the curves next to the JSON result file out: out with its
// extension replaced by .curves.csv.
func curvesNextTo(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".curves.csv"
}

// illustrate is the older spelling of `run ringnorm/odvgp-illustration`: the optional data set must be ringnorm,
// --bases is --inducing and --out (the CSV) is --curves.
func illustrate(args []string, stdout, stderr io.Writer) error {
	pos, flags := splitArgs(args)
	if len(pos) > 1 || len(pos) == 1 && !strings.EqualFold(pos[0], zoo.IllustrationDataset) {
		return fmt.Errorf("illustrate runs %s only, got data set %q", zoo.IllustrationEntry, pos)
	}
	renamed := map[string]string{"bases": "inducing", "out": "curves"}
	for i := 0; i < len(flags); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(flags[i], "-"), "=")
		if r, ok := renamed[name]; ok {
			flags[i] = "--" + r
			if hasValue {
				flags[i] += "=" + value
			}
		}
		if !hasValue && !isBoolFlag(flags[i]) {
			i++ // skip the value
		}
	}
	return runEntry(append([]string{zoo.IllustrationEntry}, flags...), stdout, stderr)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
