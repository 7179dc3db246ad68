package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	sumA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	hdr  = "staged_path\tbytes\tsha256\tsource_repo\tsource_commit\tsource_path\tnote\n"
)

func TestParseManifest(t *testing.T) {
	t.Parallel()
	in := hdr +
		"x/a.csv\t12\t" + strings.ToUpper(sumA) + "\town/repo\tabc123\tdata/a.csv\tverbatim\n\n" +
		"x/b.csv\t3\t" + sumA + "\town/repo\tabc123\tdata/b.mat\tconverted .mat -> CSV\r\n" +
		"mnist/t.gz\t3\t" + sumA + "\tjoe/png\tabc123\ttraining/<digit>/<index>.png (60000 PNGs)\trebuilt IDX\n" +
		"y/c.txt\t0\t" + sumA + "\tnot a repo\t\t\t\n"
	es, err := ParseManifest(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 4 || es[0].Path != "x/a.csv" || es[0].Bytes != 12 || es[0].SHA256 != sumA || es[1].Note != "converted .mat -> CSV" {
		t.Fatalf("entries %+v", es)
	}
	u, err := es[0].DownloadURL("")
	if err != nil || u != "https://raw.githubusercontent.com/own/repo/abc123/data/a.csv" {
		t.Errorf("URL %q, %v", u, err)
	}
	if u, err = es[0].DownloadURL("http://127.0.0.1:99/m/"); err != nil || u != "http://127.0.0.1:99/m/own/repo/abc123/data/a.csv" {
		t.Errorf("mirror URL %q, %v", u, err)
	}
	if _, err := es[0].DownloadURL("ftp://x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ftp mirror: %v", err)
	}
	for i, want := range []string{"not copied verbatim", "not copied verbatim", "not a GitHub repository"} {
		_, err := es[i+1].DownloadURL("")
		if !errors.Is(err, ErrNoSource) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), es[i+1].Path) {
			t.Errorf("%s: %v", es[i+1].Path, err)
		}
	}
	// A verbatim entry whose source path is not a file path has no URL either.
	e := es[0]
	e.SourcePath = "training/<digit>/x.png"
	if _, err := e.DownloadURL(""); !errors.Is(err, ErrNoSource) {
		t.Errorf("placeholder path: %v", err)
	}
}

func TestParseManifestErrors(t *testing.T) {
	t.Parallel()
	row := func(p, n, sum string) string { return p + "\t" + n + "\t" + sum + "\to/r\tc\tp\tverbatim\n" }
	cases := map[string]string{
		"absolute":  hdr + row("/etc/passwd", "1", sumA),
		"escape":    hdr + row("../x", "1", sumA),
		"unclean":   hdr + row("a//b", "1", sumA),
		"backslash": hdr + row(`a\..\..\b`, "1", sumA),
		"duplicate": hdr + row("a", "1", sumA) + row("a", "1", sumA),
		"size":      hdr + row("a", "-1", sumA),
		"size text": hdr + row("a", "x", sumA),
		"short sum": hdr + row("a", "1", "abc"),
		"hex":       hdr + row("a", "1", strings.Repeat("g", 64)),
		"fields":    hdr + "a\t1\n",
		"no column": "staged_path\tsha256\n" + "a\t" + sumA + "\n",
	}
	for name, in := range cases {
		_, err := ParseManifest(strings.NewReader(in))
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Line == 0 {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := ParseManifest(strings.NewReader("")); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	if _, err := ParseManifest(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("nil: %v", err)
	}
}

// The data-set names cover the embedded manifest exactly (its equality with
// the data directory's copy is checked by TestEmbeddedManifestIsTheDataDirs).
func TestEmbeddedManifest(t *testing.T) {
	t.Parallel()
	es, err := EmbeddedManifest()
	if err != nil {
		t.Fatal(err)
	}
	covered := make([]bool, len(es))
	for _, n := range DataSetNames() {
		sel, err := SelectEntries(es, []string{n})
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		paths, _ := DataSetPaths(n)
		for _, p := range paths {
			found := false
			for _, e := range sel {
				found = found || MatchPath(e.Path, p)
			}
			if !found {
				t.Errorf("%s: path %s matches no manifest entry", n, p)
			}
		}
		for _, e := range sel {
			for i := range es {
				if es[i].Path == e.Path {
					covered[i] = true
				}
			}
		}
	}
	for i, c := range covered {
		if !c {
			t.Errorf("%s belongs to no data set", es[i].Path)
		}
	}
	// Every verbatim file of the real manifest has a URL; converted ones do not.
	noURL := 0
	for _, e := range es {
		if _, err := e.DownloadURL(""); err != nil {
			noURL++
			if !errors.Is(err, ErrNoSource) {
				t.Errorf("%s: %v", e.Path, err)
			}
		}
	}
	// 6 Rätsch .mat conversions, 3 oil-flow .mat conversions, the rebuilt MNIST training images.
	if noURL != 10 {
		t.Errorf("%d entries without URL, want 10", noURL)
	}
}

func TestSelectEntries(t *testing.T) {
	t.Parallel()
	es, err := EmbeddedManifest()
	if err != nil {
		t.Fatal(err)
	}
	sel, err := SelectEntries(es, []string{"pendigits", "classification-delgado/iris.csv", "pendigits"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range sel {
		got = append(got, e.Path)
	}
	want := "classification-delgado/SOURCE_LICENSE.txt classification-delgado/iris.csv classification-delgado/pendigits_test.csv classification-delgado/pendigits_train.csv"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v\nwant %s", got, want)
	}
	if sel, _ := SelectEntries(es, []string{"uci-regression-dropout/kin8nm/"}); len(sel) == 0 || !strings.HasPrefix(sel[0].Path, "uci-regression-dropout/kin8nm/") {
		t.Errorf("folder prefix: %v", sel)
	}
	if sel, _ := SelectEntries(es, []string{AllDataSets}); len(sel) != len(es) {
		t.Errorf("all: %d of %d", len(sel), len(es))
	}
	// A folder prefix must end at a separator.
	if _, err := SelectEntries(es, []string{"uci-regression-dropout/kin8"}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "kin8nm") {
		t.Errorf("partial name: %v", err)
	}
	if _, err := SelectEntries(es, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("no names: %v", err)
	}
}

func TestDirManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	es, from, err := DirManifest(dir)
	if err != nil || !strings.HasPrefix(from, "embedded") || len(es) == 0 {
		t.Fatalf("fresh dir: %v %q", err, from)
	}
	wrote, err := WriteEmbeddedManifest(dir)
	if err != nil || !wrote {
		t.Fatalf("write: %v %v", wrote, err)
	}
	if wrote, err := WriteEmbeddedManifest(dir); err != nil || wrote {
		t.Fatalf("second write: %v %v", wrote, err)
	}
	os.WriteFile(filepath.Join(dir, ManifestFile), []byte(hdr+"a\t1\t"+sumA+"\to/r\tc\tp\tverbatim\n"), 0o644)
	es, from, err = DirManifest(dir)
	if err != nil || from != filepath.Join(dir, ManifestFile) || len(es) != 1 {
		t.Fatalf("own manifest: %v %q %d", err, from, len(es))
	}
	if _, _, err := DirManifest(""); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty dir: %v", err)
	}
}
