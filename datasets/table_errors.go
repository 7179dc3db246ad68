package datasets

import (
	"strconv"
	"strings"
)

// TableError reports a bad row or cell of a user's CSV table (ReadTable,
// ReadInputs). It unwraps to Err: ErrRagged for a row with the wrong number
// of fields, ErrNonFinite for a NaN, ±Inf or overflowing value, ErrFormat for
// an empty cell or a class label that is not an integer.
type TableError struct {
	File   string // file name, "" for a reader
	Row    int    // 1-based data row (the header is not counted)
	Line   int    // 1-based line of the file
	Column string // header name of the column; "" for a whole-row problem
	Value  string // the offending text, "" when none
	Msg    string // what is wrong
	Err    error  // the sentinel
}

// Error implements error.
func (e *TableError) Error() string {
	var b strings.Builder
	b.WriteString("datasets: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	b.WriteString("line ")
	b.WriteString(strconv.Itoa(e.Line))
	b.WriteString(" (data row ")
	b.WriteString(strconv.Itoa(e.Row))
	b.WriteString(")")
	if e.Column != "" {
		b.WriteString(", column ")
		b.WriteString(strconv.Quote(truncate(e.Column)))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Value != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(truncate(e.Value)))
	}
	return b.String()
}

// Unwrap returns the sentinel Err.
func (e *TableError) Unwrap() error { return e.Err }

// NonNumericColumn is one column of a NonNumericError: its header name and
// its first value that is not a number, at 1-based data row Row and file
// line Line.
type NonNumericColumn struct {
	Name      string
	Row, Line int
	Value     string
}

// NonNumericError lists every used column of a user's CSV table, in header
// order, holding a value that is not a number (a categorical column). It
// unwraps to ErrCategorical.
type NonNumericError struct {
	File    string // file name, "" for a reader
	Columns []NonNumericColumn
}

// Error implements error.
func (e *NonNumericError) Error() string {
	var b strings.Builder
	b.WriteString("datasets: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	b.WriteString("categorical (non-numeric) columns: ")
	for i, c := range e.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == maxListedColumns {
			b.WriteString("... (")
			b.WriteString(strconv.Itoa(len(e.Columns) - i))
			b.WriteString(" more)")
			break
		}
		b.WriteString(strconv.Quote(truncate(c.Name)))
		b.WriteString(" (row ")
		b.WriteString(strconv.Itoa(c.Row))
		b.WriteString(": ")
		b.WriteString(strconv.Quote(truncate(c.Value)))
		b.WriteString(")")
	}
	b.WriteString("; encode them as numbers or drop them from the features (--features)")
	for _, c := range e.Columns {
		if decimalComma(c.Value) {
			b.WriteString("; values such as ")
			b.WriteString(strconv.Quote(truncate(c.Value)))
			b.WriteString(" use a decimal comma: write numbers with a decimal point")
			break
		}
	}
	return b.String()
}

// Unwrap returns ErrCategorical.
func (e *NonNumericError) Unwrap() error { return ErrCategorical }

// decimalComma reports whether v is a number written with a decimal comma
// (one comma, a valid number once it is a point), as spreadsheets in many
// locales export them.
func decimalComma(v string) bool {
	if strings.Count(v, ",") != 1 {
		return false
	}
	_, err := strconv.ParseFloat(strings.Replace(v, ",", ".", 1), 64)
	return err == nil
}
