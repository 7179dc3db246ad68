package serve

import (
	"fmt"
	"github.com/gpzoo/gpzoo/oip"
	"strings"
)

// ConfigError is a Config that New refuses: which field, and why.
type ConfigError struct {
	Field, Msg string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("serve: Config.%s: %s", e.Field, e.Msg) }

// InsecureListenError is returned by New (and Serve) for an address that is not loopback while TLS or the
// bearer token is missing: beyond loopback the server needs both.
type InsecureListenError struct {
	// Addr is the address; Missing lists what is missing ("TLS", "token").
	Addr    string
	Missing []string
}

func (e *InsecureListenError) Error() string {
	return fmt.Sprintf("serve: refusing to listen on %s: not a loopback address, and %s missing (beyond loopback the server needs TLS (a certificate and key) and a bearer token)",
		e.Addr, strings.Join(e.Missing, " and "))
}

// LoadError is a model file that could not be served: its model's name, the file, and the cause (a
// modelfile error for a corrupt, truncated or newer file; a prediction error for a model that does not
// predict).
type LoadError struct {
	Name, Path string
	Err        error
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("serve: model %q from %s: %v", e.Name, e.Path, e.Err)
}

func (e *LoadError) Unwrap() error { return e.Err }

// SourceError is a model source New cannot use: a malformed NAME[@VERSION]=FILE, a name or version that is not
// a URL path segment, a duplicate version, a directory that cannot be watched.
type SourceError struct {
	Source, Msg string
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("serve: model source %q: %s", e.Source, e.Msg)
}

// errorf returns the protocol error of a failed request: an *oip.Error with an HTTP status.
func errorf(status int, format string, args ...any) *oip.Error {
	return oip.Errorf(status, format, args...)
}
