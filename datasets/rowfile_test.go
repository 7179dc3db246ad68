package datasets

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// writeRowFile writes d (inputs then its one target "y") as a row file at path (WriteRowFile).
func writeRowFile(t *testing.T, path string, d *Dataset) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := WriteRowFile(f, d.X, d.Y, append(append([]string(nil), d.FeatureNames...), "y")); err != nil {
		t.Fatal(err)
	}
}

// WriteRowFile names unnamed columns x0…, y0… and refuses inputs and targets of different lengths.
func TestWriteRowFile(t *testing.T) {
	d := synthForTest(t, 5, 2)
	var b bytes.Buffer
	if err := WriteRowFile(&b, d.X, d.Y, nil); err != nil {
		t.Fatal(err)
	}
	h, err := ReadRowHeader(&b)
	if err != nil || h.Rows != 5 || strings.Join(h.Names, ",") != "x0,x1,y0" {
		t.Fatalf("header %+v, %v", h, err)
	}
	if err := WriteRowFile(&b, d.X, mat.NewDense(4, 1, nil), nil); !errors.Is(err, ErrShape) {
		t.Errorf("5 input rows, 4 target rows: %v", err)
	}
}

func synthForTest(t *testing.T, n, d int) *Dataset {
	t.Helper()
	ds, err := Synthetic(SynthConfig{Rows: n, Inputs: d, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestRowFileRoundTrip(t *testing.T) {
	d := synthForTest(t, 1000, 3)
	path := filepath.Join(t.TempDir(), "s.gpzr")
	writeRowFile(t, path, d)
	f, err := OpenRowFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows != 1000 || f.Inputs != 3 || f.Targets != 1 || f.Len%8 != 0 || f.Names[3] != "y" || f.Names[0] != "x0" {
		t.Fatalf("header %+v", f.RowHeader)
	}
	st, _ := os.Stat(path)
	if st.Size() != f.Size() || f.Offset(17) != int64(f.Len)+17*32 {
		t.Fatalf("size %d, header says %d; offset of row 17 %d", st.Size(), f.Size(), f.Offset(17))
	}
	f.Close()
	for _, r := range [][2]int{{0, 1000}, {0, 1}, {999, 1000}, {250, 731}} {
		x, y, err := ReadRows(path, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(x, d.X.Slice(r[0], r[1], 0, 3)) || !mat.Equal(y, d.Y.Slice(r[0], r[1], 0, 1)) {
			t.Fatalf("rows %v differ from the data written", r)
		}
	}
	for _, r := range [][2]int{{-1, 3}, {5, 1001}, {7, 7}} {
		if _, _, err := ReadRows(path, r[0], r[1]); err == nil {
			t.Errorf("ReadRows%v accepted", r)
		}
	}
}

// TestRowFileFirstRow: a shard file holding rows [F, F+R) of a larger set is read by global index.
func TestRowFileFirstRow(t *testing.T) {
	var b bytes.Buffer
	w, err := NewRowWriter(&b, 3, 100, 1, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Write([]float64{float64(i), -float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "part.gpzr")
	os.WriteFile(path, b.Bytes(), 0o644)
	x, y, err := ReadRows(path, 101, 103)
	if err != nil {
		t.Fatal(err)
	}
	if x.At(0, 0) != 1 || x.At(1, 0) != 2 || y.At(1, 0) != -2 {
		t.Fatalf("rows 101..102: x %v y %v", mat.Formatted(x), mat.Formatted(y))
	}
	if _, _, err := ReadRows(path, 0, 2); !errors.Is(err, ErrIndex) {
		t.Errorf("rows before the file's first row: %v", err)
	}
}

func TestRowWriterRefuses(t *testing.T) {
	var b bytes.Buffer
	for _, c := range []struct {
		rows, inputs int
		names        []string
	}{{-1, 1, []string{"a"}}, {1, 0, []string{"a"}}, {1, 1, []string{"a", "a"}}, {1, 2, []string{"a"}}, {1, 1, []string{""}}, {1, 1, []string{" a"}}} {
		if _, err := NewRowWriter(&b, c.rows, 0, c.inputs, c.names); err == nil {
			t.Errorf("NewRowWriter(%d rows, %d inputs, %q) accepted", c.rows, c.inputs, c.names)
		}
	}
	w, err := NewRowWriter(&b, 2, 0, 1, []string{"a", "y"})
	if err != nil {
		t.Fatal(err)
	}
	var nf *NonFiniteError
	if err := w.Write([]float64{1, math.NaN()}); !errors.As(err, &nf) || nf.Col != 1 {
		t.Errorf("NaN written: %v", err)
	}
	if err := w.Write([]float64{1}); !errors.Is(err, ErrShape) {
		t.Errorf("short row written: %v", err)
	}
	if err := w.Write([]float64{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, ErrInvalid) {
		t.Errorf("1 row of 2 declared closed: %v", err)
	}
}

// rowFileBytes returns a valid row file of 4 rows of 2 inputs and 1 target.
func rowFileBytes(t testing.TB) []byte {
	var b bytes.Buffer
	w, err := NewRowWriter(&b, 4, 0, 2, []string{"u", "v", "target"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := w.Write([]float64{float64(i), 0.5, 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRowFileErrors(t *testing.T) {
	good := rowFileBytes(t)
	h, err := ReadRowHeader(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	resum := func(b []byte) []byte { // a header edited and given a valid checksum again
		n := binary.LittleEndian.Uint32(b[12:])
		s := sha256.Sum256(b[:n-32])
		copy(b[n-32:n], s[:])
		return b
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	nan := edit(func(b []byte) []byte {
		binary.LittleEndian.PutUint64(b[h.Offset(2)+8:], math.Float64bits(math.Inf(-1)))
		return b
	})
	cases := []struct {
		name   string
		data   []byte
		reason RowFileReason
	}{
		{"csv", []byte("x,y\n1,2\n"), RowBadMagic},
		{"empty", nil, RowTruncatedHeader},
		{"magic only", good[:8], RowTruncatedHeader},
		{"half header", good[:h.Len-5], RowTruncatedHeader},
		{"version 2", edit(func(b []byte) []byte { b[8] = 2; return resum(b) }), RowBadVersion},
		{"checksum", edit(func(b []byte) []byte { b[42]++; return b }), RowCorruptHeader},
		{"header length", edit(func(b []byte) []byte { b[12] = 9; return b }), RowCorruptHeader},
		{"zero inputs", edit(func(b []byte) []byte { b[32] = 0; b[36] = 3; return resum(b) }), RowCorruptHeader},
		{"short", good[:len(good)-1], RowShortFile},
		{"no rows", good[:h.Len], RowShortFile},
		{"long", append(append([]byte(nil), good...), 0), RowLongFile},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, c.name+".gpzr")
		os.WriteFile(path, c.data, 0o644)
		_, _, err := ReadRows(path, 0, 1)
		var rf *RowFileError
		if !errors.As(err, &rf) || rf.Reason != c.reason || !errors.Is(err, ErrFormat) || rf.File != path {
			t.Errorf("%s: %v, want reason %v naming the file", c.name, err, c.reason)
		}
	}
	path := filepath.Join(dir, "inf.gpzr")
	os.WriteFile(path, nan, 0o644)
	var nf *NonFiniteError
	if _, _, err := ReadRows(path, 1, 4); !errors.As(err, &nf) || nf.Row != 2 || nf.Col != 1 {
		t.Errorf("-Inf in row 2 column 1: %v", err)
	}
	if _, _, err := ReadRows(path, 0, 2); err != nil {
		t.Errorf("rows before the -Inf: %v", err)
	}
}

// FuzzRowHeader: the header parser never panics, reads exactly Len bytes of what it accepts, and what it
// accepts is a header the writer writes the same bytes for.
func FuzzRowHeader(f *testing.F) {
	good := rowFileBytes(f)
	f.Add(good)
	f.Add(good[:30])
	f.Add([]byte(rowMagic))
	f.Add([]byte("x,y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		h, err := ReadRowHeader(r)
		if err != nil {
			if h != nil || !errors.Is(err, ErrFormat) {
				t.Fatalf("header %v with error %v (want nil and a format error)", h, err)
			}
			return
		}
		if int(r.Size())-r.Len() != h.Len {
			t.Fatalf("read %d bytes of a %d-byte header", int(r.Size())-r.Len(), h.Len)
		}
		var b bytes.Buffer
		if _, err := NewRowWriter(&b, h.Rows, h.FirstRow, h.Inputs, h.Names); err != nil {
			t.Fatalf("accepted header %+v is refused by the writer: %v", h, err)
		}
		w := b.Bytes()
		if len(w) < h.Len || !bytes.Equal(w[:h.Len], data[:h.Len]) {
			t.Fatalf("accepted header is not the writer's")
		}
	})
}
