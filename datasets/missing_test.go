package datasets

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const twoTargets = `x1,x2,a,b
1,2,3,
2,1,4,7
3,0,,8
4,5,6,9
`

// TestReadTableTargets: several target columns, an empty target cell a missing target (Observed 0, Y 0), the row
// kept; the standardiser's target statistics are the observed cells', and Subset and Apply carry the mask.
func TestReadTableTargets(t *testing.T) {
	tab, err := ReadTable(strings.NewReader(twoTargets), TableOptions{Targets: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	d := tab.Data
	if d.N() != 4 || d.D() != 2 || d.P() != 2 || tab.Target != "a" || strings.Join(tab.Targets, ",") != "a,b" {
		t.Fatalf("N %d, D %d, P %d, targets %q/%q", d.N(), d.D(), d.P(), tab.Target, tab.Targets)
	}
	if d.Observed == nil || d.MissingTargets() != 2 || d.IsObserved(0, 1) || d.IsObserved(2, 0) || !d.IsObserved(1, 1) {
		t.Fatalf("Observed %v: want cells (0,b) and (2,a) missing", d.Observed)
	}
	if d.Y.At(0, 1) != 0 || d.Y.At(2, 0) != 0 || d.Y.At(3, 1) != 9 {
		t.Errorf("Y %v", d.Y)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	std, err := FitStandardizer(d, true)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(std.YMean[0]-13.0/3) > 1e-14 || math.Abs(std.YMean[1]-8) > 1e-14 {
		t.Errorf("target means %v: want those of the observed cells, 13/3 and 8", std.YMean)
	}
	sd, err := std.Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	if sd.Observed == nil || sd.Y.At(0, 1) != 0 || sd.Y.At(2, 0) != 0 {
		t.Errorf("standardised: missing cells %v, %v (want 0) and the mask kept (%v)", sd.Y.At(0, 1), sd.Y.At(2, 0), sd.Observed != nil)
	}
	sub, err := d.Subset([]int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if sub.IsObserved(0, 0) || !sub.IsObserved(0, 1) || sub.IsObserved(1, 1) {
		t.Errorf("Subset's mask %v", sub.Observed)
	}
	packed := PackObserved(d.Y, d.Observed)
	if r, c := packed.Dims(); r != 4 || c != 4 || packed.At(0, 3) != 0 || packed.At(0, 2) != 1 || packed.At(3, 1) != 9 {
		t.Errorf("PackObserved %v", packed)
	}
	// Without missing cells, no mask.
	full, err := ReadTable(strings.NewReader("x,a,b\n1,2,3\n2,3,4\n"), TableOptions{Targets: []string{"b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if full.Data.Observed != nil || full.Data.Y.At(0, 0) != 3 {
		t.Errorf("no empty cell: Observed %v, Y %v", full.Data.Observed, full.Data.Y)
	}
}

// TestReadTableTargetsErrors: an empty input cell, a NaN or infinite target and an empty cell with one Target
// keep their errors naming row and column; a target column without any value, Target with Targets, and Targets
// with Classify are refused.
func TestReadTableTargetsErrors(t *testing.T) {
	for _, c := range []struct {
		name, csv string
		o         TableOptions
		sentinel  error
		row       int
		column    string
	}{
		{"empty input cell", "x1,x2,a,b\n1,2,3,4\n2,,4,5\n", TableOptions{Targets: []string{"a", "b"}}, ErrFormat, 2, "x2"},
		{"NaN target", "x1,a,b\n1,3,4\n2,NaN,5\n", TableOptions{Targets: []string{"a", "b"}}, ErrNonFinite, 2, "a"},
		{"Inf target", "x1,a,b\n1,3,4\n2,4,-Inf\n", TableOptions{Targets: []string{"a", "b"}}, ErrNonFinite, 2, "b"},
		{"one target, empty cell", "x1,a\n1,3\n2,\n", TableOptions{Target: "a"}, ErrFormat, 2, "a"},
	} {
		_, err := ReadTable(strings.NewReader(c.csv), c.o)
		var te *TableError
		if !errors.As(err, &te) || !errors.Is(err, c.sentinel) || te.Row != c.row || te.Column != c.column {
			t.Errorf("%s: %v, want a *TableError (%v) at row %d, column %q", c.name, err, c.sentinel, c.row, c.column)
		}
	}
	var fe *FormatError
	if _, err := ReadTable(strings.NewReader("x,a,b\n1,,2\n2,,3\n"), TableOptions{Targets: []string{"a", "b"}}); !errors.As(err, &fe) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("an all-empty target column: %v, want a *FormatError naming it", err)
	}
	for _, o := range []TableOptions{{Target: "a", Targets: []string{"b"}}, {Targets: []string{"a", "b"}, Classify: true}, {Targets: []string{"a", "a"}}, {Targets: []string{}}} {
		if _, err := ReadTable(strings.NewReader("x,a,b\n1,2,3\n"), o); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", o, err)
		}
	}
}
