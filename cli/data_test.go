package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// dataFixture is a data directory with its own MANIFEST.tsv and a local
// server standing in for raw.githubusercontent.com.
type dataFixture struct {
	dir  string
	srv  *httptest.Server
	hits atomic.Int64
}

// newDataFixture serves servo (two files plus licence) correctly, the file
// extras/custom/bad.csv corrupted, and lists a converted file with no source.
func newDataFixture(t *testing.T) *dataFixture {
	t.Helper()
	f := &dataFixture{dir: t.TempDir()}
	files := []struct {
		staged, src, note string
		body, served      []byte
	}{
		{"uci-regression-evans/SOURCE_LICENSE.txt", "LICENSE", "license text of source repo", []byte("MIT\n"), nil},
		{"uci-regression-evans/servo/data.csv.gz", "uci/servo/data.csv.gz", "verbatim", []byte("1,2,3\n"), nil},
		{"uci-regression-evans/servo/test_mask.csv.gz", "uci/servo/test_mask.csv.gz", "verbatim", []byte("0,1\n"), nil},
		{"extras/custom/bad.csv", "bad.csv", "verbatim", []byte("good\n"), []byte("evil\n")},
		{"classification-raetsch/banana.csv", "banana.mat", "converted .mat (data,target) -> CSV", []byte("1,1\n"), nil},
	}
	var man strings.Builder
	man.WriteString("staged_path\tbytes\tsha256\tsource_repo\tsource_commit\tsource_path\tnote\n")
	mux := http.NewServeMux()
	for _, fl := range files {
		sum := sha256.Sum256(fl.body)
		fmt.Fprintf(&man, "%s\t%d\t%s\towner/repo\tc0ffee\t%s\t%s\n", fl.staged, len(fl.body), hex.EncodeToString(sum[:]), fl.src, fl.note)
		served := fl.served
		if served == nil {
			served = fl.body
		}
		mux.HandleFunc("/owner/repo/c0ffee/"+fl.src, func(w http.ResponseWriter, r *http.Request) {
			f.hits.Add(1)
			w.Write(served)
		})
	}
	if err := os.WriteFile(filepath.Join(f.dir, "MANIFEST.tsv"), []byte(man.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// run calls dataCmd with --data set to the fixture's directory.
func (f *dataFixture) run(args ...string) (string, error) {
	var out, errb bytes.Buffer
	err := dataCmd(append(args, "--data", f.dir), &out, &errb)
	return out.String() + errb.String(), err
}

// files lists the files below the fixture's directory.
func (f *dataFixture) files(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(f.dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	return out
}

// dataLine returns the line of out starting with prefix.
func dataLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestDataFetchListVerify(t *testing.T) {
	f := newDataFixture(t)
	out, err := f.run("list")
	if err != nil {
		t.Fatal(err)
	}
	if l := dataLine(out, "servo "); !strings.Contains(l, "missing") || !strings.Contains(l, " 3 ") || !strings.Contains(l, "yes") {
		t.Errorf("servo line %q in\n%s", l, out)
	}
	if l := dataLine(out, "banana "); !strings.Contains(l, "no (copy only)") {
		t.Errorf("banana line %q", l)
	}
	if dataLine(out, "kin8nm ") != "" {
		t.Errorf("kin8nm listed though not in this manifest:\n%s", out)
	}
	if _, err := f.run("verify", "servo"); err == nil {
		t.Error("verify of missing files succeeded")
	}

	// Flags may precede the names.
	var o, e bytes.Buffer
	if err := dataCmd([]string{"fetch", "--mirror", f.srv.URL, "servo", "--data", f.dir}, &o, &e); err != nil {
		t.Fatalf("fetch: %v\n%s%s", err, o.String(), e.String())
	}
	if !strings.Contains(o.String(), "fetched uci-regression-evans/servo/data.csv.gz") || f.hits.Load() != 3 {
		t.Errorf("fetch output (%d requests):\n%s", f.hits.Load(), o.String())
	}
	out, err = f.run("verify", "servo")
	if err != nil || !strings.Contains(out, "3 ok, 0 failed") {
		t.Errorf("verify after fetch: %v\n%s", err, out)
	}
	out, _ = f.run("list")
	if l := dataLine(out, "servo "); !strings.Contains(l, "present") {
		t.Errorf("servo line after fetch %q", l)
	}
	// Fetching again downloads nothing.
	out, err = f.run("fetch", "servo", "--mirror", f.srv.URL)
	if err != nil || f.hits.Load() != 3 || !strings.Contains(out, "0 fetched, 3 already present") {
		t.Errorf("refetch (%d requests): %v\n%s", f.hits.Load(), err, out)
	}
	// A damaged file fails verify with both digests, and fetch repairs it.
	p := filepath.Join(f.dir, "uci-regression-evans", "servo", "data.csv.gz")
	os.WriteFile(p, []byte("1,2,4\n"), 0o644)
	out, err = f.run("verify")
	if err == nil || !strings.Contains(out, "checksum mismatch: uci-regression-evans/servo/data.csv.gz") || !strings.Contains(out, "missing: extras/custom/bad.csv") {
		t.Errorf("verify of damaged file: %v\n%s", err, out)
	}
	if out, err := f.run("fetch", "uci-regression-evans/servo", "--mirror", f.srv.URL); err != nil || !strings.Contains(out, "1 fetched, 1 already present") {
		t.Errorf("repair by path: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(p); string(b) != "1,2,3\n" {
		t.Errorf("repaired file holds %q", b)
	}
}

func TestDataFetchCorruptLeavesNothing(t *testing.T) {
	f := newDataFixture(t)
	out, err := f.run("fetch", "extras/custom", "--mirror", f.srv.URL)
	if err == nil {
		t.Fatalf("corrupt download accepted:\n%s", out)
	}
	good, evil := sha256.Sum256([]byte("good\n")), sha256.Sum256([]byte("evil\n"))
	for _, s := range []string{"extras/custom/bad.csv", hex.EncodeToString(good[:]), hex.EncodeToString(evil[:]), "checksum mismatch"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if got := f.files(t); len(got) != 1 || got[0] != "MANIFEST.tsv" {
		t.Errorf("files left: %v", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "extras")); !os.IsNotExist(err) {
		t.Errorf("folder extras left behind: %v", err)
	}
}

func TestDataFetchErrors(t *testing.T) {
	f := newDataFixture(t)
	_, err := f.run("fetch", "banana", "--mirror", f.srv.URL)
	if err == nil || !strings.Contains(err.Error(), "not copied verbatim") || !strings.Contains(err.Error(), "classification-raetsch/banana.csv") {
		t.Errorf("no source: %v", err)
	}
	if f.hits.Load() != 0 {
		t.Errorf("%d requests for a file without source", f.hits.Load())
	}
	for _, args := range [][]string{
		{"fetch"},                            // no names
		{"fetch", "nosuchset"},               // unknown name
		{"fetch", "servo", "--mirror", "x:"}, // bad mirror
		{"list", "servo"},                    // list takes no names
		{"frobnicate"},                       // unknown subcommand
		{"verify", "--bogus"},                // unknown flag
		{"list", "--mirror", f.srv.URL},      // mirror is fetch's
	} {
		if out, err := f.run(args...); err == nil {
			t.Errorf("%q accepted:\n%s", args, out)
		}
	}
	var o, e bytes.Buffer
	t.Setenv("GPZOO_DATA", "")
	if err := dataCmd([]string{"list"}, &o, &e); err == nil || !strings.Contains(err.Error(), "GPZOO_DATA") {
		t.Errorf("no data dir: %v", err)
	}
	if err := dataCmd(nil, &o, &e); err != nil || !strings.Contains(o.String(), "gpzoo data fetch") {
		t.Errorf("usage: %v\n%s", err, o.String())
	}
}

// A fresh directory uses the built-in manifest and gets a copy of it on fetch.
func TestDataFreshDirectory(t *testing.T) {
	dir := t.TempDir()
	var o, e bytes.Buffer
	if err := dataCmd([]string{"list", "--data", dir}, &o, &e); err != nil {
		t.Fatal(err)
	}
	if l := dataLine(o.String(), "kin8nm "); !strings.Contains(l, "missing") {
		t.Errorf("kin8nm line %q", l)
	}
	// mnist's training images were rebuilt: nothing to download, and nothing is requested.
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	o.Reset()
	err := dataCmd([]string{"fetch", "mnist/train-images-idx3-ubyte.gz", "--data", dir, "--mirror", srv.URL}, &o, &e)
	if err == nil || !strings.Contains(err.Error(), "not copied verbatim") {
		t.Errorf("rebuilt file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.tsv")); err != nil {
		t.Errorf("manifest not written: %v", err)
	}
}
