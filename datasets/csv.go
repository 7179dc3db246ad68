package datasets

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ReadCSV parses a user CSV table from r: a header row of column names, then
// comma-separated numeric rows (RFC 4180 quoting; gzip detected by magic
// bytes). The column named target (matched after trimming spaces) becomes Y
// [N, 1]; the other columns, in file order, become X [N, D] with their names
// in FeatureNames. NumClasses is 0: callers wanting classification set it.
//
// Errors: ErrEmpty for a nil reader, no header or no data rows;
// *FormatError when target is missing or duplicated, a header name is
// duplicated, there is no feature column, a cell is empty, or the CSV is
// malformed; *RaggedError when a row's field count differs from the header's;
// *CategoricalError naming every column (target included) holding a value
// that does not parse as a number (checked over the whole file first);
// *NonFiniteError (data row and file column, 0-based, header not counted)
// for a NaN or Inf value.
func ReadCSV(r io.Reader, target string) (*Dataset, error) {
	in, err := openInput(r, "")
	if err != nil {
		return nil, err
	}
	rec := &errRecorder{r: in}
	cr := csv.NewReader(rec)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("datasets: CSV has no header: %w", ErrEmpty)
	}
	if err != nil {
		return nil, csvError(err, rec)
	}
	names := make([]string, len(header))
	ti := -1
	seen := make(map[string]bool, len(header))
	for j, h := range header {
		h = strings.TrimSpace(h)
		if j == 0 {
			h = strings.TrimPrefix(h, "\uFEFF")
		}
		names[j] = h
		if seen[h] {
			return nil, &FormatError{Line: 1, Msg: fmt.Sprintf("duplicate column name %q", truncate(h))}
		}
		seen[h] = true
		if h == strings.TrimSpace(target) {
			ti = j
		}
	}
	if ti < 0 {
		return nil, &FormatError{Line: 1, Msg: fmt.Sprintf("target column %q not in header", truncate(target))}
	}
	cols := len(names)
	if cols < 2 {
		return nil, &FormatError{Line: 1, Msg: "no feature columns besides the target"}
	}
	var (
		data        []float64
		categorical = make([]bool, cols)
		firstBad    error // first empty cell or non-finite value
		rows        int
	)
	for {
		record, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err, rec)
		}
		if len(record) == 1 && strings.TrimSpace(record[0]) == "" {
			continue // blank line
		}
		if len(record) != cols {
			if rec.err != nil {
				return nil, readError(rec.err, "", 0)
			}
			return nil, &RaggedError{Row: rows, Want: cols, Got: len(record)}
		}
		for j, f := range record {
			f = strings.TrimSpace(f)
			v, err := strconv.ParseFloat(f, 64)
			switch {
			case f == "":
				if firstBad == nil {
					line, _ := cr.FieldPos(j)
					firstBad = &FormatError{Line: line, Msg: fmt.Sprintf("empty cell at row %d, column %d %q (0-based)", rows, j, truncate(names[j]))}
				}
			case err != nil && !errors.Is(err, strconv.ErrRange):
				categorical[j] = true
			case math.IsNaN(v) || math.IsInf(v, 0):
				if firstBad == nil {
					firstBad = &NonFiniteError{Row: rows, Col: j, Value: v}
				}
			}
			data = append(data, v)
		}
		rows++
	}
	var catNames []string
	for j, c := range categorical {
		if c {
			catNames = append(catNames, names[j])
		}
	}
	if catNames != nil {
		return nil, &CategoricalError{Columns: catNames}
	}
	if firstBad != nil {
		return nil, firstBad
	}
	if rows == 0 {
		return nil, fmt.Errorf("datasets: CSV has no data rows: %w", ErrEmpty)
	}
	x := mat.NewDense(rows, cols-1, nil)
	y := mat.NewDense(rows, 1, nil)
	for i := 0; i < rows; i++ {
		row, xr := data[i*cols:(i+1)*cols], x.RawRowView(i)
		copy(xr, row[:ti])
		copy(xr[ti:], row[ti+1:])
		y.Set(i, 0, row[ti])
	}
	feat := append(append([]string(nil), names[:ti]...), names[ti+1:]...)
	return &Dataset{X: x, Y: y, FeatureNames: feat}, nil
}

// csvError converts an encoding/csv error; a failure of the underlying
// stream (recorded by rec) takes precedence.
func csvError(err error, rec *errRecorder) error {
	if rec.err != nil {
		return readError(rec.err, "", 0)
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FormatError{Line: pe.Line, Msg: pe.Err.Error()}
	}
	return readError(err, "", 0)
}
