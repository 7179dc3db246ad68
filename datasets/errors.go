package datasets

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers can classify failures with errors.Is.
var (
	// ErrEmpty reports input with no data (no rows, no columns, empty index
	// list, nil reader).
	ErrEmpty = errors.New("datasets: empty input")
	// ErrRagged reports rows with differing numbers of fields; see RaggedError.
	ErrRagged = errors.New("datasets: ragged rows")
	// ErrNonFinite reports a NaN or ±Inf value; see NonFiniteError.
	ErrNonFinite = errors.New("datasets: non-finite value")
	// ErrIndex reports an index out of range; see IndexError.
	ErrIndex = errors.New("datasets: index out of range")
	// ErrFormat reports malformed input (unparsable number, bad magic
	// bytes, truncated or corrupt gzip, bad label); see FormatError.
	ErrFormat = errors.New("datasets: bad format")
	// ErrCategorical reports non-numeric columns in a CSV file; see
	// NonNumericError.
	ErrCategorical = errors.New("datasets: categorical columns")
	// ErrShape reports matrices whose shapes do not agree.
	ErrShape = errors.New("datasets: shape mismatch")
	// ErrInvalid reports an invalid argument (nil generator, bad fraction,
	// fold count out of range, ...).
	ErrInvalid = errors.New("datasets: invalid argument")
	// ErrNotFound reports an unknown embedded dataset name.
	ErrNotFound = errors.New("datasets: not found")
)

// NonFiniteError reports a NaN or ±Inf value at data row Row and column Col,
// both 0-based (the header row of a CSV file is not counted). It unwraps to
// ErrNonFinite.
type NonFiniteError struct {
	Row, Col int
	Value    float64
}

// Error implements error.
func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("datasets: non-finite value %v at row %d, column %d (0-based)", e.Value, e.Row, e.Col)
}

// Unwrap returns ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }

// RaggedError reports that data row Row (0-based, header excluded) has Got
// fields where Want were expected. It unwraps to ErrRagged.
type RaggedError struct {
	Row, Want, Got int
}

// Error implements error.
func (e *RaggedError) Error() string {
	return fmt.Sprintf("datasets: ragged input: row %d (0-based) has %d fields, want %d", e.Row, e.Got, e.Want)
}

// Unwrap returns ErrRagged.
func (e *RaggedError) Unwrap() error { return ErrRagged }

// IndexError reports that Index is outside [0, Len). It unwraps to ErrIndex.
type IndexError struct {
	Index, Len int
}

// Error implements error.
func (e *IndexError) Error() string {
	return fmt.Sprintf("datasets: index %d out of range [0, %d)", e.Index, e.Len)
}

// Unwrap returns ErrIndex.
func (e *IndexError) Unwrap() error { return ErrIndex }

// FormatError reports malformed input. File is the file name ("" for a
// reader), Line the 1-based line number (0 when not applicable, e.g. for
// binary IDX data). It unwraps to ErrFormat.
type FormatError struct {
	File string
	Line int
	Msg  string
}

// Error implements error.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("datasets: bad format")
	if e.File != "" {
		b.WriteString(" in ")
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		b.WriteString(" at line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns ErrFormat.
func (e *FormatError) Unwrap() error { return ErrFormat }

// withFile adds the file name to an error that does not already carry it.
func withFile(err error, file string) error {
	if err == nil || file == "" {
		return err
	}
	var named fileNamer
	if errors.As(err, &named) && named.fileName() != "" {
		return err // already names a file
	}
	return &inFile{err: err, file: file}
}

// fileNamer is an error that names the file it is about (FormatError, TableError, NonNumericError, and the
// wrapper withFile adds), so withFile names a file once.
type fileNamer interface{ fileName() string }

// inFile is err with the file it happened in.
type inFile struct {
	err  error
	file string
}

func (e *inFile) Error() string    { return fmt.Sprintf("%v (in %s)", e.err, e.file) }
func (e *inFile) Unwrap() error    { return e.err }
func (e *inFile) fileName() string { return e.file }

func (e *FormatError) fileName() string     { return e.File }
func (e *TableError) fileName() string      { return e.File }
func (e *NonNumericError) fileName() string { return e.File }
