package zoo

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Report pools results by entry and writes them as a Markdown table beside the published numbers (gpzoo report).
// Add results with Add or AddFile, then call WriteMarkdown. The zero value is empty and ready to use.
//
// Results of one entry from several files are pooled by split; a split of an entry that was already added is an
// error naming both files (pooling one split twice would bias the mean), whatever the seeds. Results of a table's
// row whose ID is not its entry's name (gpzoo table run: a row with options of its own, such as
// kin8nm-bb/dsdgp-3+natgrad) are pooled under the row's ID.
type Report struct {
	byEntry map[string][]sourced
}

// sourced is a result and the file it came from.
type sourced struct {
	r    *Result
	file string
}

// Add adds results read from file (the name only labels errors).
func (rep *Report) Add(file string, results []*Result) error {
	if rep.byEntry == nil {
		rep.byEntry = map[string][]sourced{}
	}
	for _, r := range results {
		if r == nil || r.Entry == "" {
			return fmt.Errorf("zoo: %s: %w: result without an entry", file, ErrBadResultFile)
		}
		key := poolKey(r)
		for _, s := range rep.byEntry[key] {
			if s.r.Split == r.Split {
				return fmt.Errorf("zoo: %s: %s split %d already comes from %s: %w", file, key, r.Split, s.file, ErrBadSplits)
			}
		}
		rep.byEntry[key] = append(rep.byEntry[key], sourced{r, file})
	}
	return nil
}

// AddFile reads the JSON result file path (one split or several, see ReadResults) and adds its results.
func (rep *Report) AddFile(path string) error {
	rs, err := LoadResults(path)
	if err != nil {
		return err
	}
	return rep.Add(path, rs)
}

// poolKey is the name a Report pools r under: its table row's ID when that is not the entry's name, else the
// entry.
func poolKey(r *Result) string {
	if r.Table != nil && r.Table.Row != "" && r.Table.Row != r.Entry {
		return r.Table.Row
	}
	return r.Entry
}

// ReportRow is one line of a Report: an entry's results pooled over splits, its published numbers and reference.
type ReportRow struct {
	*MultiResult
	// Reference is the entry's Reference ("" when the entry is not in this build's zoo).
	Reference string
	// Key is the name the row pools its results under: the entry, or a table row's ID.
	Key string
}

// Rows returns the report's rows sorted by entry name. Published is the entry's current Published text when the
// entry is in this build's zoo, else the one recorded in the results.
func (rep *Report) Rows() ([]ReportRow, error) {
	names := make([]string, 0, len(rep.byEntry))
	for n := range rep.byEntry {
		names = append(names, n)
	}
	slices.Sort(names)
	rows := make([]ReportRow, 0, len(names))
	for _, n := range names {
		rs := make([]*Result, len(rep.byEntry[n]))
		for i, s := range rep.byEntry[n] {
			rs[i] = s.r
		}
		m, err := NewMultiResult(rs)
		if err != nil {
			return nil, err
		}
		row := ReportRow{MultiResult: m, Key: n}
		if e, err := Lookup(m.Entry); err == nil {
			row.Reference = e.Reference
			if e.Published != "" {
				m.Published = e.Published
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// WriteMarkdown writes the report as a Markdown table, one row per entry: entry, data set, splits (n), test RMSE,
// test LL, test accuracy (each mean ± sample std over the splits), mean training seconds, the published numbers
// and the reference. Missing metrics are "—".
func (rep *Report) WriteMarkdown(w io.Writer) error {
	rows, err := rep.Rows()
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("zoo: report: no results")
	}
	var b strings.Builder
	b.WriteString("| entry | data set | splits (n) | test RMSE | test LL | accuracy | train s | published | reference |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		a := r.Aggregate
		secs := "—"
		if a.TrainSeconds != nil {
			secs = fmt.Sprintf("%.1f", a.TrainSeconds.Mean)
		}
		cells := []string{r.Key, r.Dataset, fmt.Sprintf("%s (%d)", FormatSplits(r.Splits), len(r.Splits)),
			a.TestRMSE.String(), a.TestLL.String(), a.TestAccuracy.String(), secs, orDash(r.Published), orDash(r.Reference)}
		for i, c := range cells {
			cells[i] = markdownCell(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// markdownCell escapes the pipes and flattens the newlines of a table cell.
func markdownCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
