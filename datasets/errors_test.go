package datasets

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadMatrixBasic(t *testing.T) {
	m, err := ReadMatrix(strings.NewReader("\uFEFF 1\t2  3\r\n\n4 5e0 -6.5\n   \n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 2 || c != 3 || m.At(1, 2) != -6.5 || m.At(0, 1) != 2 {
		t.Fatalf("got %v", m)
	}
	m, err = ReadMatrix(bytes.NewReader(gz([]byte("1, 2\n3 ,4\n"))), ',')
	if err != nil {
		t.Fatal(err)
	}
	if m.At(1, 0) != 3 {
		t.Fatalf("gzip matrix %v", m)
	}
}

func TestErrorRagged(t *testing.T) {
	_, err := ReadMatrix(strings.NewReader("1 2 3\n4 5 6\n7 8\n"), 0)
	var re *RaggedError
	if !errors.Is(err, ErrRagged) || !errors.As(err, &re) {
		t.Fatalf("err = %v", err)
	}
	if re.Row != 2 || re.Want != 3 || re.Got != 2 {
		t.Fatalf("got %+v", re)
	}
}

func TestErrorNonFinite(t *testing.T) {
	for _, lit := range []string{"NaN", "nan", "Inf", "-inf", "1e999"} {
		_, err := ReadMatrix(strings.NewReader("1,2,3\n4,5,"+lit+"\n"), ',')
		var ne *NonFiniteError
		if !errors.Is(err, ErrNonFinite) || !errors.As(err, &ne) {
			t.Fatalf("%s: err = %v", lit, err)
		}
		if ne.Row != 1 || ne.Col != 2 || !(math.IsNaN(ne.Value) || math.IsInf(ne.Value, 0)) {
			t.Fatalf("%s: got %+v", lit, ne)
		}
		if msg := err.Error(); !strings.Contains(msg, "row 1") || !strings.Contains(msg, "column 2") ||
			!strings.Contains(msg, "0-based") || !strings.HasPrefix(msg, "datasets: ") {
			t.Fatalf("message %q", msg)
		}
	}
	// Evans / Delgado parsers report it too.
	var ne *NonFiniteError
	_, err := ParseEvans(strings.NewReader("1,2\n3,nan\n"))
	if !errors.As(err, &ne) || ne.Row != 1 || ne.Col != 1 {
		t.Fatalf("Evans NaN: %v", err)
	}
	// Validate catches non-finite values placed by hand.
	d, _ := ParseEvans(strings.NewReader("1,2\n3,4\n"))
	d.Y.Set(1, 0, math.Inf(1))
	if err := d.Validate(); !errors.As(err, &ne) || ne.Row != 1 || ne.Col != 1 {
		t.Fatalf("Validate: %v", err)
	}
}

func TestErrorIndex(t *testing.T) {
	// A UCI folder of 20 splits and an Evans folder of 10 folds, written here.
	uci, evans := t.TempDir(), t.TempDir()
	files := map[string]string{"data.txt": "1 2\n3 4\n5 6\n", "index_features.txt": "0\n", "index_target.txt": "1\n", "n_splits.txt": "20\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(uci, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mask := strings.Repeat("1,0,0,0,0,0,0,0,0,0\n", 3)
	if err := os.WriteFile(filepath.Join(evans, "data.csv.gz"), gz([]byte("1,2\n3,4\n5,6\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(evans, "test_mask.csv.gz"), gz([]byte(mask)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := UCISplit(uci, 20)
	var ie *IndexError
	if !errors.Is(err, ErrIndex) || !errors.As(err, &ie) || ie.Index != 20 || ie.Len != 20 {
		t.Fatalf("UCISplit(20): %v", err)
	}
	_, _, err = EvansSplit(evans, -1)
	if !errors.As(err, &ie) || ie.Index != -1 || ie.Len != 10 {
		t.Fatalf("EvansSplit(-1): %v", err)
	}
	// A split file naming a row past the end of the data.
	tmp := t.TempDir()
	files = map[string]string{
		"data.txt": "1 2\n3 4\n5 6\n", "index_features.txt": "0\n", "index_target.txt": "1\n", "n_splits.txt": "1\n",
		"index_train_0.txt": "0\n1\n", "index_test_0.txt": "3\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = UCISplit(tmp, 0)
	if !errors.As(err, &ie) || ie.Index != 3 || ie.Len != 3 {
		t.Fatalf("bad row index: %v", err)
	}
	// Overlapping train/test is a format error.
	os.WriteFile(filepath.Join(tmp, "index_test_0.txt"), []byte("1.0\n"), 0o644)
	if _, _, err = UCISplit(tmp, 0); !errors.Is(err, ErrFormat) {
		t.Fatalf("overlap: %v", err)
	}
	// Float-written indices are accepted.
	os.WriteFile(filepath.Join(tmp, "index_test_0.txt"), []byte("2.0\n"), 0o644)
	train, test, err := UCISplit(tmp, 0)
	if err != nil || len(train) != 2 || len(test) != 1 || test[0] != 2 {
		t.Fatalf("float indices: %v %v %v", train, test, err)
	}
	// A feature column beyond the matrix.
	os.WriteFile(filepath.Join(tmp, "index_features.txt"), []byte("0 5"), 0o644)
	if _, err = LoadUCI(tmp); !errors.As(err, &ie) || ie.Index != 5 || ie.Len != 2 {
		t.Fatalf("bad column: %v", err)
	}
	// Subset out of range.
	d, _ := Embedded("airfoil")
	if _, err := d.Subset([]int{0, 1503}); !errors.As(err, &ie) || ie.Index != 1503 || ie.Len != 1503 {
		t.Fatalf("Subset: %v", err)
	}
}

func TestErrorEmpty(t *testing.T) {
	for name, f := range map[string]func() error{
		"ReadMatrix":     func() error { _, err := ReadMatrix(strings.NewReader(""), 0); return err },
		"ReadMatrixWS":   func() error { _, err := ReadMatrix(strings.NewReader(" \n\t\n"), 0); return err },
		"ReadMatrixGz":   func() error { _, err := ReadMatrix(bytes.NewReader(gz(nil)), 0); return err },
		"ReadMatrixNil":  func() error { _, err := ReadMatrix(nil, 0); return err },
		"ParseEvans":     func() error { _, err := ParseEvans(strings.NewReader("")); return err },
		"ParseIndices":   func() error { _, err := ParseIndices(strings.NewReader("\n")); return err },
		"ParseIDXImages": func() error { _, err := ParseIDXImages(strings.NewReader("")); return err },
		"ParseIDXLabels": func() error { _, err := ParseIDXLabels(bytes.NewReader(idxBytes([]int{0}, nil))); return err },
		"Subset":         func() error { d, _ := Embedded("airfoil"); _, err := d.Subset(nil); return err },
		"Validate":       func() error { return (&Dataset{}).Validate() },
	} {
		if !errors.Is(f(), ErrEmpty) {
			t.Errorf("%s: err = %v, want ErrEmpty", name, f())
		}
	}
}

func TestErrorTruncatedGzip(t *testing.T) {
	full := gz([]byte(strings.Repeat("1.5,2.25,3\n", 2000)))
	for _, cut := range []int{len(full) - 4, len(full) / 2, 12} {
		_, err := ReadMatrix(bytes.NewReader(full[:cut]), ',')
		var fe *FormatError
		if !errors.Is(err, ErrFormat) || !errors.As(err, &fe) {
			t.Fatalf("cut %d: err = %v", cut, err)
		}
	}
	// A corrupted checksum.
	bad := append([]byte(nil), full...)
	bad[len(bad)-6] ^= 0xff
	if _, err := ReadMatrix(bytes.NewReader(bad), ','); !errors.Is(err, ErrFormat) {
		t.Fatalf("checksum: %v", err)
	}
	// Truncated IDX payload inside gzip, and truncated gzip of IDX.
	img := idxBytes([]int{2, 2, 2}, []byte{0, 255, 1, 2, 3, 4, 5, 6})
	if _, err := ParseIDXImages(bytes.NewReader(gz(img[:len(img)-1]))); !errors.Is(err, ErrFormat) {
		t.Fatalf("short IDX: %v", err)
	}
	zimg := gz(img)
	_, err := ParseIDXImages(bytes.NewReader(zimg[:len(zimg)-3]))
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("truncated gzip IDX: %v", err)
	}
}

func TestIDX(t *testing.T) {
	img := idxBytes([]int{2, 2, 2}, []byte{0, 255, 51, 102, 1, 2, 3, 4})
	for _, in := range [][]byte{img, gz(img)} {
		m, err := ParseIDXImages(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if r, c := m.Dims(); r != 2 || c != 4 || m.At(0, 1) != 1 || m.At(0, 2) != 0.2 {
			t.Fatalf("got %v", m)
		}
	}
	labels, err := ParseIDXLabels(bytes.NewReader(idxBytes([]int{3}, []byte{7, 0, 9})))
	if err != nil || len(labels) != 3 || labels[0] != 7 || labels[2] != 9 {
		t.Fatalf("labels %v %v", labels, err)
	}
	for name, in := range map[string][]byte{
		"labels as images": idxBytes([]int{3}, []byte{1, 2, 3}),
		"int32 type":       {0, 0, 0x0c, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0},
		"text":             []byte("hello world, not idx"),
		"trailing":         append(idxBytes([]int{1, 1, 1}, []byte{5}), 9),
	} {
		_, err := ParseIDXImages(bytes.NewReader(in))
		var fe *FormatError
		if !errors.Is(err, ErrFormat) || !errors.As(err, &fe) {
			t.Errorf("%s: err = %v", name, err)
		}
		if name != "trailing" && !strings.Contains(err.Error(), "magic") {
			t.Errorf("%s: message %q does not mention the magic", name, err)
		}
	}
	_, err = ParseIDXLabels(bytes.NewReader(idxBytes([]int{1, 1, 1}, []byte{5})))
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("images as labels: %v", err)
	}
	// A lying header (2^24 images of 1 byte) with no payload fails without
	// allocating for the claimed size.
	if _, err := ParseIDXLabels(bytes.NewReader(idxBytes([]int{1 << 24}, []byte{1}))); !errors.Is(err, ErrFormat) {
		t.Fatalf("lying header: %v", err)
	}
}

func TestLabels(t *testing.T) {
	d, err := ParseDelgado(strings.NewReader("0.5,1\n0.25,0\n1,3\n"))
	if err != nil || d.NumClasses != 4 {
		t.Fatalf("%v %v", d, err)
	}
	d, err = ParseRaetsch(strings.NewReader("0.5,1\n0.25,-1\n"))
	if err != nil || d.Y.At(0, 0) != 1 || d.Y.At(1, 0) != 0 || d.NumClasses != 2 {
		t.Fatalf("%v %v", d, err)
	}
	for _, in := range []string{"1,0.5\n", "1,-1\n", "1,1e9\n", "5\n"} {
		if _, err := ParseDelgado(strings.NewReader(in)); !errors.Is(err, ErrFormat) {
			t.Errorf("Delgado %q: %v", in, err)
		}
	}
	for _, in := range []string{"1,0\n", "1,2\n", "1\n"} {
		if _, err := ParseRaetsch(strings.NewReader(in)); !errors.Is(err, ErrFormat) {
			t.Errorf("Raetsch %q: %v", in, err)
		}
	}
	// Validate checks labels.
	d, _ = ParseDelgado(strings.NewReader("0.5,1\n0.25,0\n"))
	d.Y.Set(0, 0, 2)
	if err := d.Validate(); !errors.Is(err, ErrFormat) {
		t.Fatalf("Validate label: %v", err)
	}
}

func TestFoldMaskErrors(t *testing.T) {
	if _, err := ParseFoldMask(strings.NewReader("1,0\n0,1\n"), 3); !errors.Is(err, ErrFormat) {
		t.Fatalf("row count: %v", err)
	}
	if _, err := ParseFoldMask(strings.NewReader("1,0\n0,2\n"), 2); !errors.Is(err, ErrFormat) {
		t.Fatalf("entry 2: %v", err)
	}
	folds, err := ParseFoldMask(strings.NewReader("1,0\n0,1\n1,0\n"), 3)
	if err != nil || len(folds) != 2 || len(folds[0]) != 2 || folds[1][0] != 1 {
		t.Fatalf("%v %v", folds, err)
	}
}

func TestFormatErrorLine(t *testing.T) {
	_, err := ReadMatrix(strings.NewReader("1 2\n\n3 x\n"), 0)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Line != 3 || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("err = %v", err)
	}
	_, err = LoadDelgado(filepath.Join(t.TempDir(), "missing.csv"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
