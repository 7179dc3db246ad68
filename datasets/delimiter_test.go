package datasets

import (
	"errors"
	"strings"
	"testing"
)

// ReadTable and ReadInputs read comma-, semicolon- and tab-separated tables alike, report the separator, and
// a header they cannot match names the separator it was split at.
func TestTableDelimiters(t *testing.T) {
	for _, c := range []struct {
		name, text string
		delim      rune
	}{
		{"comma", "a,b,y\n1,2,3\n4,5,6\n", ','},
		{"semicolon", "a;b;y\n1;2;3\n4;5;6\n", ';'},
		{"tab", "a\tb\ty\n1\t2\t3\n4\t5\t6\n", '\t'},
		{"semicolon, quoted comma in a name", "\"a,x\";b;y\n1;2;3\n4;5;6\n", ';'},
		{"tab, CRLF and BOM", "\uFEFFa\tb\ty\r\n1\t2\t3\r\n4\t5\t6\r\n", '\t'},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb, err := ReadTable(strings.NewReader(c.text), TableOptions{Target: "y"})
			if err != nil {
				t.Fatal(err)
			}
			if tb.Delimiter != c.delim {
				t.Errorf("delimiter %q, want %q", tb.Delimiter, c.delim)
			}
			if tb.Data.N() != 2 || tb.Data.D() != 2 || tb.Data.X.At(1, 1) != 5 || tb.Data.Y.At(1, 0) != 6 {
				t.Errorf("table X=%v Y=%v", tb.Data.X.RawMatrix().Data, tb.Data.Y.RawMatrix().Data)
			}
			x, err := ReadInputs(strings.NewReader(c.text), []string{"b"})
			if err != nil {
				t.Fatal(err)
			}
			if r, k := x.Dims(); r != 2 || k != 1 || x.At(0, 0) != 2 {
				t.Errorf("inputs %v", x.RawMatrix().Data)
			}
		})
	}
	// A pipe-separated file is one column: the message says how the header was split.
	_, err := ReadTable(strings.NewReader("a|b|y\n1|2|3\n"), TableOptions{Target: "y"})
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "split at comma") || !strings.Contains(err.Error(), `"a|b|y"`) {
		t.Errorf("pipe-separated: %v", err)
	}
	// Decimal commas in a semicolon-separated export are named as such.
	_, err = ReadTable(strings.NewReader("a;y\n1,5;2\n2,5;3\n"), TableOptions{Target: "y"})
	if !errors.Is(err, ErrCategorical) || !strings.Contains(err.Error(), "decimal comma") {
		t.Errorf("decimal commas: %v", err)
	}
}
