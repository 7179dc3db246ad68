package modelfile

import (
	"errors"
	"fmt"
)

// ErrNotModelFile is returned (wrapped with detail) by Load when the input does not start with the model-file
// magic bytes: it is some other file.
var ErrNotModelFile = errors.New("modelfile: not a gpzoo model file")

// ErrCorrupt is returned (wrapped with detail) by Load when the checksum does not match, the payload is not
// valid, or its contents are inconsistent (a Param that does not match the model's structure, data of the
// wrong shape, non-finite values).
var ErrCorrupt = errors.New("modelfile: corrupt model file")

// ErrTruncated is returned (wrapped with how many bytes were expected and read) by Load when the input ends
// before the file does.
var ErrTruncated = errors.New("modelfile: truncated model file")

// VersionError is returned by Load for a file written in a format version newer than this gpzoo reads.
type VersionError struct {
	// Got is the file's format version; Max is the newest this gpzoo reads (FormatVersion).
	Got, Max uint32
}

// Error says which version was found and that gpzoo needs an upgrade.
func (e *VersionError) Error() string {
	return fmt.Sprintf("model file format version %d is newer than this gpzoo reads (≤ %d): upgrade gpzoo", e.Got, e.Max)
}

// corrupt wraps ErrCorrupt with detail (and any cause, so that errors.Is also sees it).
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
