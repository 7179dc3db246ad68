package datasets

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Streaming shards: a data set too large for one machine is read by row ranges, each reader holding only the
// rows it keeps. The test rows are chosen by a hash of the global row index (IsTestRow), so every reader
// agrees on them without coordination and whatever the sharding; standardisation statistics come from one
// streaming pass (FitSourceStats) or from readers' partial statistics merged (ColumnStats.Merge).

// IsTestRow reports whether global row row belongs to the test set of a split of test fraction frac seeded by
// seed: splitmix64(seed ⊕ splitmix64(row)) < frac·2⁶⁴. It depends on (seed, row, frac) alone, so every worker
// computes the same answer for the same row, however the rows are sharded. frac ≤ 0 (or NaN) gives no test
// rows, frac ≥ 1 every row.
func IsTestRow(seed uint64, row int, frac float64) bool {
	if !(frac > 0) {
		return false
	}
	if frac >= 1 {
		return true
	}
	t := math.Ldexp(frac, 64)
	if t >= 1<<64 { // frac within an ulp of 1
		return true
	}
	return splitmix64(seed^splitmix64(uint64(row))) < uint64(t)
}

// splitmix64 is the output function of Steele, Lea and Flood's SplitMix64 (OOPSLA 2014; the finaliser of
// Vigna's splitmix64.c): a bijective mix of 64 bits.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// RowSplit is a train/test split by row hash: the rows IsTestRow(Seed, row, TestFrac) holds are test rows.
// The zero value keeps every row for training.
type RowSplit struct {
	Seed     uint64
	TestFrac float64
}

// Check reports ErrInvalid unless 0 ≤ TestFrac < 1.
func (s RowSplit) Check() error {
	if !(s.TestFrac >= 0 && s.TestFrac < 1) {
		return fmt.Errorf("datasets: test fraction %v not in [0, 1): %w", s.TestFrac, ErrInvalid)
	}
	return nil
}

// IsTest reports whether global row row is a test row.
func (s RowSplit) IsTest(row int) bool { return IsTestRow(s.Seed, row, s.TestFrac) }

// TrainRows returns the number of training rows among the global rows [lo, hi) (hashing each index; no I/O).
func (s RowSplit) TrainRows(lo, hi int) int {
	n := 0
	for r := lo; r < hi; r++ {
		if !s.IsTest(r) {
			n++
		}
	}
	return n
}

// Row source formats.
const (
	// FormatRows is the binary row file (rowfile.go): a reader seeks to its rows.
	FormatRows = "gpzr"
	// FormatCSV is a CSV table with a header row: a reader scans the file from its start, parsing the
	// fields of only the rows it keeps (the rows before them are read past, not converted or kept).
	FormatCSV = "csv"
)

// RowSource names a file of rows read by range: a row file, or a CSV table whose Targets (and Features: nil
// means every other column, in file order) name its columns as in TableOptions. Row indices are global: a
// row file's FirstRow is its row 0's; a CSV's data rows count from 0 after the header.
type RowSource struct {
	Path     string
	Format   string
	Targets  []string
	Features []string
}

// SourceFormat returns FormatRows for a path ending in RowFileExt, else FormatCSV.
func SourceFormat(path string) string {
	if strings.EqualFold(filepath.Ext(path), RowFileExt) {
		return FormatRows
	}
	return FormatCSV
}

func (s RowSource) format() string {
	if s.Format == "" {
		return SourceFormat(s.Path)
	}
	return s.Format
}

// Columns returns the source's input and target column names, reading only its header.
func (s RowSource) Columns() (inputs, targets []string, err error) {
	switch s.format() {
	case FormatRows:
		f, err := OpenRowFile(s.Path)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		return f.Names[:f.Inputs], f.Names[f.Inputs:], nil
	case FormatCSV:
		c, err := openCSVRows(s)
		if err != nil {
			return nil, nil, err
		}
		defer c.close()
		return c.inputs, c.targets, nil
	}
	return nil, nil, fmt.Errorf("datasets: row source format %q (want %q or %q): %w", s.Format, FormatRows, FormatCSV, ErrInvalid)
}

// ScanRows calls fn with the global index, inputs and targets of every row in [lo, hi) of src, in order; hi < 0
// means to the end of the file. The slices are buffers fn must not keep. It returns the number of rows in the
// file (for a CSV read to its end only when hi < 0; otherwise hi). A row file is read from row lo on and
// nothing past hi; a CSV is read from its start to row hi (the rows before lo are parsed as CSV records but
// their fields are not converted). Errors: *IndexError when the file ends before hi, the readers' errors
// (*RowFileError, *FormatError, *NonFiniteError, ...), or fn's.
func ScanRows(src RowSource, lo, hi int, fn func(row int, x, y []float64) error) (rows int, err error) {
	if lo < 0 || hi >= 0 && hi < lo {
		return 0, fmt.Errorf("datasets: ScanRows [%d, %d): %w", lo, hi, ErrInvalid)
	}
	switch src.format() {
	case FormatRows:
		f, err := OpenRowFile(src.Path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		end := f.FirstRow + f.Rows
		if hi < 0 {
			hi = end
		}
		d := f.Inputs
		return end, f.Scan(lo, hi, func(r int, v []float64) error { return fn(r, v[:d], v[d:]) })
	case FormatCSV:
		c, err := openCSVRows(src)
		if err != nil {
			return 0, err
		}
		defer c.close()
		return c.scan(lo, hi, fn)
	}
	return 0, fmt.Errorf("datasets: row source format %q (want %q or %q): %w", src.Format, FormatRows, FormatCSV, ErrInvalid)
}

// ReadShard returns the rows of [lo, hi) of src that keep accepts (nil: every row), streaming: memory holds
// the kept rows only. rows are their global indices, ascending. Errors: those of ScanRows; ErrEmpty when no
// row is kept.
func ReadShard(src RowSource, lo, hi int, keep func(row int) bool) (x, y *mat.Dense, rows []int, err error) {
	if lo < 0 || hi <= lo {
		return nil, nil, nil, fmt.Errorf("datasets: ReadShard [%d, %d): %w", lo, hi, ErrInvalid)
	}
	n := hi - lo
	if keep != nil {
		n = 0
		for r := lo; r < hi; r++ {
			if keep(r) {
				n++
			}
		}
	}
	if n == 0 {
		return nil, nil, nil, fmt.Errorf("datasets: no rows kept in [%d, %d): %w", lo, hi, ErrEmpty)
	}
	var xs, ys []float64
	rows = make([]int, 0, n)
	_, err = ScanRows(src, lo, hi, func(r int, xr, yr []float64) error {
		if keep != nil && !keep(r) {
			return nil
		}
		if xs == nil {
			xs, ys = make([]float64, 0, n*len(xr)), make([]float64, 0, n*len(yr))
		}
		xs, ys = append(xs, xr...), append(ys, yr...)
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if len(rows) != n { // cannot happen: ScanRows visits every row of [lo, hi) or fails
		return nil, nil, nil, fmt.Errorf("datasets: ReadShard kept %d rows of %d: %w", len(rows), n, ErrShape)
	}
	x = mat.NewDense(n, len(xs)/n, xs)
	if len(ys) > 0 {
		y = mat.NewDense(n, len(ys)/n, ys)
	}
	return x, y, rows, nil
}

// FitSourceStats makes one streaming pass over src and returns the column statistics of its training rows
// (those split does not hold out) and the number of rows in the file. Each block of rows gets its own Welford
// statistics, merged into the total by Chan's formula (ColumnStats.Merge). Errors: those of ScanRows and
// Check; ErrEmpty when every row is a test row.
func FitSourceStats(src RowSource, split RowSplit) (*ColumnStats, int, error) {
	if err := split.Check(); err != nil {
		return nil, 0, err
	}
	const block = 1 << 14
	var total, part *ColumnStats
	vals := []float64(nil)
	rows, err := ScanRows(src, 0, -1, func(r int, x, y []float64) error {
		if split.IsTest(r) {
			return nil
		}
		if total == nil {
			total, part = NewColumnStats(len(x)+len(y)), NewColumnStats(len(x)+len(y))
		}
		vals = append(append(vals[:0], x...), y...)
		part.Add(vals)
		if part.N == block {
			total.Merge(part)
			part.Reset()
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if total == nil {
		return nil, rows, fmt.Errorf("datasets: %s has no training rows: %w", src.Path, ErrEmpty)
	}
	total.Merge(part)
	return total, rows, nil
}

// csvRows is an open CSV source: the header read, its columns picked.
type csvRows struct {
	f               *os.File
	r               *csv.Reader
	name            string
	xIdx, yIdx      []int
	inputs, targets []string
	width           int
}

func openCSVRows(src RowSource) (*csvRows, error) {
	if len(src.Targets) == 0 {
		return nil, fmt.Errorf("datasets: CSV row source %s names no target columns: %w", src.Path, ErrInvalid)
	}
	targets, err := cleanNames(src.Targets, "targets")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(src.Path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, rowScanBuf)
	cr := csv.NewReader(br)
	cr.Comma = sniffDelimiter(br)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	c := &csvRows{f: f, r: cr, name: src.Path}
	head, err := cr.Read()
	if err != nil {
		f.Close()
		if errors.Is(err, io.EOF) {
			return nil, withFile(fmt.Errorf("datasets: CSV without a header row: %w", ErrEmpty), src.Path)
		}
		return nil, &FormatError{File: src.Path, Line: 1, Msg: err.Error()}
	}
	header := make([]string, len(head))
	for j, h := range head {
		header[j] = strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
	}
	c.width = len(header)
	if c.yIdx, err = pickColumns(header, targets, src.Path); err != nil {
		f.Close()
		return nil, err
	}
	features := src.Features
	if features == nil {
		for j, h := range header {
			if !containsInt(c.yIdx, j) {
				features = append(features, h)
			}
		}
	}
	if features, err = cleanNames(features, "features"); err != nil {
		f.Close()
		return nil, err
	}
	if len(features) == 0 {
		f.Close()
		return nil, withFile(fmt.Errorf("datasets: CSV has no input columns besides the targets: %w", ErrEmpty), src.Path)
	}
	if c.xIdx, err = pickColumns(header, features, src.Path); err != nil {
		f.Close()
		return nil, err
	}
	for _, j := range c.xIdx {
		if containsInt(c.yIdx, j) {
			f.Close()
			return nil, withFile(fmt.Errorf("datasets: column %q is both an input and a target: %w", header[j], ErrInvalid), src.Path)
		}
	}
	c.inputs, c.targets = features, targets
	return c, nil
}

func containsInt(s []int, v int) bool {
	for _, w := range s {
		if w == v {
			return true
		}
	}
	return false
}

func (c *csvRows) close() { c.f.Close() }

// scan reads the data rows [lo, hi) (hi < 0: to the end), converting only those.
func (c *csvRows) scan(lo, hi int, fn func(row int, x, y []float64) error) (int, error) {
	x, y := make([]float64, len(c.xIdx)), make([]float64, len(c.yIdx))
	r := 0
	for ; hi < 0 || r < hi; r++ {
		rec, err := c.r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := c.r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				return r, withFile(&RaggedError{Row: r, Want: c.width, Got: len(rec)}, c.name)
			}
			return r, &FormatError{File: c.name, Line: line, Msg: err.Error()}
		}
		if r < lo {
			continue
		}
		for k, j := range c.xIdx {
			if x[k], err = c.parse(rec[j], r, k, line); err != nil {
				return r, err
			}
		}
		for k, j := range c.yIdx {
			if y[k], err = c.parse(rec[j], r, len(x)+k, line); err != nil {
				return r, err
			}
		}
		if err := fn(r, x, y); err != nil {
			return r, err
		}
	}
	if hi >= 0 && r < hi {
		return r, withFile(&IndexError{Index: hi - 1, Len: r}, c.name)
	}
	return r, nil
}

func (c *csvRows) parse(s string, row, col, line int) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, &FormatError{File: c.name, Line: line, Msg: fmt.Sprintf("row %d (0-based), column %d: %q is not a number", row, col, truncate(s))}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, withFile(&NonFiniteError{Row: row, Col: col, Value: v}, c.name)
	}
	return v, nil
}
