// Package access holds the one rule of who may reach a gpzoo server (gpzoo serve, the ADVGP parameter server)
// and how clients get their secrets: a loopback address may always be used, anything else needs credentials;
// tokens come from a file or an environment variable, never a command line. Standard library only.
package access

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// LoopbackHost reports whether host (a name or an address, optionally in brackets) is this machine's
// loopback: an IP in 127.0.0.0/8, ::1 (IPv4-mapped forms included), or the name localhost. An empty host (every
// interface), any other name and an unparsable host are not: names are never resolved, so a DNS answer cannot
// widen the rule.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// LoopbackAddr reports whether the host of addr (host:port) is loopback (LoopbackHost); ":8080" (every
// interface) and an unparsable address are not.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && LoopbackHost(host)
}

// ReadToken returns the token held by file (surrounding white space removed), or, for file "", the value of the
// environment variable env ("" when unset: no token). An empty token file is an error.
func ReadToken(file, env string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(env)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading the token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("the token file %s is empty", file)
	}
	return tok, nil
}
