package datasets

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// The row file (".gpzr") is a table of float64 rows of a fixed width, so that row r lies at a computable
// offset and a reader can seek to its shard and read nothing else. Layout (integers little-endian):
//
//	offset  size  field
//	0       8     magic "\x89GPZROW\n"
//	8       4     format version (RowFileVersion)
//	12      4     header length H in bytes (a multiple of 8, checksum included; the rows start at H)
//	16      8     rows R in this file
//	24      8     first row: the global index of this file's row 0 (0 for a whole data set; a shard file
//	              holding rows [F, F+R) of a larger set says F)
//	32      4     input columns D (≥ 1)
//	36      4     target columns P (≥ 0)
//	40      …     D+P column names, inputs first: a uint16 byte length, then that many bytes of UTF-8
//	…       …     zero bytes up to H−32
//	H−32    32    SHA-256 of the header's bytes [0, H−32)
//	H       R·8(D+P)  the rows: row r holds D inputs then P targets, each an IEEE-754 float64, at
//	              offset H + r·8(D+P)
//
// The file is exactly H + R·8(D+P) bytes long. Values are finite (the writer refuses NaN and ±Inf, the
// reader reports them).
const (
	rowMagic = "\x89GPZROW\n"
	// RowFileVersion is the row-file format version this package writes and reads.
	RowFileVersion = 1
	// RowFileExt is the row file's conventional file-name extension.
	RowFileExt = ".gpzr"

	rowFixed      = 40      // the fixed fields before the names
	rowSumLen     = 32      // SHA-256
	maxRowHeader  = 1 << 24 // 16 MiB of header at most
	maxRowColumns = 1 << 16 // D+P at most
	rowScanBuf    = 1 << 20 // bytes a scan reads at a time
)

// RowFileReason classifies a RowFileError.
type RowFileReason int

const (
	// RowBadMagic: the file does not start with the row file's magic bytes.
	RowBadMagic RowFileReason = iota + 1
	// RowBadVersion: a format version this package does not read (a newer gpzoo's file).
	RowBadVersion
	// RowTruncatedHeader: the input ends inside the header.
	RowTruncatedHeader
	// RowCorruptHeader: the header's checksum does not match, or a field is impossible.
	RowCorruptHeader
	// RowShortFile: the file is shorter than the header's row count says.
	RowShortFile
	// RowLongFile: the file has bytes beyond the rows its header declares.
	RowLongFile
)

func (r RowFileReason) String() string {
	switch r {
	case RowBadMagic:
		return "not a gpzoo row file (bad magic)"
	case RowBadVersion:
		return "unsupported format version"
	case RowTruncatedHeader:
		return "truncated header"
	case RowCorruptHeader:
		return "corrupt header"
	case RowShortFile:
		return "file shorter than its header says"
	case RowLongFile:
		return "file longer than its header says"
	}
	return "row file error"
}

// RowFileError reports a row file this package cannot read: Reason says why. It unwraps to ErrFormat.
type RowFileError struct {
	File   string
	Reason RowFileReason
	Msg    string
}

// Error implements error.
func (e *RowFileError) Error() string {
	s := "datasets: row file"
	if e.File != "" {
		s += " " + e.File
	}
	s += ": " + e.Reason.String()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// Unwrap returns ErrFormat.
func (e *RowFileError) Unwrap() error { return ErrFormat }

func (e *RowFileError) fileName() string { return e.File }

// RowHeader is a row file's header.
type RowHeader struct {
	// Version is the format version; Len the header's length in bytes (the offset of row 0).
	Version, Len int
	// Rows is the number of rows in the file, FirstRow the global index of its row 0.
	Rows, FirstRow int
	// Inputs and Targets are D and P; Names the D+P column names, inputs first.
	Inputs, Targets int
	Names           []string
}

// Width returns the number of float64 values per row, D+P.
func (h *RowHeader) Width() int { return h.Inputs + h.Targets }

// Offset returns the byte offset of the file's row r (0-based within the file).
func (h *RowHeader) Offset(r int) int64 { return int64(h.Len) + int64(r)*int64(8*h.Width()) }

// Size returns the file's length in bytes: H + R·8(D+P).
func (h *RowHeader) Size() int64 { return h.Offset(h.Rows) }

// encode returns the header's bytes, Len set.
func (h *RowHeader) encode() ([]byte, error) {
	if err := checkRowShape(h.Rows, h.FirstRow, h.Inputs, h.Targets, h.Names); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(rowMagic)
	b.Write(make([]byte, rowFixed-len(rowMagic)))
	for _, n := range h.Names {
		b.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(n))))
		b.WriteString(n)
	}
	for (b.Len()+rowSumLen)%8 != 0 {
		b.WriteByte(0)
	}
	n := b.Len() + rowSumLen
	if n > maxRowHeader {
		return nil, fmt.Errorf("datasets: row file header of %d bytes (names too long; at most %d): %w", n, maxRowHeader, ErrInvalid)
	}
	buf := b.Bytes()
	le := binary.LittleEndian
	le.PutUint32(buf[8:], RowFileVersion)
	le.PutUint32(buf[12:], uint32(n))
	le.PutUint64(buf[16:], uint64(h.Rows))
	le.PutUint64(buf[24:], uint64(h.FirstRow))
	le.PutUint32(buf[32:], uint32(h.Inputs))
	le.PutUint32(buf[36:], uint32(h.Targets))
	sum := sha256.Sum256(buf)
	h.Version, h.Len = RowFileVersion, n
	return append(buf, sum[:]...), nil
}

// checkRowShape checks a header's counts and names.
func checkRowShape(rows, first, inputs, targets int, names []string) error {
	if rows < 0 || first < 0 || inputs < 1 || targets < 0 || inputs+targets > maxRowColumns {
		return fmt.Errorf("datasets: row file of %d rows from row %d, %d inputs and %d targets: %w", rows, first, inputs, targets, ErrInvalid)
	}
	if width := int64(8 * (inputs + targets)); int64(rows) > (math.MaxInt64-maxRowHeader)/width || int64(first) > math.MaxInt64-int64(rows) {
		return fmt.Errorf("datasets: row file of %d rows of %d columns from row %d is too large: %w", rows, inputs+targets, first, ErrInvalid)
	}
	if len(names) != inputs+targets {
		return fmt.Errorf("datasets: %d column names for %d inputs and %d targets: %w", len(names), inputs, targets, ErrShape)
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || len(n) > math.MaxUint16 || !utf8.ValidString(n) || strings.TrimSpace(n) != n {
			return fmt.Errorf("datasets: row file column name %q (want non-empty trimmed UTF-8 of at most %d bytes): %w", truncate(n), math.MaxUint16, ErrInvalid)
		}
		if seen[n] {
			return fmt.Errorf("datasets: column %q named twice: %w", truncate(n), ErrInvalid)
		}
		seen[n] = true
	}
	return nil
}

// ReadRowHeader parses a row file's header from r, reading exactly its Len bytes. Errors: *RowFileError
// (RowBadMagic, RowBadVersion, RowTruncatedHeader, RowCorruptHeader), or r's read error.
func ReadRowHeader(r io.Reader) (*RowHeader, error) {
	fixed := make([]byte, rowFixed)
	if n, err := io.ReadFull(r, fixed); err != nil {
		if n >= len(rowMagic) && string(fixed[:len(rowMagic)]) != rowMagic || n < len(rowMagic) && !strings.HasPrefix(rowMagic, string(fixed[:n])) {
			return nil, &RowFileError{Reason: RowBadMagic}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &RowFileError{Reason: RowTruncatedHeader, Msg: fmt.Sprintf("%d bytes", n)}
		}
		return nil, err
	}
	if string(fixed[:len(rowMagic)]) != rowMagic {
		return nil, &RowFileError{Reason: RowBadMagic}
	}
	le := binary.LittleEndian
	if v := le.Uint32(fixed[8:]); v != RowFileVersion {
		return nil, &RowFileError{Reason: RowBadVersion, Msg: fmt.Sprintf("version %d; this gpzoo reads version %d", v, RowFileVersion)}
	}
	hlen := le.Uint32(fixed[12:])
	if hlen < rowFixed+rowSumLen || hlen > maxRowHeader || hlen%8 != 0 {
		return nil, &RowFileError{Reason: RowCorruptHeader, Msg: fmt.Sprintf("header length %d", hlen)}
	}
	buf := make([]byte, hlen)
	copy(buf, fixed)
	if n, err := io.ReadFull(r, buf[rowFixed:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &RowFileError{Reason: RowTruncatedHeader, Msg: fmt.Sprintf("%d of %d bytes", rowFixed+n, hlen)}
		}
		return nil, err
	}
	body, sum := buf[:hlen-rowSumLen], buf[hlen-rowSumLen:]
	if want := sha256.Sum256(body); !bytes.Equal(sum, want[:]) {
		return nil, &RowFileError{Reason: RowCorruptHeader, Msg: "checksum mismatch"}
	}
	rows, first := le.Uint64(fixed[16:]), le.Uint64(fixed[24:])
	d, p := le.Uint32(fixed[32:]), le.Uint32(fixed[36:])
	if rows > math.MaxInt64 || first > math.MaxInt64 || d > maxRowColumns || p > maxRowColumns {
		return nil, &RowFileError{Reason: RowCorruptHeader, Msg: fmt.Sprintf("%d rows from row %d, %d inputs, %d targets", rows, first, d, p)}
	}
	h := &RowHeader{Version: RowFileVersion, Len: int(hlen), Rows: int(rows), FirstRow: int(first), Inputs: int(d), Targets: int(p)}
	pos := rowFixed
	for range d + p {
		if pos+2 > len(body) {
			return nil, &RowFileError{Reason: RowCorruptHeader, Msg: "column names run past the header"}
		}
		n := int(le.Uint16(body[pos:]))
		pos += 2
		if pos+n > len(body) {
			return nil, &RowFileError{Reason: RowCorruptHeader, Msg: "column names run past the header"}
		}
		h.Names = append(h.Names, string(body[pos:pos+n]))
		pos += n
	}
	for _, c := range body[pos:] {
		if c != 0 {
			return nil, &RowFileError{Reason: RowCorruptHeader, Msg: "non-zero padding after the names"}
		}
	}
	if len(body)-pos >= 8 {
		return nil, &RowFileError{Reason: RowCorruptHeader, Msg: "padding longer than alignment needs"}
	}
	if err := checkRowShape(h.Rows, h.FirstRow, h.Inputs, h.Targets, h.Names); err != nil {
		return nil, &RowFileError{Reason: RowCorruptHeader, Msg: err.Error()}
	}
	return h, nil
}

// RowWriter streams a row file: the header first, then rows one at a time through a buffer, so that writing
// any number of rows takes constant memory. The row count is declared up front; Close fails if fewer rows
// were written. It is not safe for concurrent use.
type RowWriter struct {
	h       RowHeader
	bw      *bufio.Writer
	written int
	buf     []byte
	err     error
}

// NewRowWriter writes the header of a row file of rows rows (the global indices [first, first+rows)) with
// the given column names, the first inputs of them inputs and the rest targets, to w. Errors: ErrInvalid or
// ErrShape for impossible counts or bad names; w's write error.
func NewRowWriter(w io.Writer, rows, first, inputs int, names []string) (*RowWriter, error) {
	h := RowHeader{Rows: rows, FirstRow: first, Inputs: inputs, Targets: len(names) - inputs, Names: append([]string(nil), names...)}
	head, err := h.encode()
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(head); err != nil {
		return nil, err
	}
	return &RowWriter{h: h, bw: bufio.NewWriterSize(w, rowScanBuf), buf: make([]byte, 8*h.Width())}, nil
}

// Write appends one row: D inputs then P targets. Errors: ErrShape for a row of another width, *IndexError
// beyond the declared row count, *NonFiniteError (Row the file's row) for NaN or ±Inf, the writer's error.
func (w *RowWriter) Write(row []float64) error {
	if w.err != nil {
		return w.err
	}
	if len(row) != w.h.Width() {
		return fmt.Errorf("datasets: row of %d values in a row file of %d columns: %w", len(row), w.h.Width(), ErrShape)
	}
	if w.written >= w.h.Rows {
		return &IndexError{Index: w.written, Len: w.h.Rows}
	}
	for j, v := range row {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &NonFiniteError{Row: w.written, Col: j, Value: v}
		}
		binary.LittleEndian.PutUint64(w.buf[8*j:], math.Float64bits(v))
	}
	if _, err := w.bw.Write(w.buf); err != nil {
		w.err = err
		return err
	}
	w.written++
	return nil
}

// Close flushes the buffer (it does not close the underlying writer). Errors: ErrInvalid when fewer rows
// were written than declared; the writer's error.
func (w *RowWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if w.written != w.h.Rows {
		return fmt.Errorf("datasets: row file declared %d rows, %d written: %w", w.h.Rows, w.written, ErrInvalid)
	}
	return nil
}

// RowFile is an open row file, read by row ranges.
type RowFile struct {
	RowHeader
	path string
	f    *os.File
}

// OpenRowFile opens the row file at path and checks its header and its length. Errors: *RowFileError
// (naming the file), the open error.
func OpenRowFile(path string) (*RowFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h, err := ReadRowHeader(bufio.NewReaderSize(f, 4096))
	if err != nil {
		f.Close()
		var rf *RowFileError
		if errors.As(err, &rf) {
			rf.File = path
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch size, want := st.Size(), h.Size(); {
	case size < want:
		f.Close()
		return nil, &RowFileError{File: path, Reason: RowShortFile, Msg: fmt.Sprintf("%d bytes, %d rows need %d", size, h.Rows, want)}
	case size > want:
		f.Close()
		return nil, &RowFileError{File: path, Reason: RowLongFile, Msg: fmt.Sprintf("%d bytes, %d rows need %d", size, h.Rows, want)}
	}
	return &RowFile{RowHeader: *h, path: path, f: f}, nil
}

// Close closes the file.
func (f *RowFile) Close() error { return f.f.Close() }

// Scan reads the rows of global indices [lo, hi) (within [FirstRow, FirstRow+Rows)) in order, calling fn
// with each row's global index and its D+P values (a buffer fn must not keep). It seeks to row lo and reads
// only the range, a megabyte at a time. Errors: *IndexError for a range outside the file, *NonFiniteError
// (Row the global row, Col the column), a read error (a file cut short meanwhile gives RowShortFile), or fn's.
func (f *RowFile) Scan(lo, hi int, fn func(row int, vals []float64) error) error {
	if lo < f.FirstRow || lo > hi {
		return &IndexError{Index: lo, Len: f.FirstRow + f.Rows}
	}
	if hi > f.FirstRow+f.Rows {
		return &IndexError{Index: hi - 1, Len: f.FirstRow + f.Rows}
	}
	w := f.Width()
	rowBytes := 8 * w
	per := max(1, rowScanBuf/rowBytes)
	buf := make([]byte, per*rowBytes)
	vals := make([]float64, w)
	sr := io.NewSectionReader(f.f, f.Offset(lo-f.FirstRow), int64(hi-lo)*int64(rowBytes))
	for r := lo; r < hi; {
		n := min(per, hi-r)
		if _, err := io.ReadFull(sr, buf[:n*rowBytes]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return &RowFileError{File: f.path, Reason: RowShortFile, Msg: fmt.Sprintf("ends inside row %d", r)}
			}
			return err
		}
		for k := range n {
			b := buf[k*rowBytes : (k+1)*rowBytes]
			for j := range vals {
				v := math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:]))
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return withFile(&NonFiniteError{Row: r + k, Col: j, Value: v}, f.path)
				}
				vals[j] = v
			}
			if err := fn(r+k, vals); err != nil {
				return err
			}
		}
		r += n
	}
	return nil
}

// ReadRows returns the rows of global indices [lo, hi) of the row file at path: inputs x [hi−lo, D] and
// targets y [hi−lo, P] (nil when P = 0), reading only those rows. Errors: those of OpenRowFile and Scan.
func ReadRows(path string, lo, hi int) (x, y *mat.Dense, err error) {
	f, err := OpenRowFile(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if lo >= hi {
		return nil, nil, fmt.Errorf("datasets: ReadRows [%d, %d): %w", lo, hi, ErrEmpty)
	}
	d, p := f.Inputs, f.Targets
	xs := make([]float64, (hi-lo)*d)
	var ys []float64
	if p > 0 {
		ys = make([]float64, (hi-lo)*p)
	}
	err = f.Scan(lo, hi, func(r int, v []float64) error {
		i := r - lo
		copy(xs[i*d:(i+1)*d], v[:d])
		copy(ys[i*p:(i+1)*p], v[d:])
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if p > 0 {
		y = mat.NewDense(hi-lo, p, ys)
	}
	return mat.NewDense(hi-lo, d, xs), y, nil
}

// WriteRowFile writes the rows of x [N,D] and y [N,P] (nil: none) to w as a row file whose rows are the global
// indices [0, N), the columns named names (D+P of them; nil: x0 … x{D−1}, y0 … y{P−1}). Errors: those of
// NewRowWriter and RowWriter.Write (a non-finite value names its row and column).
func WriteRowFile(w io.Writer, x, y *mat.Dense, names []string) error {
	n, d := x.Dims()
	p := 0
	if y != nil {
		ny, py := y.Dims()
		if ny != n {
			return fmt.Errorf("datasets: WriteRowFile: %d input rows and %d target rows: %w", n, ny, ErrShape)
		}
		p = py
	}
	if names == nil {
		for j := range d {
			names = append(names, fmt.Sprint("x", j))
		}
		for j := range p {
			names = append(names, fmt.Sprint("y", j))
		}
	}
	rw, err := NewRowWriter(w, n, 0, d, names)
	if err != nil {
		return err
	}
	row := make([]float64, d+p)
	for i := range n {
		copy(row, x.RawRowView(i))
		if p > 0 {
			copy(row[d:], y.RawRowView(i))
		}
		if err := rw.Write(row); err != nil {
			return err
		}
	}
	return rw.Close()
}
