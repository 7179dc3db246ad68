package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// sourceFile is a file served by the test source.
type sourceFile struct {
	staged, src string
	body        []byte
	served      []byte // what the server sends; nil: body
}

// testSource serves files under /o/r/c0ffee/{src} and returns their
// manifest entries and a request counter.
func testSource(t *testing.T, files []sourceFile) (*httptest.Server, []ManifestEntry, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	mux := http.NewServeMux()
	var es []ManifestEntry
	for _, f := range files {
		sum := sha256.Sum256(f.body)
		es = append(es, ManifestEntry{Path: f.staged, Bytes: int64(len(f.body)), SHA256: hex.EncodeToString(sum[:]),
			SourceRepo: "o/r", SourceCommit: "c0ffee", SourcePath: f.src, Note: "verbatim"})
		served := f.served
		if served == nil {
			served = f.body
		}
		mux.HandleFunc("/o/r/c0ffee/"+f.src, func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Write(served)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, es, &hits
}

// listFiles returns every file and folder below dir.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	return out
}

func TestFetchAndVerify(t *testing.T) {
	t.Parallel()
	srv, es, hits := testSource(t, []sourceFile{
		{staged: "set/a.csv", src: "d/a.csv", body: []byte("1,2\n3,4\n")},
		{staged: "set/sub/b.txt", src: "d/b.txt", body: []byte("hello")},
	})
	dir := filepath.Join(t.TempDir(), "data")
	res, err := Fetch(context.Background(), srv.Client(), srv.URL, es, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Skipped || res[1].URL != srv.URL+"/o/r/c0ffee/d/b.txt" || hits.Load() != 2 {
		t.Fatalf("results %+v, %d requests", res, hits.Load())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "set", "sub", "b.txt")); string(b) != "hello" {
		t.Errorf("b.txt = %q", b)
	}
	st, _ := os.Stat(filepath.Join(dir, "set", "a.csv"))
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	for _, r := range VerifyEntries(dir, es) {
		if r.Status != StatusOK || r.SHA256 != r.Entry.SHA256 {
			t.Errorf("%s: %v", r.Entry.Path, r.Status)
		}
	}
	// A second fetch downloads nothing.
	res, err = Fetch(context.Background(), srv.Client(), srv.URL, es, dir)
	if err != nil || !res[0].Skipped || !res[1].Skipped || hits.Load() != 2 {
		t.Fatalf("refetch: %+v %v, %d requests", res, err, hits.Load())
	}
	// Verify reports each kind of damage.
	os.WriteFile(filepath.Join(dir, "set", "a.csv"), []byte("1,2\n3,5\n"), 0o644) // same size
	os.Remove(filepath.Join(dir, "set", "sub", "b.txt"))
	extra := es[0]
	extra.Path, extra.Bytes = "set/a.csv", 3
	rs := VerifyEntries(dir, append(es, extra))
	if rs[0].Status != StatusChecksumMismatch || rs[1].Status != StatusMissing || rs[2].Status != StatusSizeMismatch || rs[2].Size != 8 {
		t.Errorf("statuses %v %v %v", rs[0].Status, rs[1].Status, rs[2].Status)
	}
	if s := StatusChecksumMismatch.String(); s != "checksum mismatch" {
		t.Errorf("String = %q", s)
	}
	// Fetch repairs both.
	if _, err := Fetch(context.Background(), srv.Client(), srv.URL, es, dir); err != nil {
		t.Fatal(err)
	}
	for _, r := range VerifyEntries(dir, es) {
		if r.Status != StatusOK {
			t.Errorf("after repair %s: %v", r.Entry.Path, r.Status)
		}
	}
	// Verify reads the directory's own manifest.
	os.WriteFile(filepath.Join(dir, ManifestFile), []byte(hdr+"set/a.csv\t8\t"+es[0].SHA256+"\to/r\tc\tp\tverbatim\n"), 0o644)
	vr, err := Verify(dir)
	if err != nil || len(vr) != 1 || vr[0].Status != StatusOK {
		t.Errorf("Verify: %v %+v", err, vr)
	}
}

func TestFetchCorruptLeavesNothing(t *testing.T) {
	t.Parallel()
	srv, es, _ := testSource(t, []sourceFile{
		{staged: "new/deep/a.csv", src: "a.csv", body: []byte("1,2\n"), served: []byte("1,3\n")},
		{staged: "new/deep/b.csv", src: "b.csv", body: []byte("1,2\n"), served: []byte("1,2\n5\n")},
		{staged: "new/deep/c.csv", src: "c.csv", body: []byte("1,2\n"), served: []byte("1")},
	})
	dir := t.TempDir()
	res, err := Fetch(context.Background(), srv.Client(), srv.URL, es, dir)
	if len(res) != 0 || !errors.Is(err, ErrChecksum) {
		t.Fatalf("results %+v, err %v", res, err)
	}
	msg := err.Error()
	bad := sha256.Sum256([]byte("1,3\n"))
	for _, s := range []string{"new/deep/a.csv", es[0].SHA256, hex.EncodeToString(bad[:]), "want 4 bytes, got 5 or more", "got 1 (download"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q lacks %q", msg, s)
		}
	}
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Path != "new/deep/a.csv" || ce.Got != hex.EncodeToString(bad[:]) {
		t.Errorf("ChecksumError %+v", ce)
	}
	if left := listFiles(t, dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestFetchFailures(t *testing.T) {
	t.Parallel()
	srv, es, _ := testSource(t, []sourceFile{{staged: "s/a.csv", src: "a.csv", body: []byte("x")}})
	dir := t.TempDir()
	missing := es[0]
	missing.Path, missing.SourcePath = "s/gone.csv", "gone.csv"
	converted := es[0]
	converted.Path, converted.Note = "s/conv.csv", "converted .mat -> CSV"
	res, err := Fetch(context.Background(), srv.Client(), srv.URL, []ManifestEntry{missing, converted, es[0]}, dir)
	if len(res) != 1 || res[0].Entry.Path != "s/a.csv" {
		t.Fatalf("the good file was not fetched: %+v", res)
	}
	if !errors.Is(err, ErrNoSource) || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "s/gone.csv") {
		t.Errorf("err = %v", err)
	}
	if left := listFiles(t, dir); strings.Join(left, " ") != "s s/a.csv" {
		t.Errorf("files: %v", left)
	}
	outside := es[0]
	outside.Path = "../evil"
	if _, err := Fetch(context.Background(), srv.Client(), srv.URL, []ManifestEntry{outside}, dir); !errors.Is(err, ErrInvalid) {
		t.Errorf("path outside: %v", err)
	}
	if _, err := Fetch(context.Background(), nil, srv.URL, es, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("no dir: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = Fetch(ctx, srv.Client(), srv.URL, []ManifestEntry{missing}, t.TempDir())
	if !errors.Is(err, context.Canceled) || len(res) != 0 {
		t.Errorf("cancelled: %v", err)
	}
}
