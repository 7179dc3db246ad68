package datasets

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
)

// maxClasses bounds the label values accepted by ParseDelgado so that a
// corrupt label cannot make callers allocate huge one-hot matrices.
const maxClasses = 1 << 16

// ParseDelgado parses a Fernández-Delgado classification table from r:
// comma-separated, no header, features then an integer label 0..K-1 in the
// last column (gzip detected by magic bytes). X is [N, C-1], Y [N, 1] holding
// the labels as float64, NumClasses = 1 + the largest label. Errors: those of
// ReadMatrix; *FormatError for fewer than 2 columns or a label that is not an
// integer in [0, 65536).
func ParseDelgado(r io.Reader) (*Dataset, error) {
	return parseDelgado(r, "")
}

func parseDelgado(r io.Reader, name string) (*Dataset, error) {
	m, err := readMatrix(r, ',', name)
	if err != nil {
		return nil, err
	}
	d, err := splitLastColumn(m, name)
	if err != nil {
		return nil, err
	}
	k := 0
	for i := 0; i < d.N(); i++ {
		v := d.Y.At(i, 0)
		if v != math.Trunc(v) || v < 0 || v >= maxClasses {
			return nil, &FormatError{File: name, Msg: fmt.Sprintf("row %d (0-based): label %v is not an integer in [0, %d)", i, v, maxClasses)}
		}
		k = max(k, int(v)+1)
	}
	d.NumClasses = k
	return d, nil
}

// LoadDelgado reads the Fernández-Delgado CSV file at path (see ParseDelgado)
// into a dataset named after the file without its extension.
func LoadDelgado(path string) (*Dataset, error) {
	d, err := withOpen(path, func(r io.Reader) (*Dataset, error) { return parseDelgado(r, path) })
	if err != nil {
		return nil, err
	}
	d.Name = baseName(path)
	return d, nil
}

// ParseRaetsch parses a Rätsch benchmark table from r: comma-separated, no
// header, features then a label −1 or +1 in the last column (gzip detected by
// magic bytes). Labels are mapped −1 → 0 and +1 → 1: X is [N, C-1], Y [N, 1],
// NumClasses 2. Errors: those of ReadMatrix; *FormatError for fewer than 2
// columns or a label other than ±1.
func ParseRaetsch(r io.Reader) (*Dataset, error) {
	return parseRaetsch(r, "")
}

func parseRaetsch(r io.Reader, name string) (*Dataset, error) {
	m, err := readMatrix(r, ',', name)
	if err != nil {
		return nil, err
	}
	d, err := splitLastColumn(m, name)
	if err != nil {
		return nil, err
	}
	for i := 0; i < d.N(); i++ {
		switch v := d.Y.At(i, 0); v {
		case -1:
			d.Y.Set(i, 0, 0)
		case 1:
		default:
			return nil, &FormatError{File: name, Msg: fmt.Sprintf("row %d (0-based): label %v is not -1 or +1", i, v)}
		}
	}
	d.NumClasses = 2
	return d, nil
}

// LoadRaetsch reads the Rätsch CSV file at path (see ParseRaetsch) into a
// dataset named after the file without its extension.
func LoadRaetsch(path string) (*Dataset, error) {
	d, err := withOpen(path, func(r io.Reader) (*Dataset, error) { return parseRaetsch(r, path) })
	if err != nil {
		return nil, err
	}
	d.Name = baseName(path)
	return d, nil
}

// baseName returns the file name of path without ".gz" and one further
// extension.
func baseName(path string) string {
	b := strings.TrimSuffix(filepath.Base(path), ".gz")
	return strings.TrimSuffix(b, filepath.Ext(b))
}
