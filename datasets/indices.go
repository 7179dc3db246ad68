package datasets

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// maxIndex bounds parsed indices so that they fit any int comfortably.
const maxIndex = 1 << 40

// ParseIndices reads whitespace-separated integer indices (one per line or
// several per line; integral floats such as "12.0" or "1.2e1" are accepted)
// from r, gzip detected by magic bytes. The values are not range-checked.
// Errors: ErrEmpty for a nil reader or no values; *FormatError for a value
// that is not an integer (line 1-based).
func ParseIndices(r io.Reader) ([]int, error) {
	return parseIndices(r, "")
}

func parseIndices(r io.Reader, name string) ([]int, error) {
	in, err := openInput(r, name)
	if err != nil {
		return nil, err
	}
	sc := newLineScanner(in)
	var (
		out    []int
		fields []string
		line   int
	)
	for sc.Scan() {
		line++
		fields = splitFields(sc.Text(), 0, fields[:0])
		for _, f := range fields {
			v, err := strconv.Atoi(f)
			if err != nil {
				fv, ferr := strconv.ParseFloat(f, 64)
				if ferr != nil || fv != math.Trunc(fv) || math.Abs(fv) > maxIndex {
					return nil, sc.fail(&FormatError{File: name, Line: line, Msg: fmt.Sprintf("%q is not an integer index", truncate(f))}, name, line)
				}
				v = int(fv)
			}
			if v > maxIndex || v < -maxIndex {
				return nil, sc.fail(&FormatError{File: name, Line: line, Msg: fmt.Sprintf("index %d is too large", v)}, name, line)
			}
			out = append(out, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, readError(err, name, line+1)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("datasets: no indices: %w", ErrEmpty)
	}
	return out, nil
}

// loadIndices reads an index file.
func loadIndices(path string) ([]int, error) {
	return withOpen(path, func(r io.Reader) ([]int, error) { return parseIndices(r, path) })
}

// checkIndices verifies that every index lies in [0, n) and that none repeats.
func checkIndices(idx []int, n int) error {
	seen := make([]bool, n)
	for _, i := range idx {
		if i < 0 || i >= n {
			return &IndexError{Index: i, Len: n}
		}
		if seen[i] {
			return &FormatError{Msg: fmt.Sprintf("index %d repeated", i)}
		}
		seen[i] = true
	}
	return nil
}

// Complement returns, in increasing order, the indices in [0, n) that are
// not in idx (e.g. the training rows of a test fold). Errors: ErrInvalid for
// n < 1, *IndexError for an index outside [0, n).
func Complement(n int, idx []int) ([]int, error) {
	if n < 1 {
		return nil, fmt.Errorf("datasets: Complement of n=%d: %w", n, ErrInvalid)
	}
	in := make([]bool, n)
	count := 0
	for _, i := range idx {
		if i < 0 || i >= n {
			return nil, &IndexError{Index: i, Len: n}
		}
		if !in[i] {
			count++
		}
		in[i] = true
	}
	out := make([]int, 0, n-count)
	for i, b := range in {
		if !b {
			out = append(out, i)
		}
	}
	return out, nil
}
