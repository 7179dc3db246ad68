package zoo

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// Stat summarises one metric over several splits: its mean, its sample standard deviation (n−1 in the
// denominator) and the number of splits it was measured on.
type Stat struct {
	Mean float64 `json:"mean"`
	// Std is the sample standard deviation; nil (null in the JSON) when N < 2.
	Std *float64 `json:"std"`
	N   int      `json:"n"`
}

// NewStat returns the Stat of xs, or nil when xs is empty.
func NewStat(xs []float64) *Stat {
	if len(xs) == 0 {
		return nil
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	s := &Stat{Mean: mean, N: len(xs)}
	if len(xs) > 1 {
		ss := 0.0
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		sd := math.Sqrt(ss / float64(len(xs)-1))
		s.Std = &sd
	}
	return s
}

// String writes s as "mean ± std" with four significant digits for the mean and two for the standard deviation
// ("mean ± —" for a single split, "—" for a nil Stat).
func (s *Stat) String() string {
	if s == nil {
		return "—"
	}
	if s.Std == nil {
		return fmt.Sprintf("%.4g ± —", s.Mean)
	}
	return fmt.Sprintf("%.4g ± %.2g", s.Mean, *s.Std)
}

// Aggregate holds the mean ± std over splits of the metrics of a MultiResult. A metric no split reports is nil
// (null in the JSON).
type Aggregate struct {
	TestRMSE     *Stat `json:"test_rmse"`     // regression, original units
	TestLL       *Stat `json:"test_ll"`       // mean log predictive density per test point, over splits with n_test > 0
	TestAccuracy *Stat `json:"test_accuracy"` // classification
	// TestLLMomentMatched aggregates the deep-GP entries' moment-matched test LL (absent for other models).
	TestLLMomentMatched *Stat `json:"test_ll_moment_matched,omitempty"`
	TrainSeconds        *Stat `json:"train_seconds"`
}

// MultiResult is the outcome of running one entry on several splits (gpzoo run ENTRY --splits SPEC): the
// per-split Results, sorted by split, and their Aggregate. Its JSON keys are stable like Result's; a file holds
// either one Result or one MultiResult (told apart by the "results" key; see ReadResults).
type MultiResult struct {
	Entry   string `json:"entry"`
	Dataset string `json:"dataset"`
	Model   string `json:"model"`
	// Splits are the splits run, ascending; Seeds the distinct seeds of the runs, ascending (one for
	// RunSplits).
	Splits    []int     `json:"splits"`
	Seeds     []uint64  `json:"seeds"`
	Aggregate Aggregate `json:"aggregate"`
	Published string    `json:"published,omitempty"`
	Results   []*Result `json:"results"`
}

// NewMultiResult pools results of one entry, each on a different split, and computes their aggregate. It
// returns an error for no results, results of different entries, or a split that appears twice (wrapping
// ErrBadSplits).
func NewMultiResult(results []*Result) (*MultiResult, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("%w: no results", ErrBadSplits)
	}
	rs := slices.Clone(results)
	slices.SortStableFunc(rs, func(a, b *Result) int { return a.Split - b.Split })
	first := rs[0]
	m := &MultiResult{Entry: first.Entry, Dataset: first.Dataset, Model: first.Model, Published: first.Published, Results: rs}
	var rmse, ll, acc, llmm, secs []float64
	for i, r := range rs {
		if r == nil {
			return nil, fmt.Errorf("zoo: nil result")
		}
		if r.Entry != first.Entry {
			return nil, fmt.Errorf("zoo: cannot pool results of %s and %s", first.Entry, r.Entry)
		}
		if i > 0 && r.Split == rs[i-1].Split {
			return nil, fmt.Errorf("%w: %s split %d appears twice", ErrBadSplits, r.Entry, r.Split)
		}
		m.Splits = append(m.Splits, r.Split)
		if !slices.Contains(m.Seeds, r.Seed) {
			m.Seeds = append(m.Seeds, r.Seed)
		}
		if r.TestRMSE != nil {
			rmse = append(rmse, *r.TestRMSE)
		}
		if r.NTest > 0 {
			ll = append(ll, r.TestLL)
		}
		if r.TestAccuracy != nil {
			acc = append(acc, *r.TestAccuracy)
		}
		if r.TestLLMomentMatched != nil {
			llmm = append(llmm, *r.TestLLMomentMatched)
		}
		secs = append(secs, r.TrainSeconds)
	}
	slices.Sort(m.Seeds)
	m.Aggregate = Aggregate{TestRMSE: NewStat(rmse), TestLL: NewStat(ll), TestAccuracy: NewStat(acc),
		TestLLMomentMatched: NewStat(llmm), TrainSeconds: NewStat(secs)}
	return m, nil
}

// Summary returns a short human-readable report of the aggregate (the per-split summaries are the Results').
func (m *MultiResult) Summary() string {
	seeds := make([]string, len(m.Seeds))
	for i, s := range m.Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	s := fmt.Sprintf("%s  splits %s (n=%d)  seed %s: mean ± sample std over splits\n", m.Entry, FormatSplits(m.Splits),
		len(m.Splits), strings.Join(seeds, ","))
	a := m.Aggregate
	if a.TestRMSE != nil {
		s += fmt.Sprintf("  test RMSE = %v   test LL = %v\n", a.TestRMSE, a.TestLL)
	}
	if a.TestAccuracy != nil {
		s += fmt.Sprintf("  test accuracy = %v   test LL = %v\n", a.TestAccuracy, a.TestLL)
	}
	if a.TestLLMomentMatched != nil {
		s += fmt.Sprintf("  test LL (moment-matched) = %v\n", a.TestLLMomentMatched)
	}
	s += fmt.Sprintf("  train seconds = %v\n", a.TrainSeconds)
	return s + "  " + m.Compare() + "\n"
}

// Compare returns one line setting our aggregate metrics beside the entry's published numbers, e.g.
// "ours (3 splits): RMSE 2.071 ± 0.05, test LL −2.13 ± 0.02 | published: …".
func (m *MultiResult) Compare() string {
	a := m.Aggregate
	return compareLine(fmt.Sprintf("ours (%d splits)", len(m.Splits)), a.TestRMSE, a.TestLL, a.TestAccuracy, m.Published)
}

// compareLine renders "WHO: RMSE …, test LL …, accuracy … | published: …" with the metrics that are present.
func compareLine(who string, rmse, ll, acc *Stat, published string) string {
	var parts []string
	if rmse != nil {
		parts = append(parts, "RMSE "+rmse.String())
	}
	if ll != nil {
		parts = append(parts, "test LL "+ll.String())
	}
	if acc != nil {
		parts = append(parts, "accuracy "+acc.String())
	}
	return metricsLine(who, parts, published)
}

// metricsLine renders "WHO: PARTS | published: …" ("no test metrics" for no parts; no published part without
// published numbers).
func metricsLine(who string, parts []string, published string) string {
	if len(parts) == 0 {
		parts = append(parts, "no test metrics")
	}
	line := who + ": " + strings.Join(parts, ", ")
	if published != "" {
		line += " | published: " + published
	}
	return line
}

// WriteJSON writes m as one indented JSON object.
func (m *MultiResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// SaveJSON writes m to path (created or truncated).
func (m *MultiResult) SaveJSON(path string) error {
	return saveJSON(path, m.WriteJSON)
}

// saveJSON creates path and writes it with write.
func saveJSON(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("zoo: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("zoo: writing %s: %w", path, err)
	}
	return f.Close()
}
