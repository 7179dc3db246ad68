package datasets

import (
	"bytes"
	"errors"
	"gonum.org/v1/gonum/mat"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTableRegression(t *testing.T) {
	t.Parallel()
	in := "\uFEFFid, a ,y,b\nx1,1,10,2\n\nx2,3,20,4\n"
	_, err := ReadTable(strings.NewReader(in), TableOptions{Target: " y "})
	if err == nil {
		t.Fatal("text column id accepted when all columns are features")
	}
	tb, err := ReadTable(strings.NewReader(in), TableOptions{Target: "y", Features: []string{"b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	d := tb.Data
	if d.N() != 2 || d.D() != 2 || d.NumClasses != 0 || tb.Labels != nil || tb.Target != "y" {
		t.Fatalf("shape N=%d D=%d K=%d labels=%v", d.N(), d.D(), d.NumClasses, tb.Labels)
	}
	if got := strings.Join(d.FeatureNames, ","); got != "b,a" {
		t.Errorf("feature names %q, want b,a", got)
	}
	if d.X.At(0, 0) != 2 || d.X.At(0, 1) != 1 || d.X.At(1, 0) != 4 || d.Y.At(1, 0) != 20 {
		t.Errorf("values X=%v Y=%v", d.X.RawMatrix().Data, d.Y.RawMatrix().Data)
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
	// gzip input, all other columns as features.
	tb, err = ReadTable(bytes.NewReader(gz([]byte("a,y,b\n1,2,3\n"))), TableOptions{Target: "y"})
	if err != nil || strings.Join(tb.Data.FeatureNames, ",") != "a,b" || tb.Data.X.At(0, 1) != 3 {
		t.Fatalf("gzip: %v %+v", err, tb)
	}
}

func TestReadTableClassify(t *testing.T) {
	t.Parallel()
	in := "x,label\n0.5,7\n1.5,-1\n2.5,7\n3.5,3\n"
	tb, err := ReadTable(strings.NewReader(in), TableOptions{Target: "label", Classify: true})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := []float64{-1, 3, 7}
	if len(tb.Labels) != 3 || tb.Data.NumClasses != 3 {
		t.Fatalf("labels %v, K %d", tb.Labels, tb.Data.NumClasses)
	}
	for k, v := range wantLabels {
		if tb.Labels[k] != v {
			t.Fatalf("labels %v, want %v", tb.Labels, wantLabels)
		}
	}
	wantY := []float64{2, 0, 2, 1}
	for i, v := range wantY {
		if tb.Data.Y.At(i, 0) != v {
			t.Fatalf("Y %v, want %v", tb.Data.Y.RawMatrix().Data, wantY)
		}
	}
	back, err := tb.LabelValues([]int{0, 2, 1})
	if err != nil || back[0] != -1 || back[1] != 7 || back[2] != 3 {
		t.Fatalf("LabelValues: %v %v", back, err)
	}
	var ie *IndexError
	if _, err := tb.LabelValues([]int{3}); !errors.As(err, &ie) {
		t.Errorf("class 3 of 3: %v", err)
	}
	if err := tb.Data.Validate(); err != nil {
		t.Error(err)
	}
	var te *TableError
	_, err = ReadTable(strings.NewReader("x,c\n1,0\n2,1.5\n"), TableOptions{Target: "c", Classify: true})
	if !errors.As(err, &te) || !errors.Is(err, ErrFormat) || te.Row != 2 || te.Line != 3 || te.Column != "c" {
		t.Errorf("non-integer label: %v", err)
	}
	_, err = ReadTable(strings.NewReader("x,c\n1,4\n2,4\n"), TableOptions{Target: "c", Classify: true})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "1 distinct") {
		t.Errorf("single class: %v", err)
	}
	reg, err := ReadTable(strings.NewReader(in), TableOptions{Target: "label"})
	if err != nil || reg.Data.Y.At(1, 0) != -1 {
		t.Fatalf("regression: %v", err)
	}
	if _, err := reg.LabelValues([]int{0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("LabelValues on regression: %v", err)
	}
}

func TestReadTableCategorical(t *testing.T) {
	t.Parallel()
	in := "colour,size,city,price\n1,2,3,4\nred,5,Paris,6\nblue,7,8,9\n"
	_, err := ReadTable(strings.NewReader(in), TableOptions{Target: "price"})
	var ne *NonNumericError
	if !errors.As(err, &ne) || !errors.Is(err, ErrCategorical) {
		t.Fatalf("err = %v", err)
	}
	if len(ne.Columns) != 2 || ne.Columns[0].Name != "colour" || ne.Columns[1].Name != "city" ||
		ne.Columns[0].Row != 2 || ne.Columns[0].Line != 3 || ne.Columns[0].Value != "red" || ne.Columns[1].Value != "Paris" {
		t.Fatalf("columns %+v", ne.Columns)
	}
	msg := err.Error()
	for _, s := range []string{`"colour" (row 2: "red")`, `"city" (row 2: "Paris")`, "--features"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	// Dropping them works.
	tb, err := ReadTable(strings.NewReader(in), TableOptions{Target: "price", Features: []string{"size"}})
	if err != nil || tb.Data.D() != 1 || tb.Data.X.At(2, 0) != 7 {
		t.Fatalf("with features: %v", err)
	}
	// A categorical target is named too, even with other errors present.
	_, err = ReadTable(strings.NewReader("a,y\n1,cat\nNaN,dog\n"), TableOptions{Target: "y", Classify: true})
	if !errors.As(err, &ne) || len(ne.Columns) != 1 || ne.Columns[0].Name != "y" {
		t.Errorf("categorical target: %v", err)
	}
}

func TestReadTableErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		o        TableOptions
		sentinel error
		row      int // TableError row; 0: not a TableError
		line     int
		column   string
		msg      []string
	}{
		{name: "empty cell", in: "a,y\n1,2\n,3\n", o: TableOptions{Target: "y"}, sentinel: ErrFormat, row: 2, line: 3, column: "a"},
		{name: "NaN", in: "a,y\n1,2\n\n4,NaN\n", o: TableOptions{Target: "y"}, sentinel: ErrNonFinite, row: 2, line: 4, column: "y", msg: []string{"NaN", "line 4", "data row 2"}},
		{name: "Inf", in: "a,y\n-Inf,2\n", o: TableOptions{Target: "y"}, sentinel: ErrNonFinite, row: 1, line: 2, column: "a"},
		{name: "overflow", in: "a,y\n1e999,2\n", o: TableOptions{Target: "y"}, sentinel: ErrNonFinite, row: 1, line: 2, column: "a"},
		{name: "ragged", in: "a,b,y\n1,2,3\n1,2\n", o: TableOptions{Target: "y"}, sentinel: ErrRagged, row: 2, line: 3, msg: []string{"2 fields", "header has 3"}},
		{name: "quoted newline keeps lines", in: "a,y\n\"1\n\",2\n3,\n", o: TableOptions{Target: "y"}, sentinel: ErrFormat, row: 2, line: 4, column: "y"},
		{name: "no target", in: "a,b\n1,2\n", o: TableOptions{Target: "y"}, sentinel: ErrFormat, msg: []string{`"y" not in header`, `"a", "b"`}},
		{name: "missing features", in: "a,b,y\n1,2,3\n", o: TableOptions{Target: "y", Features: []string{"c", "a", "d"}}, sentinel: ErrFormat, msg: []string{`"c", "d"`}},
		{name: "empty target", in: "a,y\n1,2\n", o: TableOptions{}, sentinel: ErrInvalid},
		{name: "target as feature", in: "a,y\n1,2\n", o: TableOptions{Target: "y", Features: []string{"y"}}, sentinel: ErrInvalid},
		{name: "feature twice", in: "a,y\n1,2\n", o: TableOptions{Target: "y", Features: []string{"a", " a"}}, sentinel: ErrInvalid},
		{name: "empty features", in: "a,y\n1,2\n", o: TableOptions{Target: "y", Features: []string{}}, sentinel: ErrInvalid},
		{name: "only target", in: "y\n1\n", o: TableOptions{Target: "y"}, sentinel: ErrFormat},
		{name: "duplicate used", in: "a,a,y\n1,2,3\n", o: TableOptions{Target: "y"}, sentinel: ErrFormat, msg: []string{"twice"}},
		{name: "empty name", in: "a,,y\n1,2,3\n", o: TableOptions{Target: "y"}, sentinel: ErrFormat, msg: []string{"column 2 (1-based) has an empty name"}},
		{name: "no rows", in: "a,y\n\n", o: TableOptions{Target: "y"}, sentinel: ErrEmpty},
		{name: "no header", in: "", o: TableOptions{Target: "y"}, sentinel: ErrEmpty},
		{name: "bad quote", in: "a,y\n\"1,2\n", o: TableOptions{Target: "y"}, sentinel: ErrFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb, err := ReadTable(strings.NewReader(c.in), c.o)
			if err == nil || tb != nil {
				t.Fatalf("no error (table %+v)", tb)
			}
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("err %v does not wrap %v", err, c.sentinel)
			}
			var te *TableError
			if c.row > 0 {
				if !errors.As(err, &te) || te.Row != c.row || te.Line != c.line || te.Column != c.column {
					t.Fatalf("err %v: got %+v, want row %d line %d column %q", err, te, c.row, c.line, c.column)
				}
			}
			for _, m := range c.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q lacks %q", err, m)
				}
			}
			if !strings.HasPrefix(err.Error(), "datasets: ") {
				t.Errorf("message %q lacks the package prefix", err)
			}
		})
	}
}

func TestLoadTableAndInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "houses.csv")
	if err := os.WriteFile(path, []byte("rooms,area,price\n3,70,100\n4,90,150\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := LoadTable(path, TableOptions{Target: "price"})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Data.Name != "houses" || tb.Data.N() != 2 {
		t.Errorf("name %q N %d", tb.Data.Name, tb.Data.N())
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("rooms,price\n3,NaN\n"), 0o644)
	if _, err := LoadTable(bad, TableOptions{Target: "price"}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("file not named: %v", err)
	}
	if _, err := LoadTable(filepath.Join(dir, "none.csv"), TableOptions{Target: "price"}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	// Inputs: any column order, extra columns (even text) ignored.
	inPath := filepath.Join(dir, "new.csv")
	os.WriteFile(inPath, []byte("id,area,price,rooms\nh1,80,?,5\nh2,60,?,2\n"), 0o644)
	x, err := LoadInputs(inPath, tb.Data.FeatureNames)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != 2 || c != 2 || x.At(0, 0) != 5 || x.At(0, 1) != 80 || x.At(1, 0) != 2 {
		t.Fatalf("inputs %v", x.RawMatrix().Data)
	}
	_, err = ReadInputs(strings.NewReader("area,id\n1,2\n"), []string{"rooms", "area"})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `"rooms"`) {
		t.Errorf("missing feature: %v", err)
	}
	_, err = ReadInputs(strings.NewReader("rooms,area\n1,x\n"), []string{"rooms", "area"})
	var ne *NonNumericError
	if !errors.As(err, &ne) || ne.Columns[0].Name != "area" {
		t.Errorf("text feature: %v", err)
	}
	// Nil features: every column, in header order (a repeated header name is still an error).
	all, err := ReadInputs(strings.NewReader("b,a\n1,2\n3,4\n"), nil)
	if err != nil || !mat.Equal(all, mat.NewDense(2, 2, []float64{1, 2, 3, 4})) {
		t.Errorf("nil features: %v, %v", all, err)
	}
	if _, err := ReadInputs(strings.NewReader("a,a\n1,2\n"), nil); !errors.Is(err, ErrFormat) {
		t.Errorf("nil features, repeated header: %v", err)
	}
	for _, f := range [][]string{{}, {"a", "a"}, {""}} {
		if _, err := ReadInputs(strings.NewReader("a\n1\n"), f); !errors.Is(err, ErrInvalid) {
			t.Errorf("features %q: %v", f, err)
		}
	}
	if _, err := ReadInputs(nil, []string{"a"}); !errors.Is(err, ErrEmpty) {
		t.Errorf("nil reader: %v", err)
	}
}
