package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/zoo"
)

// envCLIMain makes the test binary the gpzoo command: TestMain runs Main with its arguments and exits, so the
// tests start real gpzoo processes (the runners of gpzoo table run --runners K, the workers of --workers K:
// commands that run os.Executable()). TestMain sets it for the whole run, so that every process a test spawns
// from the test binary is gpzoo, never the test suite again.
const envCLIMain = "GPZOO_CLI_TEST_MAIN"

// tinyTable is a table of short runs on the Boston data embedded in the binary (no data folder needed):
// TestMain registers it in the test binary and in its child processes alike.
const tinyTable = "test-tiny"

func TestMain(m *testing.M) {
	err := zoo.RegisterTable(&zoo.Table{Name: tinyTable, Title: "tiny", Reproduces: "nothing (a test)", Protocol: "short runs",
		Splits: []int{0, 1}, Rows: []zoo.Row{
			{Entry: "boston-bb/svgp", Label: "SVGP", Options: zoo.RowOptions{Iters: 8, Inducing: 5, BatchSize: 64}},
			{Entry: "boston-bb/sgpr", Label: "SGPR", Options: zoo.RowOptions{Iters: 3, Inducing: 5}},
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if os.Getenv(envCLIMain) != "" {
		if err := Main(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "gpzoo:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if err := os.Setenv(envCLIMain, "1"); err != nil { // the children of this run: gpzoo (above)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// reportMetrics runs gpzoo table report --json on results and returns each row's metric columns (timing,
// machine, commit and runner columns aside).
func reportMetrics(t *testing.T, results string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	if err := Main([]string{"table", "report", tinyTable, "--results", results, "--json", path}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep zoo.TableReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	for _, r := range rep.Rows {
		fmt.Fprintf(&s, "%s %s splits %v LL %+v RMSE %+v steps %v %v\n", r.ID, r.Status, r.Splits, r.TestLL, r.TestRMSE, r.Steps, r.StopReasons)
	}
	return s.String()
}

// gpzoo table run writes one result per run and skips them when run again; two runner processes taking the runs
// from the embedded NATS server's queue (--runners 2) give the same report, metric for metric, as one local run.
func TestTableRunLocalAndSpread(t *testing.T) {
	local := t.TempDir()
	var out bytes.Buffer
	if err := Main([]string{"table", "run", tinyTable, "--results", local, "--quiet"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if n := strings.Count(out.String(), ": finished: test"); n != 4 || !strings.Contains(out.String(), "4 runs finished now, 0 done before") {
		t.Fatalf("local run:\n%s", out.String())
	}
	out.Reset()
	if err := Main([]string{"table", "run", tinyTable, "--results", local, "--quiet"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), ": done before: test"); n != 4 || !strings.Contains(out.String(), "0 runs finished now, 4 done before") {
		t.Fatalf("second run:\n%s", out.String())
	}
	want := reportMetrics(t, local)
	if strings.Count(want, " done splits [0 1] ") != 2 {
		t.Fatalf("local report:\n%s", want)
	}

	spread := t.TempDir()
	out.Reset()
	if err := Main([]string{"table", "run", tinyTable, "--runners", "2", "--results", spread, "--quiet"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "4 runs queued; 2 runner processes take them") || strings.Count(out.String(), ": collected: test") != 4 {
		t.Fatalf("spread run:\n%s", out.String())
	}
	if got := reportMetrics(t, spread); got != want {
		t.Errorf("report of two runner processes:\n%s\none runner's:\n%s", got, want)
	}
	rep, err := zoo.LookupTable(tinyTable)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rep.Report(spread)
	if err != nil {
		t.Fatal(err)
	}
	runners := map[string]bool{}
	for _, row := range r.Rows {
		for _, name := range row.Runners {
			if !strings.Contains(name, "-runner-") {
				t.Errorf("row %s ran on %q, not a runner process", row.ID, name)
			}
			runners[name] = true
		}
	}
	t.Logf("runner processes that took runs: %v", runners)
}

// The report and REPRODUCTION.md: report writes Markdown and JSON; REPRODUCTION.md at the repository's root is
// what gpzoo table reproduction writes from results/ (no benchmark data needed), and --check says when not.
func TestTableReportAndReproduction(t *testing.T) {
	var out bytes.Buffer
	if err := Main([]string{"table", "reproduction", "--results", "../results", "--out", "../REPRODUCTION.md", "--check"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("%v: regenerate it with `go run ./cmd/gpzoo table reproduction`", err)
	}
	stale := filepath.Join(t.TempDir(), "R.md")
	os.WriteFile(stale, []byte("# old\n"), 0o644)
	if err := Main([]string{"table", "reproduction", "--results", "../results", "--out", stale, "--check"}, &out, &bytes.Buffer{}); !errors.Is(err, ErrReproductionStale) {
		t.Errorf("a stale file passed --check: %v", err)
	}
	fresh := filepath.Join(t.TempDir(), "R.md")
	if err := Main([]string{"table", "reproduction", "--results", "../results", "--out", fresh}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(fresh)
	b, _ := os.ReadFile("../REPRODUCTION.md")
	if !bytes.Equal(a, b) {
		t.Error("the written file differs from REPRODUCTION.md")
	}
	for _, tab := range zoo.PaperTables() {
		if !bytes.Contains(a, []byte("## "+tab.Name+": ")) || !bytes.Contains(a, []byte(tab.Command())) {
			t.Errorf("REPRODUCTION.md lacks table %s or its command", tab.Name)
		}
	}

	results := t.TempDir()
	if err := Main([]string{"table", "run", tinyTable, "--results", results, "--rows", "svgp", "--splits", "1", "--quiet"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Main([]string{"table", "report", tinyTable, "--results", results}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## test-tiny: tiny", "| SGPR `boston-bb/sgpr` | — | not run |", "1 (1); planned 0,1", "8 (iterations ×1)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, out.String())
		}
	}
	md, js := filepath.Join(results, "r.md"), filepath.Join(results, "r.json")
	if err := Main([]string{"table", "report", "--all", "--results", results, "--markdown", md, "--json", js}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var reps []zoo.TableReport
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &reps) != nil || len(reps) != len(zoo.Tables()) {
		t.Errorf("--all --json: %d reports, %v", len(reps), err)
	}
	if b, _ := os.ReadFile(md); !bytes.Contains(b, []byte("## havasi-protein: ")) {
		t.Error("--all --markdown lacks a table")
	}
}

// Bad input: unknown tables and subcommands, malformed flags, and a malformed result file, which stops the run
// before anything runs and is left as it was.
func TestTableCommandRefusals(t *testing.T) {
	results := t.TempDir()
	bad := zoo.ResultPath(results, zoo.Task{Table: tinyTable, Row: "boston-bb/sgpr", Split: 1})
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("{truncated"), 0o644)
	for _, c := range []struct {
		args []string
		want error
		text string
	}{
		{[]string{"table", "run", "no-such"}, zoo.ErrUnknownTable, "test-tiny"},
		{[]string{"table", "show"}, nil, "one table"},
		{[]string{"table", "frobnicate"}, nil, "unknown subcommand"},
		{[]string{"table", "run", tinyTable, "--splits", "2-1"}, zoo.ErrBadSplits, ""},
		{[]string{"table", "run", tinyTable, "--rows", "nothing*"}, nil, "no row matches"},
		{[]string{"table", "run", tinyTable, "--runners", "-1"}, nil, "--runners"},
		{[]string{"table", "run", tinyTable, "--until-empty"}, nil, "table work"},
		{[]string{"table", "work"}, nil, "--nats URL is required"},
		{[]string{"table", "work", "--nats", "nats://127.0.0.1:1", "--rows", "x"}, nil, "flags of table run"},
		{[]string{"table", "report"}, nil, "--all"},
		{[]string{"table", "report", "--all", tinyTable}, nil, "exclude"},
		{[]string{"table", "run", tinyTable, "--results", results, "--quiet"}, zoo.ErrBadResultFile, bad},
		{[]string{"table", "report", tinyTable, "--results", results}, zoo.ErrBadResultFile, bad},
	} {
		var out bytes.Buffer
		err := Main(c.args, &out, &bytes.Buffer{})
		if err == nil || c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%q: %v", c.args, err)
		}
		if strings.Contains(out.String(), ": run") {
			t.Errorf("%q ran something:\n%s", c.args, out.String())
		}
	}
	if b, _ := os.ReadFile(bad); string(b) != "{truncated" {
		t.Error("the malformed result file changed")
	}
	var out bytes.Buffer
	if err := Main([]string{"table", "help"}, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), "gpzoo table run TABLE --runners K") {
		t.Errorf("table help: %v", err)
	}
	out.Reset()
	if err := Main([]string{"table", "list", "--results", results}, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), "havasi-kin8nm") ||
		!strings.Contains(out.String(), "test-tiny            2     ?") {
		t.Errorf("table list: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := Main([]string{"table", "show", "dsdgp-kin8nm"}, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), "--iters 10200 --natgrad") {
		t.Errorf("table show: %v\n%s", err, out.String())
	}
}
