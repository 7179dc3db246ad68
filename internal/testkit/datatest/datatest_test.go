package datatest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
)

// Every format Fake writes loads through the real loaders with the promised sizes.
func TestFakeLoads(t *testing.T) {
	dir := Fake(t, "kin8nm", "kin40k", "ringnorm", "pendigits", "banana", "mnist", "protein")
	d, err := datasets.LoadUCI(filepath.Join(dir, "uci-regression-dropout", "kin8nm"))
	if err != nil || d.N() != Rows || d.D() != 4 {
		t.Fatalf("uci: %v %v", d, err)
	}
	if ns, err := datasets.NumUCISplits(filepath.Join(dir, "uci-regression-dropout", "protein-tertiary-structure")); err != nil || ns != 5 {
		t.Fatalf("protein splits %d, %v", ns, err)
	}
	if _, test, err := datasets.UCISplit(filepath.Join(dir, "uci-regression-dropout", "kin8nm"), 19); err != nil || len(test) != Rows/10 {
		t.Fatalf("uci split: %d, %v", len(test), err)
	}
	if _, _, err := datasets.EvansSplit(filepath.Join(dir, "uci-regression-evans", "kin40k"), 9); err != nil {
		t.Fatalf("evans: %v", err)
	}
	r, err := datasets.LoadDelgado(filepath.Join(dir, "classification-delgado", "ringnorm.csv"))
	if err != nil || r.NumClasses != 2 {
		t.Fatalf("delgado: %v %v", r, err)
	}
	p, err := datasets.LoadDelgado(filepath.Join(dir, "classification-delgado", "pendigits_test.csv"))
	if err != nil || p.NumClasses != 3 {
		t.Fatalf("delgado pair: %v %v", p, err)
	}
	if b, err := datasets.LoadRaetsch(filepath.Join(dir, "classification-raetsch", "banana.csv")); err != nil || b.N() != RaetschRows {
		t.Fatalf("raetsch: %v %v", b, err)
	}
	m, err := datasets.LoadMNIST(filepath.Join(dir, "mnist", "train-images-idx3-ubyte.gz"), filepath.Join(dir, "mnist", "train-labels-idx1-ubyte.gz"))
	if err != nil || m.D() != 36 || m.N() != Rows {
		t.Fatalf("mnist: %v %v", m, err)
	}
}

// Dir skips (or, when required, fails) with one line naming the fetch command, and finds data that is present.
func TestDir(t *testing.T) {
	fake := Fake(t, "yacht")
	if err := os.WriteFile(filepath.Join(fake, datasets.ManifestFile), []byte("staged_path\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(datasets.EnvDataDir, fake)
	t.Setenv(EnvRequire, "")
	t.Setenv("CI", "")
	if got := Dir(t, "yacht"); got != fake {
		t.Errorf("Dir = %q, want %q", got, fake)
	}
	var ft fakeT
	func() {
		defer func() { recover() }()
		Dir(&ft, "kin8nm")
	}()
	if !ft.skipped || !strings.Contains(ft.msg, "gpzoo data fetch kin8nm --data DIR") || strings.Contains(ft.msg, "\n") {
		t.Errorf("missing data: skipped %v, message %q", ft.skipped, ft.msg)
	}
	t.Setenv(EnvRequire, "1")
	ft = fakeT{}
	func() {
		defer func() { recover() }()
		Dir(&ft, "kin8nm")
	}()
	if !ft.failed || ft.skipped {
		t.Errorf("required data: failed %v, skipped %v", ft.failed, ft.skipped)
	}
	if _, err := os.Stat(filepath.Join(fake, "uci-regression-dropout", "yacht", "data.txt")); err != nil {
		t.Fatal(err)
	}
}

// fakeT records Skip and Fatal (which end the goroutine's test function by panicking here).
type fakeT struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Skip(args ...any) {
	f.skipped, f.msg = true, strings.TrimSpace(fmtArgs(args))
	panic("skip")
}
func (f *fakeT) Fatal(args ...any) {
	f.failed, f.msg = true, strings.TrimSpace(fmtArgs(args))
	panic("fatal")
}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }

func fmtArgs(args []any) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a.(string))
	}
	return b.String()
}
