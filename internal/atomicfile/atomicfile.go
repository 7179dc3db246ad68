// Package atomicfile writes files so that readers see the old content or the new one, never a part: the data
// goes to a temporary file in the same folder, which is synced and renamed over the target.
package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically with permissions perm: a temporary file next to path (removed on any
// failure), fsynced, renamed into place, and the folder synced where the system allows it (so the rename
// survives a crash).
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil { // not every system can sync a folder
		d.Sync()
		d.Close()
	}
	return nil
}
