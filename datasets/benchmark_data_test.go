package datasets_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
)

// Integration tests of the loaders on the benchmark files themselves (their subject is the data): they need the
// benchmark data folder and skip without it (datatest.Dir).

func TestLoadUCI(t *testing.T) {
	root := filepath.Join(datatest.Dir(t, "boston", "kin8nm", "naval", "power", "protein", "yacht"), "uci-regression-dropout")
	cases := []struct {
		name         string
		n, d, splits int
	}{
		{"bostonHousing", 506, 13, 20},
		{"kin8nm", 8192, 8, 20},
		{"naval-propulsion-plant", 11934, 16, 20},
		{"power-plant", 9568, 4, 20},
		{"protein-tertiary-structure", 45730, 9, 5},
		{"yacht", 308, 6, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(root, c.name)
			d, err := datasets.LoadUCI(dir)
			if err != nil {
				t.Fatal(err)
			}
			if d.N() != c.n || d.D() != c.d || d.P() != 1 || d.NumClasses != 0 || d.Name != c.name {
				t.Fatalf("got %q %d×%d P=%d K=%d, want %d×%d", d.Name, d.N(), d.D(), d.P(), d.NumClasses, c.n, c.d)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			ns, err := datasets.NumUCISplits(dir)
			if err != nil || ns != c.splits {
				t.Fatalf("datasets.NumUCISplits = %d, %v; want %d", ns, err, c.splits)
			}
			for k := 0; k < ns; k++ {
				train, test, err := datasets.UCISplit(dir, k)
				if err != nil {
					t.Fatalf("split %d: %v", k, err)
				}
				partition(t, d.N(), train, test)
				if f := float64(len(test)) / float64(d.N()); f < 0.09 || f > 0.11 {
					t.Fatalf("split %d: test fraction %v", k, f)
				}
			}
		})
	}
	// Boston: first row, last column is the target 24.0.
	d, err := datasets.LoadUCI(filepath.Join(root, "bostonHousing"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Y.At(0, 0) != 24 || d.X.At(0, 0) != 0.00632 {
		t.Fatalf("boston row 0: x0=%v y=%v", d.X.At(0, 0), d.Y.At(0, 0))
	}
}

func TestLoadEvans(t *testing.T) {
	root := filepath.Join(datatest.Dir(t, "airfoil", "autompg", "bike", "keggdirected", "kin40k", "pendulum", "pol", "pumadyn32nm", "servo", "tamielectric"), "uci-regression-evans")
	cases := []struct {
		name string
		n, d int
	}{
		{"airfoil", 1503, 5}, {"autompg", 392, 7}, {"bike", 17379, 17}, {"keggdirected", 48827, 20},
		{"kin40k", 40000, 8}, {"pendulum", 630, 9}, {"pol", 15000, 26}, {"pumadyn32nm", 8192, 32},
		{"servo", 167, 4}, {"tamielectric", 45781, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(root, c.name)
			d, err := datasets.LoadEvans(dir)
			if err != nil {
				t.Fatal(err)
			}
			if d.N() != c.n || d.D() != c.d || d.P() != 1 || d.Name != c.name {
				t.Fatalf("got %q %d×%d P=%d, want %d×%d", d.Name, d.N(), d.D(), d.P(), c.n, c.d)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			folds, err := datasets.LoadFoldMask(filepath.Join(dir, "test_mask.csv.gz"), d.N())
			if err != nil {
				t.Fatal(err)
			}
			if len(folds) != 10 {
				t.Fatalf("%d folds", len(folds))
			}
			count := make([]int, d.N())
			for _, f := range folds {
				for _, i := range f {
					count[i]++
				}
			}
			for i, c := range count {
				if c != 1 {
					t.Fatalf("row %d in %d test folds", i, c)
				}
			}
			if c.n < 20000 { // datasets.EvansSplit re-reads the files; the big sets are covered by the mask check.
				for f := 0; f < 10; f++ {
					train, test, err := datasets.EvansSplit(dir, f)
					if err != nil {
						t.Fatal(err)
					}
					partition(t, d.N(), train, test)
				}
			}
		})
	}
}

func TestLoadClassification(t *testing.T) {
	root := datatest.Dir(t, "breast-cancer-wisc-diag", "iris", "letter", "magic", "pendigits", "ringnorm", "landsat", "twonorm", "waveform", "banana", "german", "image", "splice", "thyroid", "titanic")
	delgado := []struct {
		file    string
		n, d, k int
	}{
		{"breast-cancer-wisc-diag", 569, 30, 2}, {"iris", 150, 4, 3}, {"letter", 20000, 16, 26},
		{"magic", 19020, 10, 2}, {"pendigits_test", 3498, 16, 10}, {"pendigits_train", 7494, 16, 10},
		{"ringnorm", 7400, 20, 2}, {"statlog-landsat_test", 2000, 36, 6}, {"statlog-landsat_train", 4435, 36, 6},
		{"twonorm", 7400, 20, 2}, {"waveform", 5000, 21, 3},
	}
	for _, c := range delgado {
		t.Run("delgado/"+c.file, func(t *testing.T) {
			d, err := datasets.LoadDelgado(filepath.Join(root, "classification-delgado", c.file+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			if d.N() != c.n || d.D() != c.d || d.NumClasses != c.k || d.Name != c.file {
				t.Fatalf("got %q %d×%d K=%d, want %d×%d K=%d", d.Name, d.N(), d.D(), d.NumClasses, c.n, c.d, c.k)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
	raetsch := []struct {
		file string
		n, d int
		pos  int
	}{
		{"banana", 5300, 2, 2376}, {"german", 1000, 20, 300}, {"image", 2310, 18, 1320},
		{"splice", 3175, 60, 1527}, {"thyroid", 215, 5, 65}, {"titanic", 2201, 3, 711},
	}
	for _, c := range raetsch {
		t.Run("raetsch/"+c.file, func(t *testing.T) {
			d, err := datasets.LoadRaetsch(filepath.Join(root, "classification-raetsch", c.file+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			if d.N() != c.n || d.D() != c.d || d.NumClasses != 2 {
				t.Fatalf("got %d×%d K=%d, want %d×%d", d.N(), d.D(), d.NumClasses, c.n, c.d)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			pos := 0
			for i := 0; i < d.N(); i++ {
				if d.Y.At(i, 0) == 1 {
					pos++
				}
			}
			if pos != c.pos {
				t.Fatalf("%d positives, want %d", pos, c.pos)
			}
		})
	}
}

func TestLoadMNISTTest(t *testing.T) {
	dir := filepath.Join(datatest.Dir(t, "mnist"), "mnist")
	d, err := datasets.LoadMNIST(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if d.N() != 10000 || d.D() != 784 || d.NumClasses != 10 {
		t.Fatalf("got %d×%d K=%d", d.N(), d.D(), d.NumClasses)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	// The first test digit is a 7; pixel values lie in [0, 1] with some 1s.
	if d.Y.At(0, 0) != 7 {
		t.Fatalf("first label %v", d.Y.At(0, 0))
	}
	lo, hi := 1.0, 0.0
	for _, v := range d.X.RawMatrix().Data {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo != 0 || hi != 1 {
		t.Fatalf("pixel range [%v, %v]", lo, hi)
	}
	// Training labels (small file): 60000 labels 0..9.
	f, err := os.Open(filepath.Join(dir, "train-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	labels, err := datasets.ParseIDXLabels(f)
	if err != nil || len(labels) != 60000 {
		t.Fatalf("train labels: %d, %v", len(labels), err)
	}
}

// partition checks that train and test split 0..n−1, each strictly increasing and non-empty.
func partition(t *testing.T, n int, train, test []int) {
	t.Helper()
	for k := 1; k < len(test); k++ {
		if test[k-1] >= test[k] {
			t.Fatalf("test rows not strictly increasing at %d", k)
		}
	}
	all, err := datasets.Complement(n, test)
	if err != nil || len(train) == 0 || len(test) == 0 || len(all) != len(train) {
		t.Fatalf("train (%d rows) and test (%d rows) do not split %d rows: %v", len(train), len(test), n, err)
	}
	for k := range train {
		if train[k] != all[k] {
			t.Fatalf("train row %d is %d, the complement of test has %d", k, train[k], all[k])
		}
	}
}

// The embedded manifest is the data directory's, byte for byte.
func TestEmbeddedManifestIsTheDataDirs(t *testing.T) {
	dir := datatest.Dir(t)
	shared, err := os.ReadFile(filepath.Join(dir, datasets.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	entries, from, err := datasets.DirManifest(dir)
	if err != nil || from != filepath.Join(dir, datasets.ManifestFile) {
		t.Fatalf("datasets.DirManifest read %q: %v", from, err)
	}
	embedded, err := datasets.EmbeddedManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(embedded) || len(shared) == 0 {
		t.Fatalf("the data directory's manifest has %d entries, the embedded one %d", len(entries), len(embedded))
	}
	for i := range entries {
		if entries[i] != embedded[i] {
			t.Fatalf("entry %d differs: %+v, embedded %+v: copy %s into datasets/embed again", i, entries[i], embedded[i], datasets.ManifestFile)
		}
	}
}
