package datasets

import (
	"bytes"
	_ "embed" // the data manifest compiled into the package
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpzoo/gpzoo/internal/atomicfile"
)

// ManifestFile is the name of the manifest in a data directory.
const ManifestFile = "MANIFEST.tsv"

// DefaultSourceBase is the public source of the data files; a mirror given to
// Fetch or DownloadURL replaces it.
const DefaultSourceBase = "https://raw.githubusercontent.com"

// ErrNoSource reports a manifest entry with no public URL to download it
// from (a file converted or rebuilt when the data directory was staged).
var ErrNoSource = errors.New("datasets: no download source")

// embeddedManifest is a copy of the benchmark data directory's MANIFEST.tsv
// (shared/data), so that a fresh data directory can be fetched.
//
//go:embed embed/MANIFEST.tsv
var embeddedManifest []byte

// ManifestEntry is one file of a data directory's manifest (a row of
// MANIFEST.tsv).
type ManifestEntry struct {
	Path         string // staged path: slash-separated, relative to the data directory
	Bytes        int64  // file size
	SHA256       string // lower-case hex digest of the file
	SourceRepo   string // GitHub repository "owner/name" the file came from
	SourceCommit string // commit of SourceRepo
	SourcePath   string // path of the file in SourceRepo
	Note         string // "verbatim", or how the file was converted
}

var (
	repoRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)
	commitRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// DownloadURL returns the URL of the entry's file:
// base/{SourceRepo}/{SourceCommit}/{SourcePath}, with base DefaultSourceBase
// when empty (a mirror of raw.githubusercontent.com otherwise). Errors:
// ErrNoSource when the entry has no such source (SourceRepo not of the form
// owner/name, no commit or path, or a file that is not a verbatim copy of
// its source, e.g. converted from .mat), with a message saying why;
// ErrInvalid for a base that is not an http(s) URL.
func (e ManifestEntry) DownloadURL(base string) (string, error) {
	if base == "" {
		base = DefaultSourceBase
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("datasets: mirror %q is not an http(s) URL: %w", base, ErrInvalid)
	}
	switch {
	case !repoRE.MatchString(e.SourceRepo):
		return "", fmt.Errorf("datasets: %s: source %q is not a GitHub repository owner/name; copy the file from an existing data directory: %w", e.Path, e.SourceRepo, ErrNoSource)
	case !verbatimNote(e.Note):
		return "", fmt.Errorf("datasets: %s was not copied verbatim from %s (%s), so there is nothing to download; copy it from an existing data directory: %w", e.Path, e.SourceRepo, e.Note, ErrNoSource)
	case !commitRE.MatchString(e.SourceCommit) || !cleanSourcePath(e.SourcePath):
		return "", fmt.Errorf("datasets: %s: no usable commit and path in %s (%q, %q): %w", e.Path, e.SourceRepo, e.SourceCommit, e.SourcePath, ErrNoSource)
	}
	segs := strings.Split(e.SourceRepo+"/"+e.SourceCommit+"/"+e.SourcePath, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.Join(segs, "/"), nil
}

// verbatimNote reports whether a manifest note describes a byte copy of the
// source file ("verbatim...", "license text...", or no note).
func verbatimNote(note string) bool {
	n := strings.ToLower(strings.TrimSpace(note))
	return n == "" || strings.HasPrefix(n, "verbatim") || strings.HasPrefix(n, "license")
}

// cleanSourcePath reports whether p is a plain relative file path (no
// spaces, wildcards or placeholders such as "<digit>").
func cleanSourcePath(p string) bool {
	return p != "" && localPath(p) && !strings.ContainsAny(p, " \t<>*?()")
}

// localPath reports whether p is a clean, relative, slash-separated path
// inside its root.
func localPath(p string) bool {
	return p != "" && path.Clean(p) == p && filepath.IsLocal(filepath.FromSlash(p)) && !strings.Contains(p, `\`)
}

// ParseManifest parses a data manifest from r: tab-separated with a header
// row naming the columns; staged_path, bytes and sha256 are required,
// source_repo, source_commit, source_path and note optional (in any order,
// other columns ignored). Errors: ErrEmpty for a nil reader or no header;
// *FormatError (with its line) for a missing column, a row with the wrong
// number of fields, a path that is absolute, unclean or escapes the
// directory, a path listed twice, a bad size or a digest that is not 64 hex
// digits.
func ParseManifest(r io.Reader) ([]ManifestEntry, error) {
	return parseManifest(r, "")
}

// LoadManifest reads the manifest file at path (see ParseManifest).
func LoadManifest(path string) ([]ManifestEntry, error) {
	return withOpen(path, func(r io.Reader) ([]ManifestEntry, error) { return parseManifest(r, path) })
}

// EmbeddedManifest returns the entries of the manifest compiled into the
// package: a copy of the benchmark data directory's MANIFEST.tsv.
func EmbeddedManifest() ([]ManifestEntry, error) {
	return parseManifest(bytes.NewReader(embeddedManifest), "embedded "+ManifestFile)
}

// DirManifest returns the manifest of the data directory dir: dir/MANIFEST.tsv
// when it exists, else the embedded manifest (a fresh directory). from names
// the manifest used. Errors: ErrInvalid for an empty dir, and those of
// LoadManifest.
func DirManifest(dir string) (entries []ManifestEntry, from string, err error) {
	if dir == "" {
		return nil, "", fmt.Errorf("datasets: no data directory given (set %s): %w", EnvDataDir, ErrInvalid)
	}
	p := filepath.Join(dir, ManifestFile)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		e, err := EmbeddedManifest()
		return e, "embedded " + ManifestFile, err
	}
	e, err := LoadManifest(p)
	return e, p, err
}

// WriteEmbeddedManifest writes the embedded manifest to dir/MANIFEST.tsv
// when that file does not exist yet, and reports whether it wrote it.
func WriteEmbeddedManifest(dir string) (bool, error) {
	p := filepath.Join(dir, ManifestFile)
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := writeFileAtomic(p, embeddedManifest); err != nil {
		return false, err
	}
	return true, nil
}

// writeFileAtomic writes b to a temporary file next to p and renames it.
func writeFileAtomic(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err := atomicfile.WriteFile(p, b, 0o644); err != nil {
		return fmt.Errorf("datasets: writing %s: %w", p, err)
	}
	return nil
}

// manifestColumns are the known columns of MANIFEST.tsv; the first three
// are required.
var manifestColumns = []string{"staged_path", "bytes", "sha256", "source_repo", "source_commit", "source_path", "note"}

func parseManifest(r io.Reader, name string) ([]ManifestEntry, error) {
	in, err := openInput(r, name)
	if err != nil {
		return nil, err
	}
	sc := newLineScanner(in)
	line := 0
	col := map[string]int{}
	nf := 0
	var out []ManifestEntry
	seen := map[string]int{}
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if isBlank(text) {
			continue
		}
		fields := strings.Split(text, "\t")
		if nf == 0 {
			for j, f := range fields {
				col[strings.TrimSpace(strings.TrimPrefix(f, "\uFEFF"))] = j
			}
			for _, c := range manifestColumns[:3] {
				if _, ok := col[c]; !ok {
					return nil, sc.fail(&FormatError{File: name, Line: line, Msg: fmt.Sprintf("manifest header lacks column %q", c)}, name, line)
				}
			}
			nf = len(fields)
			continue
		}
		if len(fields) != nf {
			return nil, sc.fail(&FormatError{File: name, Line: line, Msg: fmt.Sprintf("%d tab-separated fields, the header has %d", len(fields), nf)}, name, line)
		}
		get := func(c string) string {
			if j, ok := col[c]; ok {
				return strings.TrimSpace(fields[j])
			}
			return ""
		}
		e := ManifestEntry{Path: get("staged_path"), SHA256: strings.ToLower(get("sha256")), SourceRepo: get("source_repo"),
			SourceCommit: get("source_commit"), SourcePath: get("source_path"), Note: get("note")}
		bad := func(msg string) error {
			return sc.fail(&FormatError{File: name, Line: line, Msg: msg}, name, line)
		}
		if !localPath(e.Path) {
			return nil, bad(fmt.Sprintf("staged path %q is not a clean relative path inside the data directory", truncate(e.Path)))
		}
		if prev, dup := seen[e.Path]; dup {
			return nil, bad(fmt.Sprintf("staged path %q listed twice (also line %d)", truncate(e.Path), prev))
		}
		seen[e.Path] = line
		if e.Bytes, err = strconv.ParseInt(get("bytes"), 10, 64); err != nil || e.Bytes < 0 {
			return nil, bad(fmt.Sprintf("%s: size %q is not a byte count", e.Path, truncate(get("bytes"))))
		}
		if d, err := hex.DecodeString(e.SHA256); err != nil || len(d) != 32 {
			return nil, bad(fmt.Sprintf("%s: sha256 %q is not 64 hex digits", e.Path, truncate(e.SHA256)))
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, readError(err, name, line+1)
	}
	if sc.rec.err != nil {
		return nil, readError(sc.rec.err, name, line)
	}
	if nf == 0 {
		return nil, withFile(fmt.Errorf("datasets: manifest has no header: %w", ErrEmpty), name)
	}
	return out, nil
}
