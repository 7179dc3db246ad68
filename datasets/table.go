package datasets

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// maxListedColumns bounds how many header names an error message lists.
const maxListedColumns = 30

// TableOptions says how ReadTable turns a user's CSV into a dataset.
type TableOptions struct {
	// Target is the header name of the column to predict (matched after
	// trimming spaces). Required unless Targets is given.
	Target string
	// Targets, instead of Target, names several target columns (P ≥ 1, in
	// the order they take in Y; regression only). An empty cell in one of
	// them is a missing target: that output is unobserved on that row
	// (Dataset.Observed is 0 there and Y holds 0); the row is kept for the
	// other outputs. Empty cells elsewhere stay errors.
	Targets []string
	// Features are the header names of the input columns, in the order they
	// take in X. nil means every column other than Target, in file order;
	// columns not used are ignored entirely (they may hold anything).
	Features []string
	// Classify makes Target a class label: its values must be integers,
	// and the K distinct values, sorted, become the classes 0..K-1 (K ≥ 2).
	// Otherwise the target is a real-valued regression target.
	Classify bool
}

// Table is a user's CSV read by ReadTable.
type Table struct {
	// Data holds X [N, D] (the feature columns, in the order of
	// Data.FeatureNames) and Y [N, 1]: the target values for regression,
	// or the class indices 0..K-1 for classification (Data.NumClasses = K).
	Data *Dataset
	// Target is the target column's name (the first of Targets).
	Target string
	// Targets are the target columns' names, in Y's column order (one for
	// a table read with Target).
	Targets []string
	// Labels, for classification, holds the original label of each class:
	// class k stands for the value Labels[k] (ascending). nil for regression.
	Labels []float64
	// Delimiter is the field separator detected from the header row: ',',
	// ';' or '\t' (see DelimiterName).
	Delimiter rune
}

// LabelValues maps predicted class indices back to the original label
// values of the CSV (Labels[k] for class k). Errors: ErrInvalid for a
// regression table, *IndexError for a class outside [0, K).
func (t *Table) LabelValues(classes []int) ([]float64, error) {
	if t == nil || len(t.Labels) == 0 {
		return nil, fmt.Errorf("datasets: table has no class labels (not read with Classify): %w", ErrInvalid)
	}
	out := make([]float64, len(classes))
	for i, k := range classes {
		if k < 0 || k >= len(t.Labels) {
			return nil, &IndexError{Index: k, Len: len(t.Labels)}
		}
		out[i] = t.Labels[k]
	}
	return out, nil
}

// ReadTable reads a user's CSV table from r: a header row naming the
// columns, then one row per point (RFC 4180 quoting; fields separated by
// commas, semicolons or tabs, whichever the header row holds most of, see
// Table.Delimiter; gzip detected by its magic bytes; blank lines skipped). o.Target names the
// column to predict and o.Features the inputs (nil: all other columns); only
// these columns are parsed, so other columns may hold text.
//
// With o.Targets, several target columns are read into Y [N, P], and an
// empty cell in a target column is a missing target (Dataset.Observed).
//
// Errors (row numbers are 1-based data rows, header excluded; lines are
// 1-based file lines):
//   - ErrInvalid: empty Target (and no Targets), both Target and Targets,
//     a target listed twice, Targets with Classify, empty (non-nil)
//     Features, a feature listed twice or equal to a target.
//   - ErrEmpty: nil reader, no header, no data rows.
//   - *FormatError (line 1): target or features not in the header (the
//     message lists the header's names), a used column whose name is empty
//     or appears twice in the header; malformed CSV.
//   - *NonNumericError (ErrCategorical): every used column holding text that
//     is not a number, all named in one error with their first bad value.
//   - *TableError: a ragged row (ErrRagged), an empty cell (ErrFormat; but
//     see Targets), a
//     NaN, ±Inf or overflowing value (ErrNonFinite), a classification label
//     that is not an integer (ErrFormat); fewer than 2 distinct labels is a
//     *FormatError.
//
// Non-numeric columns are reported before empty cells and non-finite values.
func ReadTable(r io.Reader, o TableOptions) (*Table, error) {
	return readTable(r, o, "")
}

// LoadTable reads the CSV file at path as ReadTable does; the dataset is
// named after the file without its extension and errors name the file.
func LoadTable(path string, o TableOptions) (*Table, error) {
	t, err := withOpen(path, func(r io.Reader) (*Table, error) { return readTable(r, o, path) })
	if err != nil {
		return nil, err
	}
	t.Data.Name = baseName(path)
	return t, nil
}

// ReadInputs reads a CSV of inputs to predict at, for a model trained on
// the feature columns features (Dataset.FeatureNames of the training
// table): a header row, then one row per point. Columns are matched by
// header name, in any order; columns not among features (an ID, or the
// target of a labelled test file) are ignored and not parsed. The result is
// X [N, len(features)] with columns in the order of features. Nil features
// means every column of the header, in its order.
//
// Errors: ErrInvalid for repeated features; *FormatError (line 1)
// naming every feature missing from the header, or a feature appearing twice
// in it; and as ReadTable for the cells of the used columns (ErrEmpty,
// *NonNumericError, *TableError).
func ReadInputs(r io.Reader, features []string) (*mat.Dense, error) {
	return readInputs(r, features, "")
}

// LoadInputs reads the CSV file at path as ReadInputs does; errors name the
// file.
func LoadInputs(path string, features []string) (*mat.Dense, error) {
	return withOpen(path, func(r io.Reader) (*mat.Dense, error) { return readInputs(r, features, path) })
}

func readInputs(r io.Reader, features []string, name string) (*mat.Dense, error) {
	want, err := cleanNames(features, "features")
	if err != nil {
		return nil, err
	}
	if features != nil && len(want) == 0 {
		return nil, fmt.Errorf("datasets: no feature names given: %w", ErrInvalid)
	}
	cols := 0
	g, err := scanTable(r, name, nil, func(header []string) ([]int, error) {
		use := want
		if features == nil {
			use = header
		}
		idx, err := pickColumns(header, use, name)
		cols = len(idx)
		return idx, err
	})
	if err != nil {
		return nil, err
	}
	return mat.NewDense(g.rows, cols, g.values), nil
}

func readTable(r io.Reader, o TableOptions, name string) (*Table, error) {
	targets, err := tableTargets(o)
	if err != nil {
		return nil, err
	}
	var feats []string
	if o.Features != nil {
		var err error
		if feats, err = cleanNames(o.Features, "features"); err != nil {
			return nil, err
		}
		if len(feats) == 0 {
			return nil, fmt.Errorf("datasets: empty feature list: %w", ErrInvalid)
		}
		for _, target := range targets {
			if slices.Contains(feats, target) {
				return nil, fmt.Errorf("datasets: target column %q is also listed as a feature: %w", truncate(target), ErrInvalid)
			}
		}
	}
	var used []string   // features, then the targets
	var optional []bool // set by pick: with Targets, empty target cells are missing targets
	g, err := scanTable(r, name, &optional, func(header []string) ([]int, error) {
		for _, target := range targets {
			if !slices.Contains(header, target) {
				return nil, &FormatError{File: name, Line: 1, Msg: fmt.Sprintf("target column %q not in header; columns: %s", truncate(target), listNames(header))}
			}
		}
		used = feats
		if used == nil {
			for _, h := range header {
				if !slices.Contains(targets, h) {
					used = append(used, h)
				}
			}
			if len(used) == 0 {
				return nil, &FormatError{File: name, Line: 1, Msg: fmt.Sprintf("no feature columns besides the target(s) %s", listNames(targets))}
			}
		}
		d := len(used)
		used = append(slices.Clip(used), targets...)
		if o.Targets != nil {
			optional = make([]bool, len(used))
			for k := d; k < len(used); k++ {
				optional[k] = true
			}
		}
		return pickColumns(header, used, name)
	})
	if err != nil {
		return nil, err
	}
	p := len(targets)
	d := len(used) - p
	x := mat.NewDense(g.rows, d, nil)
	y := mat.NewDense(g.rows, p, nil)
	var observed *mat.Dense
	for i := range g.rows {
		row := g.values[i*(d+p) : (i+1)*(d+p)]
		copy(x.RawRowView(i), row[:d])
		copy(y.RawRowView(i), row[d:])
		if g.empty == nil {
			continue
		}
		for j, e := range g.empty[i*(d+p)+d : (i+1)*(d+p)] {
			if !e {
				continue
			}
			if observed == nil {
				observed = mat.NewDense(g.rows, p, nil)
				for k := range observed.RawMatrix().Data {
					observed.RawMatrix().Data[k] = 1
				}
			}
			observed.Set(i, j, 0)
			y.Set(i, j, 0)
		}
	}
	t := &Table{
		Data:      &Dataset{X: x, Y: y, Observed: observed, FeatureNames: slices.Clone(used[:d])},
		Target:    targets[0],
		Targets:   targets,
		Delimiter: g.delim,
	}
	if observed != nil {
		if err := t.checkObserved(name); err != nil {
			return nil, err
		}
	}
	if o.Classify {
		if err := t.encodeLabels(g, name); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// encodeLabels replaces the target values by class indices 0..K-1 and
// records the original labels.
func (t *Table) encodeLabels(g *grid, name string) error {
	y := t.Data.Y.RawMatrix().Data // [N, 1]: contiguous
	for i, v := range y {
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return &TableError{File: name, Row: i + 1, Line: g.lines[i], Column: t.Target, Value: strconv.FormatFloat(v, 'g', -1, 64),
				Msg: "class label is not an integer", Err: ErrFormat}
		}
	}
	labels := slices.Clone(y)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	if len(labels) < 2 {
		return &FormatError{File: name, Msg: fmt.Sprintf("target column %q has %d distinct label(s); classification needs at least 2", truncate(t.Target), len(labels))}
	}
	if len(labels) > maxClasses {
		return &FormatError{File: name, Msg: fmt.Sprintf("target column %q has %d distinct labels, more than %d", truncate(t.Target), len(labels), maxClasses)}
	}
	for i, v := range y {
		k, _ := slices.BinarySearch(labels, v)
		y[i] = float64(k)
	}
	t.Labels = labels
	t.Data.NumClasses = len(labels)
	return nil
}

// cleanNames trims the names and rejects empty or repeated ones.
func cleanNames(names []string, what string) ([]string, error) {
	out := make([]string, len(names))
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("datasets: empty name in %s: %w", what, ErrInvalid)
		}
		if seen[n] {
			return nil, fmt.Errorf("datasets: %q listed twice in %s: %w", truncate(n), what, ErrInvalid)
		}
		seen[n] = true
		out[i] = n
	}
	return out, nil
}

// pickColumns returns the header index of each name in want. Every missing
// name is reported in one error; a wanted name must appear exactly once.
func pickColumns(header, want []string, file string) ([]int, error) {
	idx := make([]int, len(want))
	var missing []string
	for k, w := range want {
		idx[k] = -1
		if w == "" {
			j := slices.Index(header, "")
			return nil, &FormatError{File: file, Line: 1, Msg: fmt.Sprintf("column %d (1-based) has an empty name", j+1)}
		}
		for j, h := range header {
			if h != w {
				continue
			}
			if idx[k] >= 0 {
				return nil, &FormatError{File: file, Line: 1, Msg: fmt.Sprintf("column %q appears twice in the header (columns %d and %d, 1-based)", truncate(w), idx[k]+1, j+1)}
			}
			idx[k] = j
		}
		if idx[k] < 0 {
			missing = append(missing, w)
		}
	}
	if missing != nil {
		return nil, &FormatError{File: file, Line: 1, Msg: fmt.Sprintf("column(s) %s not in header; columns: %s", listNames(missing), listNames(header))}
	}
	return idx, nil
}

// listNames quotes names for an error message, at most maxListedColumns.
func listNames(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == maxListedColumns {
			fmt.Fprintf(&b, ", ... (%d more)", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(truncate(n)))
	}
	return b.String()
}

// grid is the parsed content of the used columns of a table.
type grid struct {
	values []float64 // [rows, len(cols)] row-major, in the order of cols
	empty  []bool    // like values: an empty cell of an optional column (nil: none)
	lines  []int     // file line of each data row
	rows   int
	delim  rune // the field separator detected from the header
}

// badValue is the first offending cell of a column.
type badValue struct {
	row, line int
	value     string
}

// scanTable reads the header of a CSV (trimming names and a leading BOM),
// detects the field separator (sniffDelimiter), lets pick choose the used
// columns, and parses those columns of every row. A header error of pick
// names the separator it was split with.
//
// optional, when non-nil, is read after pick: *optional[k] true lets the k-th
// picked column hold empty cells, recorded in grid.empty (value 0) instead of
// being an error.
func scanTable(r io.Reader, name string, optional *[]bool, pick func(header []string) ([]int, error)) (*grid, error) {
	in, err := openInput(r, name)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(in, sniffBytes)
	delim := sniffDelimiter(br)
	rec := &errRecorder{r: br}
	cr := csv.NewReader(rec)
	cr.Comma = delim
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("datasets: CSV has no header: %w", ErrEmpty)
	}
	if err != nil {
		return nil, withFile(csvError(err, rec), name)
	}
	names := make([]string, len(header))
	for j, h := range header {
		if j == 0 {
			h = strings.TrimPrefix(h, "\uFEFF")
		}
		if !utf8.ValidString(h) { // names are stored (model files, JSON) and matched as text
			return nil, &FormatError{File: name, Line: 1, Msg: fmt.Sprintf("column %d's name %q is not valid UTF-8 text", j+1, h)}
		}
		names[j] = strings.TrimSpace(h)
	}
	cols, err := pick(names)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) && fe.Line == 1 {
			fe.Msg += fmt.Sprintf(" (the header was split at %s; gpzoo reads comma-, semicolon- or tab-separated files)", DelimiterName(delim))
		}
		return nil, err
	}
	g := &grid{delim: delim}
	var mayBeEmpty []bool
	if optional != nil {
		mayBeEmpty = *optional
	}
	nonNumeric := make([]*badValue, len(cols))
	var firstBad error // first empty cell or non-finite value
	for {
		record, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, withFile(csvError(err, rec), name)
		}
		line, _ := cr.FieldPos(0)
		if len(record) == 1 && strings.TrimSpace(record[0]) == "" {
			continue // blank line
		}
		row := g.rows + 1
		if len(record) != len(names) {
			if rec.err != nil {
				return nil, readError(rec.err, name, line)
			}
			return nil, &TableError{File: name, Row: row, Line: line, Err: ErrRagged,
				Msg: fmt.Sprintf("%d fields, the header has %d", len(record), len(names))}
		}
		for k, j := range cols {
			f := strings.TrimSpace(record[j])
			v, err := strconv.ParseFloat(f, 64)
			isEmpty := false
			switch {
			case f == "" && mayBeEmpty != nil && mayBeEmpty[k]:
				isEmpty, v = true, 0
			case f == "":
				if firstBad == nil {
					l, _ := cr.FieldPos(j)
					firstBad = &TableError{File: name, Row: row, Line: l, Column: names[j], Msg: "empty cell", Err: ErrFormat}
				}
			case err != nil && !errors.Is(err, strconv.ErrRange):
				if nonNumeric[k] == nil {
					l, _ := cr.FieldPos(j)
					nonNumeric[k] = &badValue{row: row, line: l, value: f}
				}
			case math.IsNaN(v) || math.IsInf(v, 0):
				if firstBad == nil {
					l, _ := cr.FieldPos(j)
					firstBad = &TableError{File: name, Row: row, Line: l, Column: names[j], Value: f, Msg: "non-finite value", Err: ErrNonFinite}
				}
			}
			if isEmpty && g.empty == nil {
				g.empty = make([]bool, len(g.values), cap(g.values))
			}
			g.values = append(g.values, v)
			if g.empty != nil {
				g.empty = append(g.empty, isEmpty)
			}
		}
		g.lines = append(g.lines, line)
		g.rows++
	}
	var nn []NonNumericColumn
	for k, b := range nonNumeric {
		if b != nil {
			nn = append(nn, NonNumericColumn{Name: names[cols[k]], Row: b.row, Line: b.line, Value: b.value})
		}
	}
	if nn != nil {
		// Report in header order.
		slices.SortFunc(nn, func(a, b NonNumericColumn) int {
			return slices.Index(names, a.Name) - slices.Index(names, b.Name)
		})
		return nil, &NonNumericError{File: name, Columns: nn}
	}
	if firstBad != nil {
		return nil, firstBad
	}
	if g.rows == 0 {
		return nil, withFile(fmt.Errorf("datasets: CSV has no data rows: %w", ErrEmpty), name)
	}
	return g, nil
}

// sniffBytes is how much of a table's start sniffDelimiter looks at.
const sniffBytes = 64 << 10

// sniffDelimiter returns the field separator of the CSV table that br starts
// with: of comma, semicolon and tab, the one occurring most often outside
// double quotes in the header row (ties and a header without any go to the
// earlier of comma, semicolon, tab). It only peeks: br is not advanced.
func sniffDelimiter(br *bufio.Reader) rune {
	head, _ := br.Peek(sniffBytes) // fewer bytes at the end of the input; a read error surfaces in the CSV reader
	var n [3]int
	quoted := false
	for _, c := range head {
		if c == '"' {
			quoted = !quoted
		}
		if quoted {
			continue
		}
		if c == '\n' {
			break
		}
		switch c {
		case ',':
			n[0]++
		case ';':
			n[1]++
		case '\t':
			n[2]++
		}
	}
	best := 0
	for k := 1; k < 3; k++ {
		if n[k] > n[best] {
			best = k
		}
	}
	return [3]rune{',', ';', '\t'}[best]
}

// DelimiterName names a field separator for messages: "comma", "semicolon",
// "tab", or the character quoted.
func DelimiterName(r rune) string {
	switch r {
	case ',':
		return "comma"
	case ';':
		return "semicolon"
	case '\t':
		return "tab"
	}
	return strconv.QuoteRune(r)
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
