package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"github.com/gpzoo/gpzoo/internal/access"
	"net/http"
	"strings"
)

// IsLoopback reports whether the host of addr (host:port) is a loopback address (access.LoopbackAddr: an IP
// in 127.0.0.0/8, ::1 with IPv4-mapped forms, or localhost; not ":8080", every interface).
func IsLoopback(addr string) bool { return access.LoopbackAddr(addr) }

// CheckListen applies the listening rule to addr: a loopback address is always allowed; any other needs TLS
// and a bearer token (an *InsecureListenError naming what is missing). It binds nothing.
func CheckListen(addr string, tls, token bool) error {
	if IsLoopback(addr) || (tls && token) {
		return nil
	}
	e := &InsecureListenError{Addr: addr}
	if !tls {
		e.Missing = append(e.Missing, "TLS")
	}
	if !token {
		e.Missing = append(e.Missing, "token")
	}
	return e
}

// loadTLS reads the certificate and key of c (nil, nil without them).
func loadTLS(c Config) (*tls.Config, error) {
	if c.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, &ConfigError{Field: "TLSCert, TLSKey", Msg: fmt.Sprintf("loading the key pair: %v", err)}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// tokenHash is the SHA-256 of a token: comparing hashes in constant time leaks neither the token nor its length.
type tokenHash [sha256.Size]byte

// authorize checks a presented token against the server's (always true without one). Transports call it with
// what the client sent: REST's Authorization header value after "Bearer ", gRPC's "authorization" metadata.
func (s *Server) authorize(presented string) bool {
	if s.token == nil {
		return true
	}
	h := tokenHash(sha256.Sum256([]byte(presented)))
	return subtle.ConstantTimeCompare(h[:], s.token[:]) == 1
}

// bearer returns the token of an "Authorization: Bearer <token>" header value (the scheme in any case), and
// whether there was one.
func bearer(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// requireToken wraps h so that it answers 401 with the protocol's error object unless the request carries the
// server's bearer token.
func (s *Server) requireToken(h http.Handler) http.Handler {
	if s.token == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gpzoo"`)
			writeError(w, r, errorf(http.StatusUnauthorized, "missing bearer token: send the header Authorization: Bearer <token>"))
			return
		}
		if !s.authorize(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gpzoo", error="invalid_token"`)
			writeError(w, r, errorf(http.StatusUnauthorized, "invalid bearer token"))
			return
		}
		h.ServeHTTP(w, r)
	})
}
