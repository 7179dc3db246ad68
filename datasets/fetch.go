package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
)

// ErrChecksum reports a downloaded file whose size or sha256 differs from
// its manifest entry; see ChecksumError.
var ErrChecksum = errors.New("datasets: checksum mismatch")

// ChecksumError reports a download of Path (from URL) that does not match
// the manifest: the sizes differ (GotBytes ≠ WantBytes; GotBytes is
// WantBytes+1 when the download was longer) or the sha256 digests do. The
// downloaded data were discarded. It unwraps to ErrChecksum.
type ChecksumError struct {
	Path, URL           string
	WantBytes, GotBytes int64
	Want, Got           string // hex sha256; Got is "" after a size mismatch
}

// Error implements error.
func (e *ChecksumError) Error() string {
	if e.GotBytes != e.WantBytes {
		more := ""
		if e.GotBytes > e.WantBytes {
			more = " or more"
		}
		return fmt.Sprintf("datasets: %s from %s: size mismatch: want %d bytes, got %d%s (download discarded)",
			e.Path, e.URL, e.WantBytes, e.GotBytes, more)
	}
	return fmt.Sprintf("datasets: %s from %s: checksum mismatch: want sha256 %s, got %s (download discarded)", e.Path, e.URL, e.Want, e.Got)
}

// Unwrap returns ErrChecksum.
func (e *ChecksumError) Unwrap() error { return ErrChecksum }

// FetchResult is what Fetch did for one entry.
type FetchResult struct {
	Entry   ManifestEntry
	Skipped bool   // the file was already present and verified
	URL     string // where it was downloaded from ("" when skipped)
}

// Fetch downloads the files of entries into the data directory dir
// (created if needed) from their public source (ManifestEntry.DownloadURL;
// mirror, when not empty, replaces DefaultSourceBase), with client
// (http.DefaultClient when nil). A file already present with the right size
// and sha256 is skipped. Each download goes to a temporary file in the
// target folder and is renamed into place only after its size and sha256
// match the manifest, so no partial or unverified file is ever left (folders
// created for a failed download are removed again). A failure does not stop
// the other downloads, except a cancelled ctx, which stops at once.
//
// It returns the results of the files fetched or skipped, in order, and the
// failures joined (errors.Join): ErrNoSource for an entry with no public
// source, *ChecksumError (ErrChecksum) for a corrupt download, errors
// naming the URL for HTTP failures, ErrInvalid for an empty dir, a bad
// mirror or a staged path outside dir, ctx.Err() when cancelled.
func Fetch(ctx context.Context, client *http.Client, mirror string, entries []ManifestEntry, dir string) ([]FetchResult, error) {
	if dir == "" {
		return nil, fmt.Errorf("datasets: no data directory given (set %s): %w", EnvDataDir, ErrInvalid)
	}
	if client == nil {
		client = http.DefaultClient
	}
	var (
		out  []FetchResult
		errs []error
	)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("datasets: fetch interrupted before %s: %w", e.Path, err))
			break
		}
		r, err := fetchOne(ctx, client, mirror, e, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// fetchOne downloads and verifies one entry.
func fetchOne(ctx context.Context, client *http.Client, mirror string, e ManifestEntry, dir string) (FetchResult, error) {
	res := FetchResult{Entry: e}
	if !localPath(e.Path) {
		return res, fmt.Errorf("datasets: staged path %q is not inside the data directory: %w", e.Path, ErrInvalid)
	}
	if VerifyFile(dir, e).Status == StatusOK {
		res.Skipped = true
		return res, nil
	}
	u, err := e.DownloadURL(mirror)
	if err != nil {
		return res, err
	}
	res.URL = u
	target := filepath.Join(dir, filepath.FromSlash(e.Path))
	created, err := makeDirs(filepath.Dir(target))
	if err != nil {
		return res, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.part")
	if err != nil {
		removeDirs(created)
		return res, fmt.Errorf("datasets: %w", err)
	}
	if err := download(ctx, client, u, tmp, e); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		removeDirs(created)
		return res, err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		os.Remove(tmp.Name())
		removeDirs(created)
		return res, fmt.Errorf("datasets: %w", err)
	}
	return res, nil
}

// download writes the body of GET u to tmp, checks size and sha256 against
// e, and syncs and closes tmp (mode 0644) on success.
func download(ctx context.Context, client *http.Client, u string, tmp *os.File, e ManifestEntry) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("datasets: %s: %w", e.Path, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("datasets: downloading %s: %w", e.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("datasets: downloading %s: GET %s: %s", e.Path, u, resp.Status)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, e.Bytes+1))
	if err != nil {
		return fmt.Errorf("datasets: downloading %s from %s: %w", e.Path, u, err)
	}
	if n != e.Bytes {
		return &ChecksumError{Path: e.Path, URL: u, WantBytes: e.Bytes, GotBytes: n, Want: e.SHA256}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != e.SHA256 {
		return &ChecksumError{Path: e.Path, URL: u, WantBytes: e.Bytes, GotBytes: n, Want: e.SHA256, Got: got}
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("datasets: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("datasets: writing %s: %w", tmp.Name(), err)
	}
	return nil
}

// makeDirs creates folder d and its missing parents, returning the folders
// it created, deepest first.
func makeDirs(d string) ([]string, error) {
	var created []string
	for p := d; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	return created, nil
}

// removeDirs removes the folders (deepest first) that are still empty.
func removeDirs(dirs []string) {
	for _, d := range dirs {
		os.Remove(d) // fails, harmlessly, when not empty
	}
}
