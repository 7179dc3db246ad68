package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// VerifyStatus is the outcome of checking one file against its manifest
// entry.
type VerifyStatus int

// The outcomes of VerifyFile.
const (
	StatusOK               VerifyStatus = iota // size and sha256 match
	StatusMissing                              // no such file
	StatusSizeMismatch                         // the size differs (not hashed)
	StatusChecksumMismatch                     // the size matches, the sha256 does not
	StatusUnreadable                           // not a regular file, or reading failed (see Err)
)

// String returns the status in words: "ok", "missing", "size mismatch",
// "checksum mismatch" or "unreadable".
func (s VerifyStatus) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusMissing:
		return "missing"
	case StatusSizeMismatch:
		return "size mismatch"
	case StatusChecksumMismatch:
		return "checksum mismatch"
	case StatusUnreadable:
		return "unreadable"
	}
	return fmt.Sprintf("VerifyStatus(%d)", int(s))
}

// VerifyResult is the check of one manifest entry's file.
type VerifyResult struct {
	Entry  ManifestEntry
	Status VerifyStatus
	Size   int64  // size found (0 when missing)
	SHA256 string // digest found, "" when not hashed (missing, size mismatch, unreadable)
	Err    error  // the I/O error of StatusUnreadable, else nil
}

// Verify checks every file of the data directory dir against its manifest
// (DirManifest: dir/MANIFEST.tsv, else the embedded one), streaming each
// file through sha256. The error is only for an unreadable manifest; the
// state of each file is in its VerifyResult.
func Verify(dir string) ([]VerifyResult, error) {
	entries, _, err := DirManifest(dir)
	if err != nil {
		return nil, err
	}
	return VerifyEntries(dir, entries), nil
}

// VerifyEntries checks the files of entries below dir (see VerifyFile), in
// order.
func VerifyEntries(dir string, entries []ManifestEntry) []VerifyResult {
	out := make([]VerifyResult, len(entries))
	for i, e := range entries {
		out[i] = VerifyFile(dir, e)
	}
	return out
}

// VerifyFile checks the file of e below dir: it must exist, have e.Bytes
// bytes and the sha256 e.SHA256 (the file is hashed only when its size
// matches).
func VerifyFile(dir string, e ManifestEntry) VerifyResult {
	res := VerifyResult{Entry: e}
	if !localPath(e.Path) {
		res.Status, res.Err = StatusUnreadable, fmt.Errorf("datasets: staged path %q is not inside the data directory: %w", e.Path, ErrInvalid)
		return res
	}
	p := filepath.Join(dir, filepath.FromSlash(e.Path))
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Status = StatusMissing
		return res
	case err != nil:
		res.Status, res.Err = StatusUnreadable, fmt.Errorf("datasets: %w", err)
		return res
	case !st.Mode().IsRegular():
		res.Status, res.Err = StatusUnreadable, fmt.Errorf("datasets: %s is not a regular file: %w", p, ErrInvalid)
		return res
	}
	res.Size = st.Size()
	if res.Size != e.Bytes {
		res.Status = StatusSizeMismatch
		return res
	}
	sum, n, err := hashFile(p)
	if err != nil {
		res.Status, res.Err = StatusUnreadable, err
		return res
	}
	res.Size, res.SHA256 = n, sum
	if n != e.Bytes {
		res.Status = StatusSizeMismatch // changed while reading
	} else if sum != e.SHA256 {
		res.Status = StatusChecksumMismatch
	}
	return res
}

// Present reports whether e's file exists below dir with the size of the
// manifest; unlike VerifyFile it does not read the file.
func Present(dir string, e ManifestEntry) bool {
	if !localPath(e.Path) {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.Path)))
	return err == nil && st.Mode().IsRegular() && st.Size() == e.Bytes
}

// hashFile streams the file at p through sha256.
func hashFile(p string) (sum string, n int64, err error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if n, err = io.Copy(h, f); err != nil {
		return "", n, fmt.Errorf("datasets: reading %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
