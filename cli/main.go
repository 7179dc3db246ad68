// Package cli is the gpzoo command line as a library: a program that registers its own kernels and likelihoods
// (gp.RegisterKernel, gp.RegisterLikelihood) and calls cli.Main is a complete gpzoo whose train, predict (and
// serve) offer them.
package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
)

// command is one gpzoo command: its name, its arguments and a one-line summary for `gpzoo help`.
type command struct {
	name, args, summary string
	run                 func(args []string, stdout, stderr io.Writer) error
}

// commands are gpzoo's commands in the order `gpzoo help` lists them: a new user's path (train on a CSV, then
// predict) first.
var commands = []command{
	{"train", "--csv FILE --target COLUMN [flags]", "train any model family on your CSV, print test metrics, save the model (gpzoo train --help)", trainCmd},
	{"predict", "(--model FILE.gpz | --url URL) --input X.csv [--out Y.csv]", "predict with a saved or a served model: means and variances, or class probabilities", predictCmd},
	{"serve", "--model NAME=FILE.gpz ... | --models DIR [flags]", "serve models over the Open Inference Protocol (KServe v2): REST and gRPC (gpzoo serve --help)", serveCmd},
	{"serve-bench", "[flags]", "load-test gpzoo serve on loopback: requests/s, rows/s, p50/p99 latency, peak RSS (gpzoo serve-bench --help)", serveBenchCmd},
	{"list", "[--long]", "the zoo's entries, one line each (--long: full summary, published numbers, reference)", list},
	{"run", "[ENTRY] [flags]", "train ENTRY and report its test metrics (no ENTRY: the showcase, see below)", runEntry},
	{"report", "[--out FILE.md] [--against MODEL] RESULT.json...", "Markdown table of JSON results against the published numbers", report},
	{"table", "list|show|run|work|report|reproduction [flags]", "reproduce a paper's table: its rows × splits into results/, resumable, spread over machines through NATS (gpzoo table help)", tableCmd},
	{"data", "list|verify|fetch [NAME...] [--data DIR]", "the benchmark data: list, verify checksums, download (gpzoo data help)", dataCmd},
	{"synth", "--rows N --inputs D --out FILE.csv [--seed S]", "write a seeded synthetic regression CSV to try train on (gpzoo synth --help)", synthCmd},
	{"cluster", "local|serve|work|identities [flags]", "distributed training over NATS of svgp, dgp and ADVGP models: a parameter server and workers (gpzoo cluster help)", clusterCmd("cluster")},
	{"advgp", "local|serve|work|identities [flags]", "gpzoo cluster under its former name (gpzoo advgp help)", clusterCmd("advgp")},
	{"vbks", "--data DATA [--kernels K12|K144|EXPRS] [flags]", "variational Bayesian kernel selection over composite kernels, with BMA (gpzoo vbks --help)", vbksCmd},
	{"illustrate", "[ringnorm] [flags]", "short for gpzoo run " + zoo.IllustrationEntry + " (see below)", illustrate},
	{"bench", "[--quick] [flags]", "this machine's BLAS GFLOP/s (gpzoo's, gonum's, OpenBLAS's) and ms per training step (gpzoo bench --help)", benchCmd},
	{"help", "", "this text", nil}, // run handles it (printUsage reads this table)
}

const usageFlags = `
Flags of run:
  --data DIR       benchmark data directory (default $%[1]s; empty: data embedded in the binary)
  --split K        train/test split (fold) of the data set's protocol (default 0)
  --splits SPEC    run each split of SPEC (e.g. 0-4, 0,2,5 or 0-2,7) with the same seed, print each and then
                   mean ± sample std; --out then writes all runs and the aggregate (not with --split)
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
                   --out R.json, else %[3]s in the working directory)
  --save FILE.gpz  save the trained model (gpzoo predict --model FILE.gpz; one split only)
  --checkpoint DIR checkpoint Adam training in DIR: at the end, every --checkpoint-every K steps, and on
                   SIGINT/SIGTERM; --resume continues from it and ends exactly as an uninterrupted run would
  --plots DIR      draw the training curve (objective per point against step and seconds), the test
                   metrics of --eval-every against step and seconds and, for classifiers, the reliability
                   diagram into DIR as PNG and SVG (one split only)
  --eval-every K   score the test split every K training steps (SVGP-model and deep-GP entries; not counted
                   as training time); with --plots and no --eval-every: every iters/20 steps
  --workers K      train on a parameter server and K worker processes over NATS (entries of the families that
                   are sums over rows: svgp and its layer families, dgp; ADVGP entries, default 4; gpr entries,
                   by conjugate gradients with the kernel products on the workers; gpzoo cluster help)
  --tau T          with --workers: delay bound τ (default 0 = synchronous; ADVGP entries 4)
  --nats URL       with --workers: an external NATS server (default: an embedded one on loopback), reached
                   with the security flags of gpzoo cluster (--creds, --nkey, --token-file, --tls-ca, --tls-cert,
                   --tls-key; beyond loopback always over TLS)
  --run NAME       with --workers: the run's name on the NATS server (gpzoo cluster serve; workers join it)
  --quiet          no progress output

gpzoo run without ENTRY, --split and --splits is the showcase: %[4]s on splits %[5]s, each split's line,
then mean ± std and the published numbers; --out writes the multi-split JSON. gpzoo run --split K (or
run %[4]s) runs one split and writes the one-split JSON.

The entry %[2]s trains COUPLED, COUPLEDNAT, DECOUPLED, HYBRID, ORTH and ORTHNAT
(seed 001 Fig. 2b: fixed hyperparameters and bases, full batch; --inducing M sets |γ| = |β|, default 500;
--iters N steps per method, default 100, ≈2–3 s per step and method at 500) and writes their ELBO per
iteration to --curves (method,iteration,elbo,seconds). It has no test metrics: the result reports per method
the final ELBO, the first iteration within 1%% of the best final ELBO and the seconds.

gpzoo illustrate takes the flags of run, with --bases M for --inducing M and --out FILE.csv for --curves.

gpzoo report reads one- or several-split JSON results (gpzoo run --out), pools those of one entry by split
(a split present in two files is an error) and writes one table row per entry: splits (n), test RMSE, test LL
and accuracy as mean ± sample std, mean training seconds, the published numbers and the reference. It writes
to standard output unless --out is given.
`

// Main runs the gpzoo command line with args (the arguments after the program's name, os.Args[1:]), writing to
// stdout and stderr; it returns the command's error (cmd/gpzoo prints it after "gpzoo: " and exits 1).
// `gpzoo advgp local` starts its workers by running this program again (os.Executable) with `advgp work ...`,
// so a program calling Main must pass it its command-line arguments.
func Main(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout)
		return nil
	}
	switch args[0] {
	case "help", "-h", "--help":
		printUsage(stdout)
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			if wantsHelp(args[1:]) {
				// --help is an answer, not a failure: the usage goes to standard output and the command succeeds.
				if err := c.run(args[1:], stdout, stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
					return usageError(err)
				}
				return nil
			}
			stop, err := startCPUProfile(os.Getenv(EnvCPUProfile))
			if err != nil {
				return err
			}
			err = c.run(args[1:], stdout, stderr)
			return errors.Join(usageError(err), stop())
		}
	}
	return fmt.Errorf("%w: unknown command %q (try `gpzoo help`)", ErrUsage, args[0])
}

// ErrUsage marks a usage error: an unknown command or flag, a flag without its value or with a malformed one.
// cmd/gpzoo exits with status 2 for it (ExitCode), 1 for any other failure, so that scripts can tell a mistyped
// command from a failed run.
var ErrUsage = errors.New("usage")

// ExitCode returns the exit status for err: 0 for nil, 2 for a usage error (ErrUsage), 1 otherwise.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	}
	return 1
}

// flagErrors are the beginnings of the flag package's parse errors (its messages are stable since Go 1).
var flagErrors = []string{"flag provided but not defined", "flag needs an argument", "bad flag syntax", "invalid value ", "invalid boolean value ", "invalid boolean flag "}

// newFlagSet returns the flag set of `gpzoo command`, reporting its parse errors and usage on stderr: every
// command's usage then begins "Usage of gpzoo command:".
func newFlagSet(command string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gpzoo "+command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// usageError wraps err with ErrUsage when it is one of the flag package's parse errors.
func usageError(err error) error {
	if err == nil || errors.Is(err, ErrUsage) || errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	for _, p := range flagErrors {
		if strings.Contains(msg, p) {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
	}
	return err
}

// wantsHelp reports whether args ask for a command's help: -h, -help or --help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// EnvCPUProfile names a file that receives a CPU profile (runtime/pprof) of the whole command when set: any
// command, e.g. GPZOO_CPUPROFILE=train.prof gpzoo train …, then go tool pprof.
const EnvCPUProfile = "GPZOO_CPUPROFILE"

// startCPUProfile starts a CPU profile into path (nothing for ""), refusing to replace an existing file, and
// returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", EnvCPUProfile, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("$%s: %w", EnvCPUProfile, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "gpzoo: Gaussian-process models in Go.\n\nUsage:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  gpzoo %s %s\t%s\n", c.name, c.args, c.summary)
	}
	tw.Flush()
	fmt.Fprintf(w, usageFlags, datasets.EnvDataDir, zoo.IllustrationEntry, zoo.IllustrationCurvesFile, zoo.DefaultEntry, zoo.DefaultSplits)
}

// listWidth bounds the summary column of `gpzoo list` (longer summaries end in "…"; --long prints them whole).
const listWidth = 100

// list prints one line per entry, its name and summary aligned; with --long the whole summary, then the
// published numbers and the reference on indented lines.
func list(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", stderr)
	long := fs.Bool("long", false, "full summaries, published numbers and references")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("list: unexpected argument %q", fs.Args())
	}
	if *long {
		for _, e := range zoo.Entries() {
			fmt.Fprintf(stdout, "%s\n  %s\n", e.Name, oneLine(e.Summary))
			if e.Published != "" {
				fmt.Fprintf(stdout, "  published: %s\n", oneLine(e.Published))
			}
			fmt.Fprintf(stdout, "  reference: %s\n", oneLine(e.Reference))
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, e := range zoo.Entries() {
		sum := []rune(oneLine(e.Summary))
		if len(sum) > listWidth {
			sum = append(sum[:listWidth-1], '…')
		}
		fmt.Fprintf(tw, "%s\t%s\n", e.Name, string(sum))
	}
	return tw.Flush()
}

// oneLine collapses the white space of s (newlines included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

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
	case "quiet", "natgrad", "resume", "redo-stale", "until-empty", "all", "check":
		return true
	}
	return false
}

func runEntry(args []string, stdout, stderr io.Writer) error {
	return runEntryWith("run", args, nil, stdout, stderr)
}

// runEntryWith is `gpzoo run`; onCluster (non-nil for `gpzoo cluster local|serve`) completes the options of a
// cluster run: how its workers start and where its NATS server is. Without it, --workers K starts K worker
// processes of this program (`gpzoo cluster work`; an ADVGP entry's run in this process) on the embedded NATS server.
func runEntryWith(command string, args []string, onCluster func(e *zoo.Entry, o *zoo.Options, data string) (cleanup func(), err error), stdout, stderr io.Writer) error {
	pos, flags := splitArgs(args)
	fs := newFlagSet(command, stderr)
	data := fs.String("data", datasets.DefaultDir(), "benchmark data directory")
	split := fs.Int("split", 0, "split")
	splits := fs.String("splits", "", "splits to run, e.g. 0-4 or 0,2,5")
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
	save := fs.String("save", "", "model file to write")
	ckDir := fs.String("checkpoint", "", "checkpoint directory")
	ckEvery := fs.Int("checkpoint-every", 0, "checkpoint period in steps")
	resume := fs.Bool("resume", false, "resume from the checkpoint")
	plotDir := fs.String("plots", "", "directory for the figures")
	evalEvery := fs.Int("eval-every", 0, "score the test split every K steps")
	workers := fs.Int("workers", 0, "number of cluster workers")
	tau := fs.Int("tau", 0, "cluster: delay bound τ")
	natsURL := fs.String("nats", "", "cluster: external NATS server URL")
	natsRun := fs.String("run", "", "cluster: run name (the NATS subjects' prefix)")
	security := cluster.SecurityFlags(fs)
	if err := fs.Parse(flags); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected argument %q", fs.Args())
	}
	if len(pos) > 1 {
		return fmt.Errorf("run takes one entry, got %q", pos)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["split"] && set["splits"] {
		return fmt.Errorf("--split and --splits exclude each other (--splits %s --split %d)", *splits, *split)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"iters", *iters}, {"inducing", *inducing}, {"batch", *batch}, {"test-samples", *testSamples},
		{"checkpoint-every", *ckEvery}, {"eval-every", *evalEvery}, {"workers", *workers}} {
		if set[c.name] && c.v < 1 {
			return fmt.Errorf("--%s %d: want a count of at least 1", c.name, c.v)
		}
	}
	if set["split"] && *split < 0 {
		return fmt.Errorf("--split %d: want a split index ≥ 0", *split)
	}
	name := zoo.DefaultEntry
	showcase := len(pos) == 0 && !set["split"] && !set["splits"]
	if len(pos) == 1 {
		name = pos[0]
	}
	var splitList []int
	if set["splits"] || showcase {
		spec := *splits
		if showcase {
			spec = zoo.DefaultSplits
		}
		var err error
		if splitList, err = zoo.ParseSplits(spec); err != nil {
			return fmt.Errorf("--splits: %w", err)
		}
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
		BatchSize: *batch, NatGrad: *natgrad, CurvesOut: *curves, TestSamples: *testSamples, SaveModel: *save,
		CheckpointDir: *ckDir, CheckpointEvery: *ckEvery, Resume: *resume, EvalEvery: *evalEvery,
		Workers: *workers, NATSURL: *natsURL, NATSRun: *natsRun}
	sec, err := security() // checked whenever given, used with --nats (the embedded server on loopback needs none)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if o.NATSURL != "" {
		o.NATSSecurity = sec
	}
	if set["tau"] {
		o.Tau = tau
	}
	if onCluster != nil {
		cleanup, err := onCluster(e, &o, *data)
		if err != nil {
			return err
		}
		defer cleanup()
	} else if o.Workers > 0 && e.Model != "advgp" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Spawn = cluster.Command(exe, "cluster", "work", "--data", *data)
	}
	if *plotDir != "" && *evalEvery == 0 {
		it := *iters
		if it == 0 {
			it = e.Iters
		}
		o.EvalEvery = max(1, it/20)
	}
	// SIGINT/SIGTERM end training after the current step (checkpointing it with --checkpoint); a second quits.
	ctx, stop := interruptContext()
	defer stop()
	o.Stop = ctx.Done()
	if e.WritesCurves && o.CurvesOut == "" && *out != "" && splitList == nil {
		o.CurvesOut = curvesNextTo(*out)
	}
	if !*quiet {
		// A terminal gets one live progress line; a log file or pipe gets log/slog lines.
		if isTerminal(stderr) {
			o.Progress = stderr
		} else {
			o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
		}
	}
	fmt.Fprintf(stdout, "gpzoo run %s: %s\n", e.Name, e.Summary)
	if splitList != nil && *plotDir != "" {
		return fmt.Errorf("--plots draws one run: use --split K")
	}
	if splitList != nil {
		return runSplits(e, o, splitList, showcase, *out, stdout)
	}
	r, err := e.Run(o)
	if errors.Is(err, train.ErrInterrupted) && *ckDir != "" {
		fmt.Fprintf(stdout, "interrupted: checkpoint saved in %s; continue with the same command and --resume\n", *ckDir)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, r.Summary())
	if *plotDir != "" {
		files, err := r.WritePlots(*plotDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  plots: %s\n", strings.Join(files, " "))
	}
	if r.ModelFile != "" {
		fmt.Fprintf(stdout, "  saved the model to %s (gpzoo predict --model %s --input X.csv)\n", r.ModelFile, r.ModelFile)
	}
	if *out != "" {
		if err := r.SaveJSON(*out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  wrote %s\n", *out)
	}
	return nil
}

// runSplits runs e on each split of splits, printing one line per split, then the aggregate and the comparison
// with the published numbers; out (if not empty) receives the multi-split JSON.
func runSplits(e *zoo.Entry, o zoo.Options, splits []int, showcase bool, out string, stdout io.Writer) error {
	if showcase {
		fmt.Fprintf(stdout, "showcase: splits %s of %s (data embedded in the binary), same seed; `gpzoo run --split K` runs one split, `gpzoo list` shows every entry\n",
			zoo.FormatSplits(splits), e.Name)
	}
	m, err := zoo.RunSplits(e, o, splits, func(r *zoo.Result) { fmt.Fprintln(stdout, "  "+r.Line()) })
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, m.Summary())
	if out != "" {
		if err := m.SaveJSON(out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  wrote %s\n", out)
	}
	return nil
}

// report reads JSON results and writes their Markdown table (gpzoo report [--out FILE.md] [--against MODEL]
// RESULT.json...), with --against a second one of paired differences from MODEL's entries.
func report(args []string, stdout, stderr io.Writer) error {
	files, flags := splitArgs(args)
	fs := newFlagSet("report", stderr)
	out := fs.String("out", "", "Markdown file (default: standard output)")
	against := fs.String("against", "", "also a table of each entry's paired differences, split by split, from the entry of model `MODEL` on its data set (for example gpr-laplace)")
	if err := fs.Parse(flags); err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("report: no result files (usage: gpzoo report [--out FILE.md] [--against MODEL] RESULT.json...)")
	}
	var rep zoo.Report
	for _, f := range files {
		if err := rep.AddFile(f); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteMarkdown(&buf); err != nil {
		return err
	}
	if *against != "" {
		fmt.Fprintf(&buf, "\nPaired with %s on the same data set and splits: the mean over the shared splits of each entry's metric minus %s's, ± its standard error.\n\n", *against, *against)
		if err := rep.WritePairedMarkdown(&buf, *against); err != nil {
			return err
		}
	}
	if *out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d result files)\n", *out, len(files))
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
