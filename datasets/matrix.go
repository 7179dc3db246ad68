package datasets

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ReadMatrix parses a numeric text matrix from r, one row per line, and
// returns it as a [rows, cols] *mat.Dense. sep is the field separator; 0
// means any run of whitespace (spaces and tabs may be mixed). With a
// non-zero sep, spaces around fields are ignored. Gzip input is detected by
// its magic bytes and decompressed. Blank lines, a trailing "\r" and a
// leading UTF-8 byte order mark are ignored; there is no header.
//
// Errors: ErrEmpty for a nil reader or no data rows; *RaggedError when a row
// has a different number of fields than the first; *NonFiniteError (row and
// column 0-based, blank lines not counted) for a NaN or Inf literal or a
// value that overflows float64; *FormatError (with 1-based line) for an
// unparsable or empty field or corrupt/truncated gzip.
func ReadMatrix(r io.Reader, sep rune) (*mat.Dense, error) {
	return readMatrix(r, sep, "")
}

// readMatrix is ReadMatrix with a file name for error messages.
func readMatrix(r io.Reader, sep rune, name string) (*mat.Dense, error) {
	in, err := openInput(r, name)
	if err != nil {
		return nil, err
	}
	sc := newLineScanner(in)
	var (
		data   []float64
		fields []string
		cols   = -1
		rows   = 0
		line   = 0
	)
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		if isBlank(text) {
			continue
		}
		fields = splitFields(text, sep, fields[:0])
		if cols < 0 {
			cols = len(fields)
		} else if len(fields) != cols {
			return nil, sc.fail(&RaggedError{Row: rows, Want: cols, Got: len(fields)}, name, line)
		}
		for j, f := range fields {
			v, err := parseFloat(f, rows, j)
			if err != nil {
				var fe *FormatError
				if errors.As(err, &fe) {
					fe.File, fe.Line = name, line
				}
				return nil, sc.fail(err, name, line)
			}
			data = append(data, v)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return nil, readError(err, name, line+1)
	}
	if rows == 0 || cols <= 0 {
		return nil, fmt.Errorf("datasets: no data rows: %w", ErrEmpty)
	}
	return mat.NewDense(rows, cols, data), nil
}

// splitFields splits line by sep (0: any whitespace), appending to dst.
// Fields are trimmed of surrounding spaces.
func splitFields(line string, sep rune, dst []string) []string {
	if sep == 0 {
		i := 0
		for i < len(line) {
			for i < len(line) && isSpace(line[i]) {
				i++
			}
			j := i
			for j < len(line) && !isSpace(line[j]) {
				j++
			}
			if j > i {
				dst = append(dst, line[i:j])
			}
			i = j
		}
		return dst
	}
	s := string(sep)
	for {
		k := strings.Index(line, s)
		if k < 0 {
			return append(dst, strings.TrimSpace(line))
		}
		dst = append(dst, strings.TrimSpace(line[:k]))
		line = line[k+len(s):]
	}
}

// parseFloat parses field f at (row, col): a *FormatError (without file
// and line) when it is not a number, a *NonFiniteError when it is NaN, Inf
// or overflows.
func parseFloat(f string, row, col int) (float64, error) {
	if f == "" {
		return 0, &FormatError{Msg: fmt.Sprintf("empty field at row %d, column %d (0-based)", row, col)}
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, &FormatError{Msg: fmt.Sprintf("row %d, column %d (0-based): %q is not a number", row, col, truncate(f))}
	}
	// An overflow yields ±Inf with ErrRange and is reported as non-finite
	// below; an underflow to zero or a subnormal is accepted.
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, &NonFiniteError{Row: row, Col: col, Value: v}
	}
	return v, nil
}

// truncate shortens s for error messages.
func truncate(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
