package zoo

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// PairedRow compares a report row with a baseline row on the same data set split by split: the mean over the
// splits both ran (the same split and seed) of the row's metric minus the baseline's. Splits of one data set
// share their test rows, so the paired difference's standard error, Std/√N, is far smaller than the spread of
// either row's mean over splits: it tells a consistent small gain from noise.
type PairedRow struct {
	// Key and Baseline are the two rows' pooling keys (entries or table rows).
	Key, Baseline string
	Dataset       string
	// Splits are the shared splits, in the row's order.
	Splits []int
	// TestLL, TestAccuracy and TestRMSE are the Stats of the per-split differences (row − baseline); nil where
	// either row lacks the metric.
	TestLL, TestAccuracy, TestRMSE *Stat
	// HigherLL counts the shared splits where the row's test LL is above the baseline's.
	HigherLL int
}

// Paired pairs each row with the row on its data set whose key names model baseline (the part after the
// first "/", as german/gpr-laplace names gpr-laplace), over the splits both ran. Rows without such a baseline,
// or sharing no split with it, are left out; so is the baseline itself. It is an error when no row pairs.
func (rep *Report) Paired(baseline string) ([]PairedRow, error) {
	rows, err := rep.Rows()
	if err != nil {
		return nil, err
	}
	base := map[string]string{} // data set → the baseline's key
	for _, r := range rows {
		if _, model, ok := strings.Cut(r.Key, "/"); ok && model == baseline {
			base[r.Dataset] = r.Key
		}
	}
	type splitSeed struct {
		split int
		seed  uint64
	}
	var out []PairedRow
	for _, r := range rows {
		bk, ok := base[r.Dataset]
		if !ok || bk == r.Key {
			continue
		}
		byRun := map[splitSeed]*Result{}
		for _, s := range rep.byEntry[bk] {
			byRun[splitSeed{s.r.Split, s.r.Seed}] = s.r
		}
		p := PairedRow{Key: r.Key, Baseline: bk, Dataset: r.Dataset}
		var ll, acc, rmse []float64
		for _, s := range rep.byEntry[r.Key] {
			a := s.r
			b, ok := byRun[splitSeed{a.Split, a.Seed}]
			if !ok {
				continue
			}
			p.Splits = append(p.Splits, a.Split)
			if a.NTest > 0 && b.NTest > 0 {
				ll = append(ll, a.TestLL-b.TestLL)
				if a.TestLL > b.TestLL {
					p.HigherLL++
				}
			}
			if a.TestAccuracy != nil && b.TestAccuracy != nil {
				acc = append(acc, *a.TestAccuracy-*b.TestAccuracy)
			}
			if a.TestRMSE != nil && b.TestRMSE != nil {
				rmse = append(rmse, *a.TestRMSE-*b.TestRMSE)
			}
		}
		if len(p.Splits) == 0 {
			continue
		}
		slices.Sort(p.Splits)
		p.TestLL, p.TestAccuracy, p.TestRMSE = NewStat(ll), NewStat(acc), NewStat(rmse)
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("zoo: report: no row pairs with a baseline %q on its data set (a key DATASET/%s)", baseline, baseline)
	}
	return out, nil
}

// WritePairedMarkdown writes Paired(baseline) as a Markdown table: row, baseline, shared splits (n), and the
// mean ± standard error of the paired differences in test LL, accuracy and test RMSE, with the number of splits
// where the row's test LL is the higher.
func (rep *Report) WritePairedMarkdown(w io.Writer, baseline string) error {
	ps, err := rep.Paired(baseline)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("| entry | against | splits (n) | Δ test LL (± s.e.) | higher test LL on | Δ accuracy (± s.e.) | Δ test RMSE (± s.e.) |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, p := range ps {
		higher := "—"
		if p.TestLL != nil {
			higher = fmt.Sprintf("%d of %d", p.HigherLL, p.TestLL.N)
		}
		cells := []string{p.Key, p.Baseline, fmt.Sprintf("%s (%d)", FormatSplits(p.Splits), len(p.Splits)),
			stdErr(p.TestLL), higher, stdErr(p.TestAccuracy), stdErr(p.TestRMSE)}
		for i, c := range cells {
			cells[i] = markdownCell(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// stdErr writes s as "mean ± standard error" (Std/√N), signed, with two significant digits for the error ("—"
// for nil, "mean ± —" for one split).
func stdErr(s *Stat) string {
	if s == nil {
		return "—"
	}
	if s.Std == nil {
		return fmt.Sprintf("%+.4g ± —", s.Mean)
	}
	return fmt.Sprintf("%+.4g ± %.2g", s.Mean, *s.Std/math.Sqrt(float64(s.N)))
}
