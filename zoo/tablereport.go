package zoo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// TableReport is a table's report: its definition beside what the results folder holds, row by row (gpzoo table
// report; REPRODUCTION.md). Its JSON keys are stable like Result's.
type TableReport struct {
	Table      string `json:"table"`
	Title      string `json:"title"`
	Reproduces string `json:"reproduces"`
	Protocol   string `json:"protocol"`
	Command    string `json:"command"`
	// Data names the benchmark data sets the table reads ("" for embedded data).
	Data        string        `json:"data,omitempty"`
	Differences []Difference  `json:"differences"`
	Rows        []ReportedRow `json:"rows"`
	Compute     TableCompute  `json:"compute"`
}

// ReportedRow is one row of a TableReport: the published numbers and gpzoo's over the row's current results
// (those of its protocol as it stands; stale ones are listed apart and left out of the means).
type ReportedRow struct {
	ID      string     `json:"id"`
	Label   string     `json:"label"`
	Entry   string     `json:"entry"`
	Options RowOptions `json:"options"`
	// Planned are the row's splits by default; Splits those with a current result (any split, planned or
	// not), Stale those with a result of another protocol only.
	Planned []int `json:"planned_splits"`
	Splits  []int `json:"splits"`
	Stale   []int `json:"stale_splits,omitempty"`
	// Status is "done" (every planned split has a result), "partial" or "not run".
	Status        string     `json:"status"`
	PublishedLL   *Published `json:"published_test_ll"`
	PublishedRMSE *Published `json:"published_test_rmse"`
	// TestLL is the mean ± sample std of the row's test LL (LLKind says which: the entry's test_ll, or the
	// moment-matched Gaussian's), TestRMSE of its RMSE; nil when not run.
	TestLL   *Stat  `json:"test_ll"`
	LLKind   string `json:"test_ll_kind"`
	TestRMSE *Stat  `json:"test_rmse"`
	// Per split (in Splits' order): the steps taken and why training stopped.
	Steps       []int    `json:"steps"`
	StopReasons []string `json:"stop_reasons"`
	// TrainSeconds is the mean ± std over splits of each run's training wall time (over all its sessions);
	// TrainSecondsTotal and RunSecondsTotal the sums of training and whole-run wall times.
	TrainSeconds      *Stat    `json:"train_seconds"`
	TrainSecondsTotal float64  `json:"train_seconds_total"`
	RunSecondsTotal   float64  `json:"run_seconds_total"`
	Machines          []string `json:"machines"`
	Commits           []string `json:"commits"`
	Runners           []string `json:"runners"`
	Dates             []string `json:"dates"` // the first and last run's dates
}

// TableCompute sums the compute of a table's current results.
type TableCompute struct {
	Runs              int      `json:"runs"`
	TrainSecondsTotal float64  `json:"train_seconds_total"`
	RunSecondsTotal   float64  `json:"run_seconds_total"`
	Machines          []string `json:"machines"`
	RowsNotRun        int      `json:"rows_not_run"`
}

// Report reads the table's results from the results folder dir and returns its report. Malformed result files
// are errors naming them (ErrBadResultFile).
func (t *Table) Report(dir string) (*TableReport, error) {
	rep := &TableReport{Table: t.Name, Title: t.Title, Reproduces: t.Reproduces, Protocol: t.Protocol,
		Command: t.Command(), Data: t.Data, Differences: t.Differences}
	machines := map[string]bool{}
	for i := range t.Rows {
		row := &t.Rows[i]
		rr, err := t.reportRow(dir, row)
		if err != nil {
			return nil, err
		}
		rep.Compute.Runs += len(rr.Splits)
		rep.Compute.TrainSecondsTotal += rr.TrainSecondsTotal
		rep.Compute.RunSecondsTotal += rr.RunSecondsTotal
		for _, m := range rr.Machines {
			machines[m] = true
		}
		if rr.Status == "not run" {
			rep.Compute.RowsNotRun++
		}
		rep.Rows = append(rep.Rows, rr)
	}
	rep.Compute.Machines = slices.Sorted(maps.Keys(machines))
	return rep, nil
}

// Command is the command that runs the table.
func (t *Table) Command() string {
	if t.Data == "" {
		return "gpzoo table run " + t.Name
	}
	return "gpzoo table run " + t.Name + " --data DIR"
}

// reportRow gathers a row's results: every split-K.json of its folder (the planned splits and any other).
func (t *Table) reportRow(dir string, row *Row) (ReportedRow, error) {
	id := row.RowID()
	rr := ReportedRow{ID: id, Label: row.Label, Entry: row.Entry, Options: row.Options, Planned: t.RowSplits(row),
		PublishedLL: row.LL, PublishedRMSE: row.RMSE, LLKind: "test_ll"}
	if row.Options.LL == LLMomentMatched {
		rr.LLKind = "test_ll_moment_matched"
	}
	splits, err := resultSplits(dir, t.Name, id)
	if err != nil {
		return rr, err
	}
	var ll, rmse, secs []float64
	machines, commits, runners := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var dates []string
	for _, k := range splits {
		r, st, err := t.LoadTaskResult(dir, Task{Table: t.Name, Row: id, Split: k})
		if err != nil {
			return rr, err
		}
		switch st {
		case TaskMissing:
			continue
		case TaskStale:
			rr.Stale = append(rr.Stale, k)
			continue
		}
		rr.Splits = append(rr.Splits, k)
		v := r.TestLL
		if row.Options.LL == LLMomentMatched && r.TestLLMomentMatched != nil {
			v = *r.TestLLMomentMatched
		}
		ll = append(ll, v)
		switch {
		case t.StandardisedRMSE && r.TestRMSEStandardised != nil:
			rmse = append(rmse, *r.TestRMSEStandardised)
		case !t.StandardisedRMSE && r.TestRMSE != nil:
			rmse = append(rmse, *r.TestRMSE)
		}
		rr.Steps, rr.StopReasons = append(rr.Steps, r.Iters), append(rr.StopReasons, r.StopReason)
		secs = append(secs, r.Table.TrainSecondsTotal)
		rr.TrainSecondsTotal += r.Table.TrainSecondsTotal
		rr.RunSecondsTotal += r.Table.RunSeconds
		machines[r.Machine.String()] = true
		commits[r.VCS.String()] = true
		runners[r.Table.Runner] = true
		if r.Date != "" {
			dates = append(dates, r.Date)
		}
	}
	rr.TestLL, rr.TestRMSE, rr.TrainSeconds = NewStat(ll), NewStat(rmse), NewStat(secs)
	rr.Machines, rr.Commits, rr.Runners = slices.Sorted(maps.Keys(machines)), slices.Sorted(maps.Keys(commits)), slices.Sorted(maps.Keys(runners))
	if len(dates) > 0 {
		slices.Sort(dates)
		rr.Dates = []string{dates[0], dates[len(dates)-1]}
	}
	rr.Status = "not run"
	if len(rr.Splits) > 0 {
		rr.Status = "done"
		for _, k := range rr.Planned {
			if !slices.Contains(rr.Splits, k) {
				rr.Status = "partial"
			}
		}
	}
	return rr, nil
}

// resultSplits returns the splits K of the files split-K.json in the row's results folder, ascending.
func resultSplits(dir, table, row string) ([]int, error) {
	folder := filepath.Dir(ResultPath(dir, Task{Table: table, Row: row, Split: 0}))
	entries, err := os.ReadDir(folder)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("zoo: the results folder: %w", err)
	}
	var ks []int
	for _, de := range entries {
		mid, ok := strings.CutPrefix(de.Name(), "split-")
		mid, ok2 := strings.CutSuffix(mid, ".json")
		if k, err := strconv.Atoi(mid); ok && ok2 && err == nil && k >= 0 && strconv.Itoa(k) == mid && !de.IsDir() {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks, nil
}

// WriteJSON writes the report as one indented JSON object.
func (rep *TableReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// WriteMarkdown writes the report as a Markdown section: the title, what it reproduces, the command, the
// protocol, the compute its results took, the table (published beside gpzoo's mean ± std, splits, steps and
// why training stopped, wall time, machine and commit; rows without results "not run") and the differences
// from the paper's protocol with their reasons.
func (rep *TableReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s: %s\n\n", rep.Table, rep.Title)
	fmt.Fprintf(&b, "Reproduces %s.\n\n", rep.Reproduces)
	fmt.Fprintf(&b, "Command: `%s`", rep.Command)
	if rep.Data != "" {
		fmt.Fprintf(&b, " (DIR holds the benchmark data: `gpzoo data fetch %s --data DIR`)", rep.Data)
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(&b, "Protocol: %s\n\n", rep.Protocol)
	c := rep.Compute
	if c.Runs == 0 {
		fmt.Fprintf(&b, "Compute: nothing run yet (%d rows not run).\n\n", c.RowsNotRun)
	} else {
		fmt.Fprintf(&b, "Compute: %d runs, %s of training, %s in all (data, models, scoring), on %s", c.Runs,
			duration(c.TrainSecondsTotal), duration(c.RunSecondsTotal), strings.Join(c.Machines, "; "))
		if c.RowsNotRun > 0 {
			fmt.Fprintf(&b, "; %d rows not run", c.RowsNotRun)
		}
		b.WriteString(".\n\n")
	}
	b.WriteString("| row | published LL | gpzoo LL | Δ LL | published RMSE | gpzoo RMSE | splits (n) | steps (stopped) | train s per split (total) | machine | commit |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	mm := false
	for _, r := range rep.Rows {
		label := fmt.Sprintf("%s `%s`", r.Label, r.ID)
		if r.Status == "not run" {
			splits := "not run (planned " + FormatSplits(r.Planned) + ")"
			if len(r.Stale) > 0 {
				splits += "; stale: " + FormatSplits(r.Stale)
			}
			cells := []string{label, r.PublishedLL.String(), "not run", "", r.PublishedRMSE.String(), "", splits, "", "", "", ""}
			writeRow(&b, cells)
			continue
		}
		ll := r.TestLL.String()
		if r.LLKind == "test_ll_moment_matched" {
			ll += " (mm)"
			mm = true
		}
		delta := ""
		if r.PublishedLL != nil && r.TestLL != nil {
			delta = fmt.Sprintf("%+.3f", r.TestLL.Mean-r.PublishedLL.Mean)
		}
		splits := fmt.Sprintf("%s (%d)", FormatSplits(r.Splits), len(r.Splits))
		if r.Status == "partial" {
			splits += "; planned " + FormatSplits(r.Planned)
		}
		if len(r.Stale) > 0 {
			splits += "; stale: " + FormatSplits(r.Stale)
		}
		secs := fmt.Sprintf("%.0f (%s)", r.TrainSeconds.Mean, duration(r.TrainSecondsTotal))
		cells := []string{label, r.PublishedLL.String(), ll, delta, r.PublishedRMSE.String(), r.TestRMSE.String(), splits,
			stepsCell(r.Steps, r.StopReasons), secs, strings.Join(r.Machines, "; "), strings.Join(r.Commits, ", ")}
		writeRow(&b, cells)
	}
	b.WriteString("\n")
	if mm {
		b.WriteString("(mm): the moment-matched Gaussian's test LL, as the source scores it.\n\n")
	}
	b.WriteString("Differences from the source's protocol:\n\n")
	for i, d := range rep.Differences {
		fmt.Fprintf(&b, "%d. %s. Why: %s.\n", i+1, oneSentence(d.What), oneSentence(d.Why))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRow(b *strings.Builder, cells []string) {
	for i, c := range cells {
		cells[i] = markdownCell(c)
	}
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// oneSentence drops a final full stop (the report adds its own).
func oneSentence(s string) string { return strings.TrimSuffix(strings.TrimSpace(s), ".") }

// stepsCell writes the steps taken ("5000", or "412–1033" when they differ) and why training stopped, each
// reason with its count: "5000 (iterations ×3)".
func stepsCell(steps []int, reasons []string) string {
	if len(steps) == 0 {
		return ""
	}
	lo, hi := slices.Min(steps), slices.Max(steps)
	s := fmt.Sprint(lo)
	if hi != lo {
		s = fmt.Sprintf("%d–%d", lo, hi)
	}
	count := map[string]int{}
	var order []string
	for _, r := range reasons {
		if r == "" {
			r = "—"
		}
		if count[r] == 0 {
			order = append(order, r)
		}
		count[r]++
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%s ×%d", r, count[r])
	}
	return s + " (" + strings.Join(parts, ", ") + ")"
}

// duration writes seconds as "42 s", "12.3 min" or "4.56 h".
func duration(s float64) string {
	switch {
	case s < 100:
		return fmt.Sprintf("%.0f s", s)
	case s < 6000:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.2f h", s/3600)
}

// paperTables are the tables gpzoo reproduces (tables.go), in REPRODUCTION.md's order.
var paperTables []string

// PaperTables returns the tables gpzoo itself reproduces (not those a program registers), in REPRODUCTION.md's
// order.
func PaperTables() []*Table {
	out := make([]*Table, 0, len(paperTables))
	for _, n := range paperTables {
		t, _ := LookupTable(n)
		out = append(out, t)
	}
	return out
}

// WriteReproduction writes REPRODUCTION.md: for each of tables its report (WriteMarkdown) from the results
// folder dir, after a header saying how the file is made. It is a function of the definitions and the result
// files only (no clock, no machine), so the file in the repository can be checked against it.
func WriteReproduction(w io.Writer, tables []*Table, dir string) error {
	var b strings.Builder
	b.WriteString("# Reproducing the papers' tables\n\n")
	b.WriteString("This file is generated: `gpzoo table reproduction` writes it from the table definitions (zoo/tables.go) and the " +
		"result files in results/ (one JSON file per run: results/TABLE/ROW/split-K.json, with the run's metrics, steps, stop " +
		"reason, wall time, machine, commit and date). Do not edit it by hand; after adding results, run the command again (a test " +
		"checks that this file is what it writes). How to run a table, resume it and spread it over machines: docs/tables.md.\n\n")
	b.WriteString("Each table gives the command that runs it, the compute its results took, gpzoo's mean ± sample standard deviation " +
		"over the splits run beside the published mean ± std (\"—\" where the source gives no spread), and every difference from the " +
		"source's protocol with its reason. Rows without results are marked \"not run\". Δ LL is gpzoo's mean minus the published mean.\n\n")
	var total TableCompute
	var reps []*TableReport
	for _, t := range tables {
		rep, err := t.Report(dir)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		total.Runs += rep.Compute.Runs
		total.TrainSecondsTotal += rep.Compute.TrainSecondsTotal
		total.RunSecondsTotal += rep.Compute.RunSecondsTotal
	}
	fmt.Fprintf(&b, "Tables: %d; runs with results: %d; training time %s, %s in all.\n\n", len(reps), total.Runs,
		duration(total.TrainSecondsTotal), duration(total.RunSecondsTotal))
	for _, rep := range reps {
		if err := rep.WriteMarkdown(&b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}
