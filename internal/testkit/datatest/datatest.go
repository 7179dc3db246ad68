// Package datatest finds the benchmark data for tests and makes generated stand-ins for it.
//
// Dir is the one place tests look for the benchmark data folder (the layout of shared/data): $GPZOO_DATA, else
// ../shared/data beside the module root. A test whose subject is a benchmark file (a loader on the real files,
// accuracy on a real data set) calls Dir; without the data it skips with one line naming the command that fetches
// it, and with CI=true or GPZOO_REQUIRE_DATA=1 it fails instead, so that CI can never skip silently. Tests whose
// subject is anything else — an entry's plumbing, save and resume, plots, the command line — run on Fake: small,
// seeded, learnable data sets written in the same on-disk formats, so they always run on a fresh clone.
package datatest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
)

// EnvRequire, when set to 1 (or CI=true), makes Dir fail instead of skipping when data is missing.
const EnvRequire = "GPZOO_REQUIRE_DATA"

// required reports whether missing data must fail the test.
func required() bool { return os.Getenv(EnvRequire) == "1" || os.Getenv("CI") == "true" }

// Dir returns the benchmark data folder holding every named data set (datasets.DataSetNames: "kin8nm", "mnist",
// …): $GPZOO_DATA when set, else ../shared/data beside the module root (the folder holding go.mod, found from the
// working directory). When a data set's files are missing it skips the test with one line naming the command that
// fetches them — or fails with that line under CI=true or GPZOO_REQUIRE_DATA=1. The folder must hold
// MANIFEST.tsv (which fetch writes), so Dir(t) with no names asks for the folder itself.
func Dir(t testing.TB, names ...string) string {
	t.Helper()
	dir, where := datasets.DefaultDir(), "$"+datasets.EnvDataDir
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatalf("datatest: %v", err)
		}
		dir, where = filepath.Join(root, "..", "shared", "data"), "../shared/data"
	}
	var missing []string
	if _, err := os.Stat(filepath.Join(dir, datasets.ManifestFile)); err != nil {
		missing = append(missing, datasets.ManifestFile)
	}
	for _, n := range names {
		paths, ok := datasets.DataSetPaths(n)
		if !ok {
			t.Fatalf("datatest: %q is not a benchmark data set (see datasets.DataSetNames)", n)
		}
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(p, "/")))); err != nil {
				missing = append(missing, n)
				break
			}
		}
	}
	if len(missing) == 0 {
		return dir
	}
	list := strings.Join(names, " ")
	msg := fmt.Sprintf("needs benchmark data %s (not in %s): gpzoo data fetch %s --data DIR, then %s=DIR", list, where, list, datasets.EnvDataDir)
	if len(names) == 0 {
		msg = fmt.Sprintf("needs the benchmark data folder (%s not in %s): gpzoo data fetch NAME --data DIR writes it with any data set, then %s=DIR",
			datasets.ManifestFile, where, datasets.EnvDataDir)
	}
	if required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// moduleRoot returns the folder holding go.mod above the working directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// Rows is the number of rows of every Fake data set (a test split holds about a tenth of them) but the Rätsch
// sets, which have RaetschRows (their protocol trains on a fixed number of rows, 400 for banana).
const (
	Rows        = 240
	RaetschRows = 500
)

// Fake writes generated stand-ins for the named benchmark data sets into a new temporary folder, in the layout and
// formats of the real ones, and returns the folder (for zoo.Options.DataDir and --data). Each set has Rows seeded
// rows (RaetschRows for the Rätsch sets) of a smooth, learnable function: regression sets y = sin(2x₁) + x₂/2 + 0.05ε on 4 inputs; two-class sets
// the sign of that function; other classification sets (pendigits, landsat, letter, …, mnist) three classes by its
// value; MNIST 6×6 "images" with pixel bytes. UCI "dropout" folders get 20 splits (protein 5), Evans folders a
// 10-fold test mask, Fernández-Delgado pairs a train and a test file.
func Fake(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, n := range names {
		paths, ok := datasets.DataSetPaths(n)
		if !ok {
			t.Fatalf("datatest: %q is not a benchmark data set", n)
		}
		rng := rand.New(rand.NewPCG(uint64(i)+1, 0xfa4e))
		for _, p := range paths {
			if err := writeFake(dir, n, p, rng); err != nil {
				t.Fatalf("datatest: fake %s: %v", n, err)
			}
		}
	}
	return dir
}

// classes returns the number of classes of the fake version of a classification set (0 for regression).
func classes(name, path string) int {
	switch {
	case strings.HasPrefix(path, "classification-raetsch/"), name == "ringnorm", name == "twonorm", name == "magic",
		name == "breast-cancer-wisc-diag":
		return 2
	case strings.HasPrefix(path, "classification-delgado/"), name == "mnist":
		return 3
	}
	return 0
}

// row returns the inputs and the latent value of one generated point.
func row(rng *rand.Rand, d int) ([]float64, float64) {
	x := make([]float64, d)
	for k := range x {
		x[k] = 4*rng.Float64() - 2
	}
	return x, math.Sin(2*x[0]) + 0.5*x[1]
}

// label maps a latent value to one of k classes.
func label(f float64, k int) int {
	if k == 2 {
		if f > 0 {
			return 1
		}
		return 0
	}
	return min(k-1, max(0, int(math.Floor(f+1.5))))
}

func writeFake(dir, name, p string, rng *rand.Rand) error {
	full := filepath.Join(dir, filepath.FromSlash(p))
	if strings.HasSuffix(p, "SOURCE_LICENSE.txt") {
		return write(full, []byte("generated test data\n"))
	}
	switch {
	case strings.HasPrefix(p, "uci-regression-dropout/"):
		return fakeUCI(full, name, rng)
	case strings.HasPrefix(p, "uci-regression-evans/"):
		return fakeEvans(full, rng)
	case strings.HasPrefix(p, "classification-delgado/"), strings.HasPrefix(p, "classification-raetsch/"):
		k, rows := classes(name, p), Rows
		if strings.HasPrefix(p, "classification-raetsch/") {
			rows = RaetschRows
		}
		var b bytes.Buffer
		for i := 0; i < rows; i++ {
			x, f := row(rng, 4)
			for _, v := range x {
				fmt.Fprintf(&b, "%.6f,", v)
			}
			l := label(f+0.1*rng.NormFloat64(), k)
			if strings.HasPrefix(p, "classification-raetsch/") {
				l = 2*l - 1 // ±1
			}
			fmt.Fprintf(&b, "%d\n", l)
		}
		return write(full, b.Bytes())
	case p == "mnist":
		return fakeMNIST(full, rng)
	}
	return fmt.Errorf("no generator for %s", p)
}

// fakeUCI writes a UCI "dropout" folder: data.txt (features, then the target), the column index files and the
// train/test index files of every split.
func fakeUCI(folder, name string, rng *rand.Rand) error {
	var b bytes.Buffer
	for i := 0; i < Rows; i++ {
		x, f := row(rng, 4)
		for _, v := range x {
			fmt.Fprintf(&b, "%.6f ", v)
		}
		fmt.Fprintf(&b, "%.6f\n", f+0.05*rng.NormFloat64())
	}
	splits := 20
	if name == "protein" {
		splits = 5
	}
	files := map[string]string{"data.txt": b.String(), "index_features.txt": "0\n1\n2\n3\n", "index_target.txt": "4\n",
		"n_splits.txt": fmt.Sprintln(splits)}
	for k := 0; k < splits; k++ {
		train, test, err := datasets.RandomSplit(Rows, 0.1, rng)
		if err != nil {
			return err
		}
		files[fmt.Sprintf("index_train_%d.txt", k)] = ints(train)
		files[fmt.Sprintf("index_test_%d.txt", k)] = ints(test)
	}
	for f, body := range files {
		if err := write(filepath.Join(folder, f), []byte(body)); err != nil {
			return err
		}
	}
	return nil
}

// fakeEvans writes an Evans folder: data.csv.gz (features, then the target) and test_mask.csv.gz (10 folds).
func fakeEvans(folder string, rng *rand.Rand) error {
	var data, mask bytes.Buffer
	for i := 0; i < Rows; i++ {
		x, f := row(rng, 4)
		for _, v := range x {
			fmt.Fprintf(&data, "%.6f,", v)
		}
		fmt.Fprintf(&data, "%.6f\n", f+0.05*rng.NormFloat64())
		cells := strings.Split(strings.Repeat("0", 10), "")
		cells[i%10] = "1" // row i is in the test set of fold i mod 10
		mask.WriteString(strings.Join(cells, ",") + "\n")
	}
	if err := write(filepath.Join(folder, "data.csv.gz"), gz(data.Bytes())); err != nil {
		return err
	}
	return write(filepath.Join(folder, "test_mask.csv.gz"), gz(mask.Bytes()))
}

// fakeMNIST writes the four IDX files of MNIST with 6×6 images whose pixels encode the inputs of row.
func fakeMNIST(folder string, rng *rand.Rand) error {
	const side = 6
	for _, part := range []struct {
		prefix string
		n      int
	}{{"train", Rows}, {"t10k", Rows / 4}} {
		img := idxHeader(3, part.n, side, side)
		lab := idxHeader(1, part.n)
		for i := 0; i < part.n; i++ {
			x, f := row(rng, side*side)
			for _, v := range x {
				img = append(img, byte(math.Round((v+2)/4*255)))
			}
			lab = append(lab, byte(label(f, 3)))
		}
		if err := write(filepath.Join(folder, part.prefix+"-images-idx3-ubyte.gz"), gz(img)); err != nil {
			return err
		}
		if err := write(filepath.Join(folder, part.prefix+"-labels-idx1-ubyte.gz"), gz(lab)); err != nil {
			return err
		}
	}
	return nil
}

// idxHeader returns the header of an IDX file of unsigned bytes with the given dimensions.
func idxHeader(ndims int, dims ...int) []byte {
	b := []byte{0, 0, 8, byte(ndims)}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return b
}

func ints(v []int) string {
	var b strings.Builder
	for _, i := range v {
		fmt.Fprintln(&b, i)
	}
	return b.String()
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
