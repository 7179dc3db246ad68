package client

import "fmt"

// ConfigError is an invalid target or option given to New.
type ConfigError struct {
	Field string // "target", "Token", "TLS", "CAFile", ...
	Msg   string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("client: %s: %s", e.Field, e.Msg) }

// TransportError is a request that got no answer from the server (it could not be reached, the connection
// failed, the context ended) or an answer that could not be read. Err is the cause (errors.Is(err,
// context.DeadlineExceeded) holds for a timeout).
type TransportError struct {
	Op     string // "infer", "metadata", "ready"
	Target string
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("client: %s at %s: %v", e.Op, e.Target, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }
