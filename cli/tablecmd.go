package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/internal/atomicfile"
	"github.com/gpzoo/gpzoo/zoo"
)

const tableUsage = `gpzoo table: reproduce a paper's table. A table (gpzoo table list) is rows, zoo entries at the paper's
protocol, each run on splits; every finished run writes one result file, RESULTS/TABLE/ROW/split-K.json
(default RESULTS: ./results), which later runs skip: a table continues across interruptions and machines
(commit the files). docs/tables.md tells more.

  gpzoo table list [--results DIR]
      the tables, their rows and how many of their runs have results
  gpzoo table show TABLE
      a table's definition: protocol, rows (entries, options, budgets, published numbers, protocol
      fingerprints) and its differences from the paper's protocol
  gpzoo table run TABLE [--rows PATTERNS] [--splits SPEC] [--results DIR] [--data DIR] [--redo-stale] [--quiet]
      runs the table's runs that have no result, one after another, writing each result as it finishes.
      --rows takes comma-separated glob patterns of row IDs (a pattern without '/' matches the ID's last part:
      --rows 'dgp-decoupled-*'); --splits SPEC (0-4, 0,2,5) replaces the rows' splits. SIGINT/SIGTERM stop the
      run in progress after its current step, keeping its checkpoint (RESULTS/.checkpoints/...): the same
      command resumes it (a second signal quits at once). A result of an older protocol of its row (stale) is
      kept and reported; --redo-stale runs it again and replaces it.
  gpzoo table run TABLE --runners K [flags of run]
      the same with K runner processes of this binary on this machine, taking the runs from a work queue on an
      embedded NATS server (loopback, JetStream, a fresh token)
  gpzoo table run TABLE --nats URL [--runners K] [security flags] [flags of run]
      queues the runs on the NATS server at URL (it needs JetStream) for runners on any machine, and writes
      their results into RESULTS as they arrive (with --runners K it also starts K runners here); stop it and
      run it again at will: queued and running runs are not queued twice, stored results are collected
  gpzoo table work --nats URL [security flags] [--data DIR] [--results DIR] [--until-empty] [--name NAME]
      a runner: takes one run at a time from the queue, runs it (checkpoints in RESULTS/.checkpoints) and
      stores its result on the queue; a run's protocol must be the submitter's (build the runner from the same
      commit). While it works it tells the queue so; a runner that dies loses its run to another after two
      minutes; SIGINT/SIGTERM give the run in progress back at once. --until-empty ends it when the queue is
      empty (else it waits for runs)
  gpzoo table report (TABLE... | --all) [--results DIR] [--markdown FILE] [--json FILE]
      the published numbers beside gpzoo's mean ± std per row, with splits, steps and stop reasons, wall
      time, machines and commits (Markdown to standard output unless --markdown or --json)
  gpzoo table reproduction [--results DIR] [--out FILE] [--check]
      writes REPRODUCTION.md (default FILE: REPRODUCTION.md) from gpzoo's tables and the results; --check
      only compares FILE with what it would write and fails when they differ

Security flags (with --nats; as gpzoo cluster's, beyond loopback always TLS): --creds FILE, --nkey FILE,
--token-file FILE (default $GPZOO_NATS_TOKEN), --tls-ca FILE, --tls-cert FILE, --tls-key FILE.
`

func tableCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
		fmt.Fprint(stdout, tableUsage)
		return nil
	}
	switch args[0] {
	case "list":
		return tableList(args[1:], stdout, stderr)
	case "show":
		return tableShow(args[1:], stdout, stderr)
	case "run":
		return tableRun(args[1:], stdout, stderr)
	case "work":
		return tableWork(args[1:], stdout, stderr)
	case "report":
		return tableReport(args[1:], stdout, stderr)
	case "reproduction":
		return tableReproduction(args[1:], stdout, stderr)
	}
	return fmt.Errorf("%w: table: unknown subcommand %q (list, show, run, work, report or reproduction; gpzoo table help)", ErrUsage, args[0])
}

// parseTableFlags parses a table subcommand's flags (before or after its positional arguments).
func parseTableFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	pos, flags := splitArgs(args)
	if err := fs.Parse(flags); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("table %s: unexpected argument %q", fs.Name(), fs.Args())
	}
	return pos, nil
}

func oneTable(cmd string, pos []string) (*zoo.Table, error) {
	if len(pos) != 1 {
		return nil, fmt.Errorf("table %s takes one table, got %q (gpzoo table list)", cmd, pos)
	}
	return zoo.LookupTable(pos[0])
}

func tableList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table list", stderr)
	results := fs.String("results", zoo.DefaultResultsDir, "results folder")
	pos, err := parseTableFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("table list: unexpected argument %q", pos)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS\tRUNS DONE\tTITLE")
	for _, t := range zoo.Tables() {
		plan, err := t.Plan(zoo.TableOptions{Results: *results})
		done := "?"
		if err == nil {
			n := 0
			for _, p := range plan {
				if p.State == zoo.TaskDone {
					n++
				}
			}
			done = fmt.Sprintf("%d/%d", n, len(plan))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", t.Name, len(t.Rows), done, t.Title)
	}
	return tw.Flush()
}

func tableShow(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table show", stderr)
	pos, err := parseTableFlags(fs, args)
	if err != nil {
		return err
	}
	t, err := oneTable("show", pos)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n  reproduces %s\n  command: %s\n  protocol: %s\n  splits: %s\nrows:\n", t.Name, t.Title,
		t.Reproduces, t.Command(), t.Protocol, zoo.FormatSplits(t.Splits))
	for i := range t.Rows {
		r := &t.Rows[i]
		e, err := zoo.Lookup(r.Entry)
		if err != nil {
			return err
		}
		_, fp, err := t.RowProtocol(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %s  (%s)\n    entry %s: %s\n", r.RowID(), r.Label, r.Entry, oneLine(e.Summary))
		if o := r.Options; o != (zoo.RowOptions{}) {
			fmt.Fprintf(stdout, "    options: %s\n", rowOptions(o))
		}
		fmt.Fprintf(stdout, "    published: LL %s, RMSE %s; splits %s; protocol %s\n", r.LL, r.RMSE, zoo.FormatSplits(t.RowSplits(r)), fp)
	}
	fmt.Fprintln(stdout, "differences from the source's protocol:")
	for i, d := range t.Differences {
		fmt.Fprintf(stdout, "  %d. %s.\n     Why: %s.\n", i+1, strings.TrimSuffix(d.What, "."), strings.TrimSuffix(d.Why, "."))
	}
	return nil
}

// rowOptions writes a row's options as flags of gpzoo run would.
func rowOptions(o zoo.RowOptions) string {
	var parts []string
	for _, f := range []struct {
		name string
		v    int
	}{{"iters", o.Iters}, {"batch", o.BatchSize}, {"inducing", o.Inducing}, {"test-samples", o.TestSamples}} {
		if f.v > 0 {
			parts = append(parts, fmt.Sprintf("--%s %d", f.name, f.v))
		}
	}
	if o.NatGrad {
		parts = append(parts, "--natgrad")
	}
	if o.Optimizer != "" {
		parts = append(parts, "--optimizer "+o.Optimizer)
	}
	if o.LL != "" {
		parts = append(parts, "test LL: "+o.LL)
	}
	return strings.Join(parts, " ")
}

// tableRunFlags are the flags of table run and table work.
type tableRunFlags struct {
	rows, splits, results, data, nats, name *string
	redoStale, quiet, untilEmpty            *bool
	runners                                 *int
	security                                func() (cluster.Security, error)
}

func newTableRunFlags(fs *flag.FlagSet) *tableRunFlags {
	return &tableRunFlags{
		rows:       fs.String("rows", "", "row ID patterns"),
		splits:     fs.String("splits", "", "splits to run instead of the rows' own"),
		results:    fs.String("results", zoo.DefaultResultsDir, "results folder"),
		data:       fs.String("data", datasets.DefaultDir(), "benchmark data directory"),
		nats:       fs.String("nats", "", "NATS server URL (with JetStream)"),
		name:       fs.String("name", "", "runner name"),
		redoStale:  fs.Bool("redo-stale", false, "run stale results again and replace them"),
		quiet:      fs.Bool("quiet", false, "no training progress"),
		untilEmpty: fs.Bool("until-empty", false, "work: end when the queue is empty"),
		runners:    fs.Int("runners", 0, "runner processes to start on this machine"),
		security:   cluster.SecurityFlags(fs),
	}
}

// options returns the TableOptions the flags say, the event printer writing to stdout, and the Stop channel
// of SIGINT/SIGTERM (release with the returned function).
func (f *tableRunFlags) options(stdout, stderr io.Writer) (zoo.TableOptions, context.Context, func(), error) {
	o := zoo.TableOptions{Results: *f.results, Rows: *f.rows, DataDir: *f.data, RedoStale: *f.redoStale, Runner: *f.name}
	if *f.splits != "" {
		s, err := zoo.ParseSplits(*f.splits)
		if err != nil {
			return o, nil, nil, fmt.Errorf("--splits: %w", err)
		}
		o.Splits = s
	}
	if !*f.quiet {
		// A terminal gets one live progress line; a log file or pipe gets log/slog lines.
		if isTerminal(stderr) {
			o.Progress = stderr
		} else {
			o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
		}
	}
	var mu sync.Mutex
	o.Event = func(e zoo.TableEvent) {
		mu.Lock()
		defer mu.Unlock()
		line := fmt.Sprintf("%s: %s", e.Task.Key(), e.What)
		switch {
		case e.Err != nil:
			line += ": " + e.Err.Error()
		case e.Result != nil && e.Result.NTest > 0:
			line += ": " + strings.TrimSpace(strings.TrimPrefix(e.Result.Line(), fmt.Sprintf("%s split %d:", e.Result.Entry, e.Result.Split)))
		}
		fmt.Fprintln(stdout, line)
	}
	// The first SIGINT/SIGTERM stops after the current step (the run keeps its checkpoint); the second quits.
	ctx, stop := interruptContext()
	o.Stop = ctx.Done()
	return o, ctx, stop, nil
}

func tableRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table run", stderr)
	f := newTableRunFlags(fs)
	pos, err := parseTableFlags(fs, args)
	if err != nil {
		return err
	}
	t, err := oneTable("run", pos)
	if err != nil {
		return err
	}
	if *f.runners < 0 {
		return fmt.Errorf("table run: --runners %d: want a count ≥ 1", *f.runners)
	}
	if *f.untilEmpty || *f.name != "" {
		return fmt.Errorf("table run: --until-empty and --name are flags of table work")
	}
	sec, err := f.security()
	if err != nil {
		return fmt.Errorf("table run: %w", err)
	}
	o, ctx, stop, err := f.options(stdout, stderr)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(stdout, "gpzoo table run %s: %s (results in %s)\n", t.Name, t.Title, *f.results)
	var sum zoo.TableSummary
	if *f.nats == "" && *f.runners == 0 {
		sum, err = zoo.RunTable(t, o)
	} else {
		sum, err = spreadTable(ctx, t, o, f, sec, stdout)
	}
	fmt.Fprintf(stdout, "%s: %d runs finished now, %d done before, %d stale kept\n", t.Name, sum.Ran, sum.Done, sum.Stale)
	if ctx.Err() != nil && err != nil {
		fmt.Fprintf(stdout, "interrupted: the same command continues the table (the interrupted run resumes from its checkpoint)\n")
	}
	return err
}

// spreadTable queues the table's runs on a work queue (f.nats, or an embedded NATS server with JetStream on
// loopback with a fresh token when --nats is not given), starts f.runners runner processes of this binary
// (table work --until-empty) and collects the results.
func spreadTable(ctx context.Context, t *zoo.Table, o zoo.TableOptions, f *tableRunFlags, sec cluster.Security, stdout io.Writer) (zoo.TableSummary, error) {
	url := *f.nats
	if url == "" {
		tok := make([]byte, 16)
		if _, err := rand.Read(tok); err != nil {
			return zoo.TableSummary{}, err
		}
		store, err := os.MkdirTemp("", "gpzoo-table-queue-")
		if err != nil {
			return zoo.TableSummary{}, err
		}
		defer os.RemoveAll(store)
		sec = cluster.Security{Token: hex.EncodeToString(tok)}
		e, err := cluster.StartEmbedded(cluster.EmbeddedConfig{Token: sec.Token, JetStreamDir: store})
		if err != nil {
			return zoo.TableSummary{}, err
		}
		defer e.Shutdown()
		url = e.URL
	}
	q, err := cluster.OpenQueue(ctx, url, sec, cluster.QueueConfig{Name: zoo.TableQueueName})
	if err != nil {
		return zoo.TableSummary{}, err
	}
	defer q.Close()
	s, err := zoo.QueueTable(ctx, t, q, o)
	if err != nil {
		return zoo.TableSummary{}, err
	}
	var procs []*exec.Cmd
	if *f.runners > 0 && s.Waiting() > 0 {
		exe, err := os.Executable()
		if err != nil {
			return zoo.TableSummary{}, err
		}
		for i := range *f.runners {
			args := append([]string{"table", "work", "--nats", url, "--until-empty", "--results", *f.results, "--data", *f.data,
				"--name", fmt.Sprintf("%s-runner-%d", hostName(), i)}, sec.Args()...)
			if *f.quiet {
				args = append(args, "--quiet")
			}
			cmd := exec.Command(exe, args...)
			cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
			if sec.Token != "" {
				cmd.Env = append(os.Environ(), cluster.EnvToken+"="+sec.Token)
			}
			if err := cmd.Start(); err != nil {
				stopRunners(procs)
				return zoo.TableSummary{}, fmt.Errorf("table run: starting runner %d: %w", i, err)
			}
			procs = append(procs, cmd)
		}
		fmt.Fprintf(stdout, "%d runs queued; %d runner processes take them\n", s.Waiting(), len(procs))
	} else if s.Waiting() > 0 {
		fmt.Fprintf(stdout, "%d runs queued on %s: start runners (gpzoo table work --nats %s); their results land here as they finish\n", s.Waiting(), url, url)
	}
	sum, err := s.Collect(ctx)
	if ctx.Err() != nil {
		stopRunners(procs)
	}
	for i, p := range procs {
		if werr := p.Wait(); werr != nil && err == nil && ctx.Err() == nil {
			err = fmt.Errorf("table run: runner %d: %w", i, werr)
		}
	}
	return sum, err
}

// stopRunners asks the runner processes to stop (SIGINT: each gives its run back and keeps its checkpoint).
func stopRunners(procs []*exec.Cmd) {
	for _, p := range procs {
		if p.Process != nil {
			_ = p.Process.Signal(os.Interrupt)
		}
	}
}

func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "runner"
	}
	return h
}

func tableWork(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table work", stderr)
	f := newTableRunFlags(fs)
	pos, err := parseTableFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("table work takes no table (runners take any table's runs), got %q", pos)
	}
	if *f.nats == "" {
		return fmt.Errorf("table work: --nats URL is required (the server the runs are queued on)")
	}
	if *f.runners != 0 || *f.rows != "" || *f.splits != "" || *f.redoStale {
		return fmt.Errorf("table work: --runners, --rows, --splits and --redo-stale are flags of table run")
	}
	sec, err := f.security()
	if err != nil {
		return fmt.Errorf("table work: %w", err)
	}
	o, ctx, stop, err := f.options(stdout, stderr)
	if err != nil {
		return err
	}
	defer stop()
	o.Event = nil
	q, err := cluster.OpenQueue(ctx, *f.nats, sec, cluster.QueueConfig{Name: zoo.TableQueueName})
	if err != nil {
		return err
	}
	defer q.Close()
	return zoo.WorkTables(ctx, q, o, *f.untilEmpty)
}

func tableReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table report", stderr)
	results := fs.String("results", zoo.DefaultResultsDir, "results folder")
	all := fs.Bool("all", false, "every table")
	md := fs.String("markdown", "", "Markdown file")
	js := fs.String("json", "", "JSON file")
	pos, err := parseTableFlags(fs, args)
	if err != nil {
		return err
	}
	var tables []*zoo.Table
	switch {
	case *all && len(pos) > 0:
		return fmt.Errorf("table report: --all and table names exclude each other")
	case *all:
		tables = zoo.Tables()
	case len(pos) == 0:
		return fmt.Errorf("table report: name the tables or give --all")
	}
	for _, n := range pos {
		t, err := zoo.LookupTable(n)
		if err != nil {
			return err
		}
		tables = append(tables, t)
	}
	var mdb, jsb bytes.Buffer
	var reps []*zoo.TableReport
	for _, t := range tables {
		rep, err := t.Report(*results)
		if err != nil {
			return err
		}
		if err := rep.WriteMarkdown(&mdb); err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	if err := writeReportsJSON(&jsb, reps); err != nil {
		return err
	}
	if *md == "" && *js == "" {
		_, err := stdout.Write(mdb.Bytes())
		return err
	}
	for _, out := range []struct {
		path string
		b    []byte
	}{{*md, mdb.Bytes()}, {*js, jsb.Bytes()}} {
		if out.path == "" {
			continue
		}
		if err := atomicfile.WriteFile(out.path, out.b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", out.path)
	}
	return nil
}

// writeReportsJSON writes one report as its JSON object, several as an array.
func writeReportsJSON(w io.Writer, reps []*zoo.TableReport) error {
	if len(reps) == 1 {
		return reps[0].WriteJSON(w)
	}
	var parts [][]byte
	for _, r := range reps {
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			return err
		}
		parts = append(parts, bytes.TrimRight(b.Bytes(), "\n"))
	}
	_, err := fmt.Fprintf(w, "[\n%s\n]\n", bytes.Join(parts, []byte(",\n")))
	return err
}

// ErrReproductionStale is returned by table reproduction --check when the file differs from what the command
// writes.
var ErrReproductionStale = errors.New("REPRODUCTION.md is not what gpzoo table reproduction writes")

func tableReproduction(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table reproduction", stderr)
	results := fs.String("results", zoo.DefaultResultsDir, "results folder")
	out := fs.String("out", "REPRODUCTION.md", "the file")
	check := fs.Bool("check", false, "compare only")
	pos, err := parseTableFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("table reproduction: unexpected argument %q", pos)
	}
	var b bytes.Buffer
	if err := zoo.WriteReproduction(&b, zoo.PaperTables(), *results); err != nil {
		return err
	}
	if *check {
		have, err := os.ReadFile(*out)
		if err != nil {
			return err
		}
		if !bytes.Equal(have, b.Bytes()) {
			return fmt.Errorf("%w: %s (run gpzoo table reproduction --results %s --out %s)", ErrReproductionStale, *out, *results, *out)
		}
		fmt.Fprintf(stdout, "%s is up to date\n", *out)
		return nil
	}
	if err := atomicfile.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}
