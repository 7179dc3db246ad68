package datasets

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Dataset is a table of N points: inputs X [N, D] (rows are points) and
// targets Y [N, P]. For regression P is usually 1 and NumClasses is 0; for
// classification Y is [N, 1] holding labels 0..NumClasses-1 as float64.
// FeatureNames, when non-nil, has length D.
type Dataset struct {
	Name         string
	X            *mat.Dense
	Y            *mat.Dense
	FeatureNames []string
	NumClasses   int
	// Observed, when non-nil, is [N, P]: 1 where Y's cell is observed, 0 where that target is missing on that
	// row (an empty cell of a table read with several targets, TableOptions.Targets), Y holding 0 there
	// (missing.go). nil: every cell observed.
	Observed *mat.Dense
}

// N returns the number of points (rows of X), 0 for a nil dataset or nil X.
func (d *Dataset) N() int {
	if d == nil || d.X == nil || d.X.IsEmpty() {
		return 0
	}
	r, _ := d.X.Dims()
	return r
}

// D returns the input dimension (columns of X), 0 for a nil dataset or nil X.
func (d *Dataset) D() int {
	if d == nil || d.X == nil || d.X.IsEmpty() {
		return 0
	}
	_, c := d.X.Dims()
	return c
}

// P returns the number of target columns (columns of Y), 0 when Y is nil.
func (d *Dataset) P() int {
	if d == nil || d.Y == nil || d.Y.IsEmpty() {
		return 0
	}
	_, c := d.Y.Dims()
	return c
}

// Subset returns a new dataset holding copies of the rows idx of d, in that
// order (repeats allowed). Errors: ErrEmpty when idx is empty or d has no
// rows, ErrShape when d is malformed, *IndexError for an index outside
// [0, N).
func (d *Dataset) Subset(idx []int) (*Dataset, error) {
	if err := d.checkShapes(); err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("datasets: Subset of no rows: %w", ErrEmpty)
	}
	n := d.N()
	for _, i := range idx {
		if i < 0 || i >= n {
			return nil, &IndexError{Index: i, Len: n}
		}
	}
	x := mat.NewDense(len(idx), d.D(), nil)
	y := mat.NewDense(len(idx), d.P(), nil)
	GatherRows(x, d.X, idx)
	GatherRows(y, d.Y, idx)
	out := &Dataset{Name: d.Name, X: x, Y: y, NumClasses: d.NumClasses}
	if d.Observed != nil {
		out.Observed = mat.NewDense(len(idx), d.P(), nil)
		GatherRows(out.Observed, d.Observed, idx)
	}
	if d.FeatureNames != nil {
		out.FeatureNames = append([]string(nil), d.FeatureNames...)
	}
	return out, nil
}

// checkShapes verifies that X and Y are non-empty with the same row count and
// that FeatureNames matches D.
func (d *Dataset) checkShapes() error {
	if d == nil {
		return fmt.Errorf("datasets: nil dataset: %w", ErrEmpty)
	}
	if d.N() == 0 || d.D() == 0 {
		return fmt.Errorf("datasets: dataset has no inputs: %w", ErrEmpty)
	}
	if d.P() == 0 {
		return fmt.Errorf("datasets: dataset has no targets: %w", ErrEmpty)
	}
	if yr, _ := d.Y.Dims(); yr != d.N() {
		return fmt.Errorf("datasets: X has %d rows but Y has %d: %w", d.N(), yr, ErrShape)
	}
	if d.FeatureNames != nil && len(d.FeatureNames) != d.D() {
		return fmt.Errorf("datasets: %d feature names for %d columns: %w", len(d.FeatureNames), d.D(), ErrShape)
	}
	return d.checkObservedShape()
}

// Validate checks that d is usable: X [N, D] and Y [N, P] non-empty with
// equal N, FeatureNames nil or of length D, every value finite, and, when
// NumClasses > 0, Y a single column of integer labels in [0, NumClasses).
// Errors: ErrEmpty, ErrShape, *NonFiniteError (Row, Col 0-based; Col counts
// X's columns first, then Y's: D+j for Y column j), ErrInvalid for a negative
// NumClasses, *FormatError for a bad label.
func (d *Dataset) Validate() error {
	if err := d.checkShapes(); err != nil {
		return err
	}
	if d.NumClasses < 0 {
		return fmt.Errorf("datasets: NumClasses %d < 0: %w", d.NumClasses, ErrInvalid)
	}
	n, dim, p := d.N(), d.D(), d.P()
	for i := 0; i < n; i++ {
		for j, v := range d.X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &NonFiniteError{Row: i, Col: j, Value: v}
			}
		}
		for j, v := range d.Y.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &NonFiniteError{Row: i, Col: dim + j, Value: v}
			}
		}
	}
	if d.NumClasses > 0 {
		if p != 1 {
			return fmt.Errorf("datasets: classification targets have %d columns, want 1: %w", p, ErrShape)
		}
		for i := 0; i < n; i++ {
			v := d.Y.At(i, 0)
			if v != math.Trunc(v) || v < 0 || v >= float64(d.NumClasses) {
				return &FormatError{Msg: fmt.Sprintf("row %d (0-based): label %v not an integer in [0, %d)", i, v, d.NumClasses)}
			}
		}
	}
	return nil
}
