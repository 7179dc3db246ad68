package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"gonum.org/v1/gonum/mat"
)

// TestSynthRowFile: `gpzoo synth --out FILE.gpzr` streams a row file holding the CSV's rows, bit for bit, with
// the CSV's column names; an existing file is not replaced.
func TestSynthRowFile(t *testing.T) {
	dir := t.TempDir()
	bin, csvPath := filepath.Join(dir, "s.gpzr"), filepath.Join(dir, "s.csv")
	for _, out := range []string{bin, csvPath} {
		var o, e bytes.Buffer
		if err := Main([]string{"synth", "--rows", "333", "--inputs", "3", "--seed", "4", "--out", out}, &o, &e); err != nil {
			t.Fatal(err)
		}
	}
	f, err := datasets.OpenRowFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	names := f.Names
	f.Close()
	if len(names) != 4 || names[0] != "x0" || names[3] != "y" || f.Inputs != 3 || f.Rows != 333 {
		t.Fatalf("row file header %+v", f.RowHeader)
	}
	x, y, err := datasets.ReadRows(bin, 0, 333)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := datasets.LoadTable(csvPath, datasets.TableOptions{Target: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(x, tab.Data.X) || !mat.Equal(y, tab.Data.Y) {
		t.Error("the row file's rows differ from the CSV's")
	}
	before, _ := os.ReadFile(bin)
	var o, e bytes.Buffer
	if err := Main([]string{"synth", "--rows", "5", "--inputs", "2", "--out", bin}, &o, &e); err == nil {
		t.Error("an existing row file was replaced")
	}
	if after, _ := os.ReadFile(bin); !bytes.Equal(before, after) {
		t.Error("the refused run changed the file")
	}
}
