package datasets

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Standardizer holds per-column means and standard deviations of the inputs
// (XMean, XStd, length D) and targets (YMean, YStd, length P). The standard
// deviation is the population one (divisor N); a column whose standard
// deviation is 0 (a constant column, or N = 1) gets std 1, so that it is only
// centred. When targets are not standardised YMean is 0 and YStd 1. Missing
// target cells (Dataset.Observed) are left out of the target statistics.
type Standardizer struct {
	XMean, XStd, YMean, YStd []float64
}

// FitStandardizer computes the column statistics of d (which must pass
// Validate). With standardizeY false the target transform is the identity.
// Errors: those of Validate; ErrInvalid when standardizeY is set for a
// classification dataset (NumClasses > 0).
func FitStandardizer(d *Dataset, standardizeY bool) (*Standardizer, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if standardizeY && d.NumClasses > 0 {
		return nil, fmt.Errorf("datasets: cannot standardise class labels: %w", ErrInvalid)
	}
	s := &Standardizer{}
	s.XMean, s.XStd = columnStats(d.X)
	switch {
	case standardizeY && d.Observed != nil: // the observed cells' statistics
		var err error
		if s.YMean, s.YStd, err = maskedColumnStats(d.Y, d.Observed); err != nil {
			return nil, err
		}
	case standardizeY:
		s.YMean, s.YStd = columnStats(d.Y)
	default:
		p := d.P()
		s.YMean, s.YStd = make([]float64, p), make([]float64, p)
		for j := range s.YStd {
			s.YStd[j] = 1
		}
	}
	return s, nil
}

// columnStats returns the column means and population standard deviations
// of m (two-pass), with 0 (or a non-finite result) replaced by 1.
//
// Any finite column gives finite statistics: each column is first scaled by
// the power of two 2^e just above its largest magnitude, so the scaled values
// lie in (−1, 1), their sum cannot overflow and their squares neither overflow
// nor underflow before the column's spread does; the results are scaled back.
// Scaling by a power of two is exact, so for data whose plain sums and squares
// stay within range the statistics are bit for bit those of the unscaled
// two-pass formulas.
func columnStats(m *mat.Dense) (mean, std []float64) {
	r, c := m.Dims()
	mean, std = make([]float64, c), make([]float64, c)
	exp := make([]int, c)     // e: 2^e ≥ max |m_ij| over column j (e = 0 for an all-zero column)
	inv := make([]float64, c) // 2^−e when it is a normal float64 (multiplying by it is exact), else 0
	for i := 0; i < r; i++ {
		for j, v := range m.RawRowView(i) {
			std[j] = max(std[j], math.Abs(v)) // std holds the largest magnitude for now
		}
	}
	for j, a := range std {
		_, exp[j] = math.Frexp(a) // a = f·2^e, f ∈ [0.5, 1)
		if e := exp[j]; e > -1022 && e < 1022 {
			inv[j] = math.Ldexp(1, -e)
		}
		std[j] = 0
	}
	scaled := func(v float64, j int) float64 { // v·2^−e, exactly
		if inv[j] != 0 {
			return v * inv[j]
		}
		return math.Ldexp(v, -exp[j])
	}
	for i := 0; i < r; i++ {
		for j, v := range m.RawRowView(i) {
			mean[j] += scaled(v, j)
		}
	}
	for j := range mean {
		mean[j] /= float64(r) // the scaled mean, in (−1, 1)
	}
	for i := 0; i < r; i++ {
		for j, v := range m.RawRowView(i) {
			dv := scaled(v, j) - mean[j]
			std[j] += dv * dv
		}
	}
	for j := range std {
		mean[j] = math.Ldexp(mean[j], exp[j])
		std[j] = math.Ldexp(math.Sqrt(std[j]/float64(r)), exp[j])
		if !(std[j] > 0) || math.IsInf(std[j], 0) {
			std[j] = 1
		}
	}
	return mean, std
}

// check verifies the standardizer's internal consistency.
func (s *Standardizer) check() error {
	if s == nil {
		return fmt.Errorf("datasets: nil Standardizer: %w", ErrInvalid)
	}
	if len(s.XMean) != len(s.XStd) || len(s.YMean) != len(s.YStd) || len(s.XMean) == 0 || len(s.YMean) == 0 {
		return fmt.Errorf("datasets: Standardizer has mismatched or empty statistics: %w", ErrShape)
	}
	for _, v := range s.XStd {
		if !(v > 0) {
			return fmt.Errorf("datasets: Standardizer std %v not positive: %w", v, ErrInvalid)
		}
	}
	for _, v := range s.YStd {
		if !(v > 0) {
			return fmt.Errorf("datasets: Standardizer std %v not positive: %w", v, ErrInvalid)
		}
	}
	return nil
}

// Apply returns a new dataset with X standardised column-wise, (x-XMean)/XStd,
// and Y likewise with YMean and YStd; d is not modified. Name, FeatureNames
// and NumClasses are copied. Errors: ErrShape when d's D or P differ from the
// fitted ones; those of Validate.
func (s *Standardizer) Apply(d *Dataset) (*Dataset, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := d.checkShapes(); err != nil {
		return nil, err
	}
	if d.D() != len(s.XMean) || d.P() != len(s.YMean) {
		return nil, fmt.Errorf("datasets: Standardizer fitted on D=%d, P=%d applied to D=%d, P=%d: %w",
			len(s.XMean), len(s.YMean), d.D(), d.P(), ErrShape)
	}
	out := &Dataset{Name: d.Name, NumClasses: d.NumClasses,
		X: affine(d.X, s.XMean, s.XStd), Y: affine(d.Y, s.YMean, s.YStd)}
	if d.FeatureNames != nil {
		out.FeatureNames = append([]string(nil), d.FeatureNames...)
	}
	if d.Observed != nil { // missing cells stay 0
		out.Observed = mat.DenseCopyOf(d.Observed)
		zeroMissing(out.Y, out.Observed)
	}
	return out, nil
}

// ApplyX returns (x-XMean)/XStd column-wise for an input matrix x [M, D]
// (e.g. test inputs). Errors: ErrShape when x has other than D columns,
// ErrEmpty for an empty x.
func (s *Standardizer) ApplyX(x *mat.Dense) (*mat.Dense, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("datasets: ApplyX of empty matrix: %w", ErrEmpty)
	}
	if _, c := x.Dims(); c != len(s.XMean) {
		return nil, fmt.Errorf("datasets: ApplyX of %d columns, fitted on %d: %w", c, len(s.XMean), ErrShape)
	}
	return affine(x, s.XMean, s.XStd), nil
}

// affine returns (m - mean) / std column-wise. A difference that overflows
// (values of opposite signs near the largest float64) is computed as
// m/std − mean/std instead, which is finite for any statistics of
// columnStats.
func affine(m *mat.Dense, mean, std []float64) *mat.Dense {
	r, c := m.Dims()
	out := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		affineRow(out.RawRowView(i), m.RawRowView(i), mean, std)
	}
	return out
}

// affineRow sets dst to (src − mean)/std, as affine does (dst may be src).
func affineRow(dst, src, mean, std []float64) {
	for j, v := range src {
		d := v - mean[j]
		if math.IsInf(d, 0) {
			dst[j] = v/std[j] - mean[j]/std[j]
			continue
		}
		dst[j] = d / std[j]
	}
}

// ApplyInPlace standardises x [N, D] and y [N, P] (nil: no targets) in place, as Apply would return them,
// without a copy (a shard read from a file that fills most of memory). Errors: ErrShape for other widths.
func (s *Standardizer) ApplyInPlace(x, y *mat.Dense) error {
	if err := s.check(); err != nil {
		return err
	}
	if x == nil || x.IsEmpty() {
		return fmt.Errorf("datasets: ApplyInPlace of empty matrix: %w", ErrEmpty)
	}
	r, c := x.Dims()
	if c != len(s.XMean) {
		return fmt.Errorf("datasets: ApplyInPlace of %d input columns, fitted on %d: %w", c, len(s.XMean), ErrShape)
	}
	if y != nil {
		if yr, p := y.Dims(); yr != r || p != len(s.YMean) {
			return fmt.Errorf("datasets: ApplyInPlace of targets [%d, %d] for %d rows, fitted on %d: %w", yr, p, r, len(s.YMean), ErrShape)
		}
	}
	for i := 0; i < r; i++ {
		row := x.RawRowView(i)
		affineRow(row, row, s.XMean, s.XStd)
		if y != nil {
			row = y.RawRowView(i)
			affineRow(row, row, s.YMean, s.YStd)
		}
	}
	return nil
}

// InverseMean maps a standardised value (e.g. a predictive mean) of target
// column col back to original units: v*YStd[col] + YMean[col]. It returns NaN
// when col is out of range or s is nil.
func (s *Standardizer) InverseMean(col int, v float64) float64 {
	if s == nil || col < 0 || col >= len(s.YMean) || col >= len(s.YStd) {
		return math.NaN()
	}
	return v*s.YStd[col] + s.YMean[col]
}

// InverseVar maps a variance in standardised units of target column col back
// to original units: v*YStd[col]². It returns NaN when col is out of range or
// s is nil.
func (s *Standardizer) InverseVar(col int, v float64) float64 {
	if s == nil || col < 0 || col >= len(s.YStd) {
		return math.NaN()
	}
	return v * s.YStd[col] * s.YStd[col]
}

// InverseStd maps a variance in standardised units of target column col to
// the standard deviation in original units: √v·YStd[col]. Unlike
// InverseVar's, the result is finite whenever the data are (a target of
// magnitude 1e160 has a finite standard deviation but a variance beyond
// float64). It returns NaN when col is out of range or s is nil.
func (s *Standardizer) InverseStd(col int, v float64) float64 {
	if s == nil || col < 0 || col >= len(s.YStd) {
		return math.NaN()
	}
	return math.Sqrt(v) * s.YStd[col]
}

// LogDensityOffset returns −log(YStd[col]): adding it to a log density of
// target column col computed in standardised units gives the log density in
// original units. It returns NaN when col is out of range or s is nil.
func (s *Standardizer) LogDensityOffset(col int) float64 {
	if s == nil || col < 0 || col >= len(s.YStd) {
		return math.NaN()
	}
	return -math.Log(s.YStd[col])
}
