// Package atomicfile writes files so that readers see the old content or the new one, never a part: the data
// goes to a temporary file in the same folder, which is synced and renamed over the target. OpenRegular is the
// read side: it opens only regular files, so that a directory or a named pipe given as an input is refused at
// once instead of failing late or blocking forever.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// CheckWritable reports, before any work is done, why WriteFile(path) would certainly fail: path's folder does
// not exist (or is not a folder), or path is a directory. It does not create anything.
func CheckWritable(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &os.PathError{Op: "write", Path: path, Err: fmt.Errorf("folder %s: %w", dir, err)}
	} else if !fi.IsDir() {
		return &os.PathError{Op: "write", Path: path, Err: fmt.Errorf("%s is not a folder", dir)}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &os.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
	}
	return nil
}

// OpenRegular opens path for reading if it is a regular file (symbolic links followed). Otherwise it returns
// an error naming path and what it is (a directory, a named pipe, a device, a socket); errors of os.Stat and
// os.Open are returned as they are (they name path).
func OpenRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file (%s)", kind(fi.Mode()))}
	}
	return os.Open(path)
}

// kind names the type of a file that is not regular.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

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
