package datasets

import (
	"fmt"
	"math"
)

// ColumnStats holds mergeable per-column statistics of a stream of rows: the count N, the means and M2, the
// sums of squared deviations from the mean. Rows are added one at a time by Welford's update (Welford 1962;
// Knuth, TAOCP vol. 2, §4.2.2) and partial statistics, of blocks of rows or of workers' shards, merged by
// Chan, Golub and LeVeque's pairwise formula (Chan et al. 1979, eq. 2.1b: M2 = M2_a + M2_b + δ²·n_a·n_b/n),
// so that statistics need neither the rows in memory nor a second pass. Each column is shifted by its first
// value (Shift; Chan et al. 1983, "shifted data"), so that a column whose mean is far larger than its spread
// keeps its digits as the two-pass formulas do. The fields are exported so that a worker can send its partial
// statistics to a server that merges them. Values of magnitude above about 1e154 overflow M2 (the two-pass
// FitStandardizer scales columns and does not); such columns get std 1.
type ColumnStats struct {
	N int
	// Shift is the first row added; Mean the means of the values minus Shift; M2 the sums of squared
	// deviations from the mean.
	Shift, Mean, M2 []float64
}

// NewColumnStats returns empty statistics of cols columns.
func NewColumnStats(cols int) *ColumnStats {
	return &ColumnStats{Shift: make([]float64, cols), Mean: make([]float64, cols), M2: make([]float64, cols)}
}

// Reset empties s, keeping its columns.
func (s *ColumnStats) Reset() {
	s.N = 0
	clear(s.Shift)
	clear(s.Mean)
	clear(s.M2)
}

// Add adds one row (its length must be s's column count; Add does not check).
func (s *ColumnStats) Add(row []float64) {
	if s.N == 0 {
		copy(s.Shift, row)
	}
	s.N++
	n := float64(s.N)
	for j, v := range row {
		v -= s.Shift[j]
		d := v - s.Mean[j]
		s.Mean[j] += d / n
		s.M2[j] += d * (v - s.Mean[j])
	}
}

// ColumnMean returns column j's mean.
func (s *ColumnStats) ColumnMean(j int) float64 { return s.Shift[j] + s.Mean[j] }

// Merge adds o's rows to s (Chan et al.'s formula). Errors: ErrShape for statistics of other columns.
func (s *ColumnStats) Merge(o *ColumnStats) error {
	if o == nil || len(o.Mean) != len(s.Mean) || len(o.M2) != len(s.M2) || len(o.Shift) != len(s.Shift) ||
		len(s.Mean) != len(s.M2) || len(s.Shift) != len(s.Mean) {
		return fmt.Errorf("datasets: merging column statistics of different columns: %w", ErrShape)
	}
	switch {
	case o.N == 0:
		return nil
	case s.N == 0:
		s.N = o.N
		copy(s.Shift, o.Shift)
		copy(s.Mean, o.Mean)
		copy(s.M2, o.M2)
		return nil
	}
	na, nb := float64(s.N), float64(o.N)
	n := na + nb
	for j := range s.Mean {
		d := (o.Shift[j] - s.Shift[j]) + (o.Mean[j] - s.Mean[j]) // o's mean minus s's
		s.Mean[j] += d * (nb / n)
		s.M2[j] += o.M2[j] + d*d*(na*nb/n)
	}
	s.N += o.N
	return nil
}

// Std returns the population standard deviation of column j, √(M2/N).
func (s *ColumnStats) Std(j int) float64 { return math.Sqrt(s.M2[j] / float64(s.N)) }

// Standardizer returns the standardisation of a data set whose first inputs columns are inputs and the rest
// targets, as FitStandardizer defines it (population std; 0 or a non-finite std becomes 1; with standardizeY
// false the targets' transform is the identity). Errors: ErrEmpty without rows, ErrShape for inputs outside
// [1, columns].
func (s *ColumnStats) Standardizer(inputs int, standardizeY bool) (*Standardizer, error) {
	if s.N == 0 {
		return nil, fmt.Errorf("datasets: standardiser from statistics of no rows: %w", ErrEmpty)
	}
	if inputs < 1 || inputs > len(s.Mean) {
		return nil, fmt.Errorf("datasets: %d input columns of %d: %w", inputs, len(s.Mean), ErrShape)
	}
	p := len(s.Mean) - inputs
	st := &Standardizer{XMean: make([]float64, inputs), XStd: make([]float64, inputs), YMean: make([]float64, p), YStd: make([]float64, p)}
	for j := range s.Mean {
		m, sd := s.ColumnMean(j), s.Std(j)
		if !(sd > 0) || math.IsInf(sd, 0) {
			sd = 1
		}
		if j < inputs {
			st.XMean[j], st.XStd[j] = m, sd
		} else if standardizeY {
			st.YMean[j-inputs], st.YStd[j-inputs] = m, sd
		} else {
			st.YStd[j-inputs] = 1
		}
	}
	return st, nil
}
