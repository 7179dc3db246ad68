package datasets

import (
	"fmt"

	"strings"

	"gonum.org/v1/gonum/mat"
)

// Missing targets: a table read with several target columns (TableOptions.Targets) may leave a target cell
// empty, meaning that output is unobserved on that row. The row is kept (its inputs and its other outputs still
// inform the model); Dataset.Observed [N, P] holds 1 for an observed cell and 0 for a missing one, whose Y value is
// 0. Subsets, splits and standardisation carry the mask; the standardiser's target statistics are those of the
// observed cells. Models leave the missing cells out of their likelihood (zoo: the likelihood's mask).

// tableTargets returns the target columns o names (Target, or Targets), trimmed. Errors wrap ErrInvalid.
func tableTargets(o TableOptions) ([]string, error) {
	if o.Targets == nil {
		target := strings.TrimSpace(o.Target)
		if target == "" {
			return nil, fmt.Errorf("datasets: no target column given: %w", ErrInvalid)
		}
		return []string{target}, nil
	}
	if strings.TrimSpace(o.Target) != "" {
		return nil, fmt.Errorf("datasets: give one target column (Target) or several (Targets), not both: %w", ErrInvalid)
	}
	if o.Classify {
		return nil, fmt.Errorf("datasets: several target columns are real-valued outputs, not class labels: %w", ErrInvalid)
	}
	targets, err := cleanNames(o.Targets, "targets")
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("datasets: empty target list: %w", ErrInvalid)
	}
	return targets, nil
}

// checkObserved refuses a target column without any observed cell: nothing could be learnt about it.
func (t *Table) checkObserved(name string) error {
	n, p := t.Data.Observed.Dims()
	for j := range p {
		seen := false
		for i := 0; i < n && !seen; i++ {
			seen = t.Data.Observed.At(i, j) != 0
		}
		if !seen {
			return &FormatError{File: name, Msg: fmt.Sprintf("target column %q has no value: every cell is empty", truncate(t.Targets[j]))}
		}
	}
	return nil
}

// MissingTargets returns the number of missing target cells of d (0 without Observed).
func (d *Dataset) MissingTargets() int {
	if d == nil || d.Observed == nil {
		return 0
	}
	k := 0
	for _, v := range d.Observed.RawMatrix().Data {
		if v == 0 {
			k++
		}
	}
	return k
}

// IsObserved reports whether target cell (i, j) of d is observed (always, without Observed).
func (d *Dataset) IsObserved(i, j int) bool {
	return d.Observed == nil || d.Observed.At(i, j) != 0
}

// checkObservedShape checks that Observed, when set, is [N, P] of zeros and ones, with Y 0 in every missing cell,
// and that the targets are not class labels.
func (d *Dataset) checkObservedShape() error {
	if d.Observed == nil {
		return nil
	}
	if r, c := d.Observed.Dims(); r != d.N() || c != d.P() {
		return fmt.Errorf("datasets: Observed is [%d,%d] for Y [%d,%d]: %w", r, c, d.N(), d.P(), ErrShape)
	}
	if d.NumClasses > 0 {
		return fmt.Errorf("datasets: class labels cannot be missing (Observed is for real-valued targets): %w", ErrInvalid)
	}
	for i := range d.N() {
		for j, v := range d.Observed.RawRowView(i) {
			if v != 0 && v != 1 {
				return fmt.Errorf("datasets: Observed[%d,%d] = %v, want 0 or 1: %w", i, j, v, ErrInvalid)
			}
			if v == 0 && d.Y.At(i, j) != 0 {
				return fmt.Errorf("datasets: missing target cell [%d,%d] holds %v, want 0: %w", i, j, d.Y.At(i, j), ErrInvalid)
			}
		}
	}
	return nil
}

// maskedColumnStats is columnStats over the observed cells of each column of m (observed [N, P], 1 = observed).
// A column without an observed cell is an ErrEmpty.
func maskedColumnStats(m, observed *mat.Dense) (mean, std []float64, err error) {
	r, c := m.Dims()
	mean, std = make([]float64, c), make([]float64, c)
	for j := range c {
		var col []float64
		for i := range r {
			if observed.At(i, j) != 0 {
				col = append(col, m.At(i, j))
			}
		}
		if len(col) == 0 {
			return nil, nil, fmt.Errorf("datasets: target column %d has no observed value in these rows: %w", j, ErrEmpty)
		}
		mu, sd := columnStats(mat.NewDense(len(col), 1, col))
		mean[j], std[j] = mu[0], sd[0]
	}
	return mean, std, nil
}

// zeroMissing sets y's missing cells (observed 0) to 0.
func zeroMissing(y, observed *mat.Dense) {
	if observed == nil {
		return
	}
	r, c := y.Dims()
	for i := range r {
		for j := range c {
			if observed.At(i, j) == 0 {
				y.Set(i, j, 0)
			}
		}
	}
}

// PackObserved returns [y | observed] ([N, 2P]): the targets followed by their mask (1 observed, 0 missing; all
// ones when observed is nil), the training targets of a model whose likelihood leaves missing cells out (the
// mask travels with the targets through minibatch gathering). Missing cells of y are given as 0.
func PackObserved(y, observed *mat.Dense) *mat.Dense {
	n, p := y.Dims()
	out := mat.NewDense(n, 2*p, nil)
	for i := range n {
		row := out.RawRowView(i)
		for j := range p {
			o := 1.0
			if observed != nil {
				o = observed.At(i, j)
			}
			if o != 0 {
				row[j] = y.At(i, j)
			}
			row[p+j] = o
		}
	}
	return out
}
