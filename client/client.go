package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"github.com/gpzoo/gpzoo/internal/access"

	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/oip"
)

// Options configures a Client. The zero value talks plaintext REST or gRPC without a token.
type Options struct {
	// Token is the bearer token sent with every request ("": none). It is never sent in plaintext (http://,
	// grpc://) to a host other than loopback unless Insecure is set.
	Token string
	// Insecure allows sending Token in plaintext to a host that is not loopback.
	Insecure bool
	// TLS is the TLS configuration of an https:// or grpcs:// target (nil: the system's roots, TLS 1.2 or
	// later). It is cloned, never modified.
	TLS *tls.Config
	// CAFile is a PEM bundle of the certificate authorities to trust for an https:// or grpcs:// target,
	// instead of TLS.RootCAs (or the system's roots).
	CAFile string
	// Timeout bounds every call (0: only the caller's context bounds it).
	Timeout time.Duration
	// HTTPClient is the HTTP client of a REST target (nil: one of the client's own, configured by TLS and
	// CAFile; with HTTPClient set, its transport's TLS configuration is used and TLS and CAFile are refused).
	HTTPClient *http.Client
}

// Client calls one server over REST or gRPC. Its methods are safe for concurrent use; Close releases it.
type Client struct {
	target  string
	timeout time.Duration
	t       transport
}

// transport is one protocol binding: REST (rest.go) or gRPC (grpc.go).
type transport interface {
	infer(ctx context.Context, model, version string, req *oip.InferRequest) (*oip.InferResponse, error)
	metadata(ctx context.Context, model, version string) (*oip.ModelMetadata, error)
	ready(ctx context.Context, model, version string) (bool, error)
	close() error
}

// New returns a client of the server at target: an http:// or https:// base URL (REST: the protocol's /v2/...
// paths are appended to it) or grpc://HOST:PORT or grpcs://HOST:PORT (gRPC in plaintext or over TLS). No
// connection is made yet. Errors: a *ConfigError for an unsupported target, a token that would go in plaintext
// to a host that is not loopback (without o.Insecure), TLS options for a plaintext target, or a CA file that
// cannot be read.
func New(target string, o Options) (*Client, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, &ConfigError{Field: "target", Msg: fmt.Sprintf("%q is not a URL with a host (http://, https://, grpc:// or grpcs://)", target)}
	}
	scheme := strings.ToLower(u.Scheme)
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, &ConfigError{Field: "target", Msg: fmt.Sprintf("%q: user information, query and fragment are not supported", redact(u))}
	}
	plaintext := scheme == "http" || scheme == "grpc"
	switch scheme {
	case "http", "https", "grpc", "grpcs":
	default:
		return nil, &ConfigError{Field: "target", Msg: fmt.Sprintf("%q: the scheme must be http, https (REST), grpc or grpcs (gRPC)", target)}
	}
	if strings.ContainsAny(o.Token, "\r\n\x00") {
		return nil, &ConfigError{Field: "Token", Msg: "the token contains a line break or a NUL byte"}
	}
	o.Token = strings.TrimSpace(o.Token)
	host := u.Hostname()
	if plaintext && o.Token != "" && !access.LoopbackHost(host) && !o.Insecure {
		return nil, &ConfigError{Field: "Token", Msg: fmt.Sprintf("refusing to send the bearer token in plaintext to %s: use %ss://, or set Options.Insecure", host, strings.TrimSuffix(scheme, "s"))}
	}
	if plaintext && (o.TLS != nil || o.CAFile != "") {
		return nil, &ConfigError{Field: "TLS", Msg: fmt.Sprintf("TLS options for the plaintext target %s: use %ss://", redact(u), scheme)}
	}
	var tlsConf *tls.Config
	if !plaintext {
		if tlsConf, err = tlsConfig(o); err != nil {
			return nil, err
		}
	}
	c := &Client{target: redact(u), timeout: o.Timeout}
	switch scheme {
	case "http", "https":
		if c.t, err = newREST(u, o, tlsConf); err != nil {
			return nil, err
		}
	default:
		if u.Path != "" && u.Path != "/" {
			return nil, &ConfigError{Field: "target", Msg: fmt.Sprintf("%q: a gRPC target is %s://HOST:PORT, without a path", target, scheme)}
		}
		if u.Port() == "" {
			return nil, &ConfigError{Field: "target", Msg: fmt.Sprintf("%q: a gRPC target needs a port (%s://HOST:PORT)", target, scheme)}
		}
		if c.t, err = newGRPC(u.Host, o, tlsConf, c.target); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// tlsConfig returns the TLS configuration of o: o.TLS cloned (or TLS 1.2 or later), with CAFile's authorities.
func tlsConfig(o Options) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLS != nil {
		conf = o.TLS.Clone()
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, &ConfigError{Field: "CAFile", Msg: err.Error()}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{Field: "CAFile", Msg: fmt.Sprintf("%s holds no PEM certificate", o.CAFile)}
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// redact returns u without user information, for messages.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// Close releases the client's connections.
func (c *Client) Close() error {
	if c == nil || c.t == nil {
		return nil
	}
	return c.t.close()
}

// Target returns the target the client calls.
func (c *Client) Target() string { return c.target }

// call bounds ctx by the client's timeout.
func (c *Client) call(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return context.WithCancel(ctx)
}

// Metadata returns the metadata of the model at version ("": the server's default version). Errors: an
// *oip.Error the server answered (404 for an unknown model or version), a *TransportError.
func (c *Client) Metadata(ctx context.Context, model, version string) (*oip.ModelMetadata, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	return c.t.metadata(ctx, model, version)
}

// Ready reports whether the model (its default version) is ready for inference. A model the server knows but
// does not serve yet (or any more) is not ready: false and no error. Errors: an *oip.Error the server answered
// (404 for an unknown model), a *TransportError.
func (c *Client) Ready(ctx context.Context, model string) (bool, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	return c.t.ready(ctx, model, "")
}

// InferRequest sends a request as it is to the model at version ("": the server's default) and returns the
// server's answer: the protocol's messages without interpretation. Errors: as Infer's.
func (c *Client) InferRequest(ctx context.Context, model, version string, req *oip.InferRequest) (*oip.InferResponse, error) {
	if req == nil {
		return nil, oip.BadRequest("no inference request")
	}
	ctx, cancel := c.call(ctx)
	defer cancel()
	return c.t.infer(ctx, model, version, req)
}
