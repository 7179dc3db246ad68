package plots

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors; the typed errors below unwrap to them, so callers can test with errors.Is.
var (
	// ErrFormat reports a file extension other than .png or .svg.
	ErrFormat = errors.New("plots: unsupported file format")
	// ErrShape reports inputs whose lengths disagree or an empty input.
	ErrShape = errors.New("plots: shape mismatch")
	// ErrNonFinite reports a NaN or infinite input value.
	ErrNonFinite = errors.New("plots: non-finite value")
	// ErrRange reports a finite input value outside its allowed range.
	ErrRange = errors.New("plots: value out of range")
)

// FormatError reports that Path has the extension Ext, which is neither .png nor .svg.
type FormatError struct {
	Func string // the exported function that failed, e.g. "Curves"
	Path string // the path as given
	Ext  string // the extension found, with its dot; empty if there is none
}

// Error implements error.
func (e *FormatError) Error() string {
	ext := e.Ext
	if ext == "" {
		ext = "no extension"
	}
	return fmt.Sprintf("plots: %s: %q: unsupported file format (%s); want .png or .svg", e.Func, e.Path, ext)
}

// Unwrap returns ErrFormat.
func (e *FormatError) Unwrap() error { return ErrFormat }

// ShapeError reports that input Name has length Got where Want was required. When Min is true, Want is a lower
// bound (the input must have at least Want entries) rather than an exact length.
type ShapeError struct {
	Func string // the exported function that failed
	Name string // the input, with indices for nested slices, e.g. "layers[1][0]"
	Want int    // the required length (or lower bound when Min is true)
	Got  int    // the length given
	Min  bool   // Want is a lower bound
}

// Error implements error.
func (e *ShapeError) Error() string {
	if e.Min {
		return fmt.Sprintf("plots: %s: %s has length %d, want at least %d", e.Func, e.Name, e.Got, e.Want)
	}
	return fmt.Sprintf("plots: %s: %s has length %d, want %d", e.Func, e.Name, e.Got, e.Want)
}

// Unwrap returns ErrShape.
func (e *ShapeError) Unwrap() error { return ErrShape }

// NonFiniteError reports that entry Row (and Col, for two-dimensional inputs) of input Name is NaN or ±Inf.
// Col is -1 for one-dimensional inputs.
type NonFiniteError struct {
	Func  string  // the exported function that failed
	Name  string  // the input, e.g. "std" or "series[2] \"Adam\".Y"
	Row   int     // the index of the bad entry (the sample index for LayerSamples)
	Col   int     // the column of the bad entry (the x index for LayerSamples), or -1
	Value float64 // the bad value
}

// Error implements error.
func (e *NonFiniteError) Error() string {
	if e.Col >= 0 {
		return fmt.Sprintf("plots: %s: %s has non-finite value %v at row %d, column %d", e.Func, e.Name, e.Value, e.Row, e.Col)
	}
	return fmt.Sprintf("plots: %s: %s has non-finite value %v at row %d", e.Func, e.Name, e.Value, e.Row)
}

// Unwrap returns ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }

// RangeError reports that entry Index of input Name has the finite value Value outside [Min, Max] (or (Min, Max]
// when MinOpen is set). Index is -1 for scalar inputs such as the number of bins. An infinite Min or Max means
// that side is unbounded.
type RangeError struct {
	Func     string  // the exported function that failed
	Name     string  // the input, e.g. "prob" or "bins"
	Index    int     // the index of the bad entry, or -1 for a scalar
	Value    float64 // the bad value
	Min, Max float64 // the allowed range
	MinOpen  bool    // Min itself is excluded
}

// Error implements error.
func (e *RangeError) Error() string {
	where := e.Name
	if e.Index >= 0 {
		where = fmt.Sprintf("%s[%d]", e.Name, e.Index)
	}
	lo, ge := "[", ">="
	if e.MinOpen {
		lo, ge = "(", ">"
	}
	var want string
	switch {
	case math.IsInf(e.Max, 1):
		want = fmt.Sprintf("%s %v", ge, e.Min)
	case math.IsInf(e.Min, -1):
		want = fmt.Sprintf("<= %v", e.Max)
	default:
		want = fmt.Sprintf("in %s%v, %v]", lo, e.Min, e.Max)
	}
	return fmt.Sprintf("plots: %s: %s = %v, want %s", e.Func, where, e.Value, want)
}

// Unwrap returns ErrRange.
func (e *RangeError) Unwrap() error { return ErrRange }
