package datasets

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gpzoo/gpzoo/internal/atomicfile"
)

// maxLineBytes bounds one text line (a 784-pixel CSV row needs ~10 kB).
const maxLineBytes = 64 << 20

// openInput wraps r so that gzip input (detected by its magic bytes 1f 8b)
// is decompressed transparently. name labels errors.
func openInput(r io.Reader, name string) (io.Reader, error) {
	if r == nil {
		return nil, fmt.Errorf("datasets: nil reader: %w", ErrEmpty)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, readError(err, name, 0)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, readError(err, name, 0)
		}
		return zr, nil
	}
	return br, nil
}

// readError classifies an error met while reading: corrupt or truncated
// compressed data becomes a *FormatError, anything else (an I/O failure) is
// wrapped as is.
func readError(err error, name string, line int) error {
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FormatError{File: name, Line: line, Msg: "unexpected end of data (truncated file or gzip stream)"}
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, &ce):
		return &FormatError{File: name, Line: line, Msg: "corrupt gzip stream: " + err.Error()}
	case errors.Is(err, bufio.ErrTooLong):
		return &FormatError{File: name, Line: line, Msg: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
	}
	if name != "" {
		return fmt.Errorf("datasets: reading %s: %w", name, err)
	}
	return fmt.Errorf("datasets: reading: %w", err)
}

// openFile opens path; the caller closes the file.
func openFile(path string) (*os.File, error) {
	if path == "" {
		return nil, fmt.Errorf("datasets: empty path: %w", ErrInvalid)
	}
	f, err := atomicfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	return f, nil
}

// withOpen opens path and calls parse on its contents.
func withOpen[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := openFile(path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return zero, withFile(err, path)
	}
	return v, nil
}

// errRecorder remembers the first non-EOF error of a reader. bufio.Scanner
// hands out the partial last line of a failing stream before reporting the
// error, so parsers consult the recorder before blaming that line.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// lineScanner scans the lines of a reader, remembering read errors.
type lineScanner struct {
	*bufio.Scanner
	rec *errRecorder
}

// newLineScanner returns a scanner over the lines of r.
func newLineScanner(r io.Reader) lineScanner {
	rec := &errRecorder{r: r}
	sc := bufio.NewScanner(rec)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	return lineScanner{sc, rec}
}

// fail returns parseErr, unless the stream itself failed, in which case the
// read error (classified by readError) is returned instead.
func (s lineScanner) fail(parseErr error, name string, line int) error {
	if s.rec.err != nil {
		return readError(s.rec.err, name, line)
	}
	return parseErr
}

// isBlank reports whether line holds only whitespace.
func isBlank(line string) bool {
	for i := 0; i < len(line); i++ {
		if !isSpace(line[i]) {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// countRows counts the non-blank lines of the (possibly gzipped) file at path.
func countRows(path string) (int, error) {
	return withOpen(path, func(r io.Reader) (int, error) {
		in, err := openInput(r, "")
		if err != nil {
			return 0, err
		}
		sc := newLineScanner(in)
		n, line := 0, 0
		for sc.Scan() {
			line++
			if !isBlank(sc.Text()) {
				n++
			}
		}
		if err := sc.Err(); err != nil {
			return 0, readError(err, "", line+1)
		}
		return n, nil
	})
}
