package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.3.2.1:1": true, "[::1]:8080": true, "localhost:80": true, "LOCALHOST:80": true,
		"[::ffff:127.0.0.1]:80": true,
		":8080":                 false, "0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.1:8080": false, "192.0.2.1:443": false,
		"example.com:80": false, "localhost.example.com:80": false, "127.0.0.1": false, "": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestRefuseNonLoopback: beyond loopback, New refuses to start without both TLS and a token, naming what is
// missing; nothing is bound (New listens nowhere).
func TestRefuseNonLoopback(t *testing.T) {
	cert, key := selfSigned(t)
	src := named(t, "m", golden("SVGP_gaussian"))
	for _, c := range []struct {
		name    string
		cfg     Config
		missing []string
	}{
		{"all interfaces", Config{Listen: ":8080"}, []string{"TLS", "token"}},
		{"public, token only", Config{Listen: "192.0.2.1:8080", Token: "t"}, []string{"TLS"}},
		{"public, TLS only", Config{Listen: "[2001:db8::1]:8080", TLSCert: cert, TLSKey: key}, []string{"token"}},
		{"gRPC public", Config{GRPCListen: "0.0.0.0:8081"}, []string{"TLS", "token"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Logger = discard
			_, err := New(c.cfg, src)
			var ie *InsecureListenError
			if !errors.As(err, &ie) || !slices.Equal(ie.Missing, c.missing) {
				t.Fatalf("New: %v, want an *InsecureListenError missing %v", err, c.missing)
			}
		})
	}
	// Serve applies the rule to the listener it is given too.
	s, err := New(Config{Logger: discard}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	var ie *InsecureListenError
	if err := s.Serve(fakeListener{addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 80}}); !errors.As(err, &ie) {
		t.Errorf("Serve on a public listener: %v", err)
	}
	// Half a TLS pair is a *ConfigError.
	var ce *ConfigError
	if _, err := New(Config{TLSCert: cert, Logger: discard}, src); !errors.As(err, &ce) {
		t.Errorf("certificate without key: %v", err)
	}
}

// fakeListener reports a public address and accepts nothing (no traffic ever goes beyond loopback).
type fakeListener struct{ addr net.Addr }

func (f fakeListener) Accept() (net.Conn, error) { return nil, errors.New("fake") }
func (f fakeListener) Close() error              { return nil }
func (f fakeListener) Addr() net.Addr            { return f.addr }

// TestTLSAndToken: with TLS and a token, a public-looking address is accepted; the test serves it on loopback
// over HTTPS, and only requests with the token are answered.
func TestTLSAndToken(t *testing.T) {
	cert, key := selfSigned(t)
	s, err := New(Config{Listen: "192.0.2.1:8443", TLSCert: cert, TLSKey: key, Token: "tok", Logger: discard}, named(t, "m", golden("SVGP_gaussian")))
	if err != nil {
		t.Fatalf("New with TLS and token on a public address: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	defer func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + l.Addr().String()
	get := func(path, token string) int {
		req, _ := http.NewRequest("GET", url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if got := get("/v2/models/m", "tok"); got != 200 {
		t.Errorf("metadata with the token: %d", got)
	}
	if got := get("/v2/models/m", ""); got != 401 {
		t.Errorf("metadata without the token: %d", got)
	}
	if got := get("/v2/health/ready", ""); got != 200 {
		t.Errorf("ready without the token: %d", got)
	}
	// Plain HTTP to the TLS port is not answered as a request.
	if res, err := http.Get("http://" + l.Addr().String() + "/v2/models/m"); err == nil {
		if res.StatusCode == 200 {
			t.Error("plain HTTP answered 200")
		}
		res.Body.Close()
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key into a temporary directory.
func selfSigned(t *testing.T) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpzoo test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

func TestParseModelSource(t *testing.T) {
	for s, want := range map[string]ModelSource{
		"m=a.gpz":            {Name: "m", File: "a.gpz"},
		"kin8nm@v2=/x=y.gpz": {Name: "kin8nm", Version: "v2", File: "/x=y.gpz"},
	} {
		got, err := ParseModelSource(s)
		if err != nil || got != want {
			t.Errorf("ParseModelSource(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"a.gpz", "=a.gpz", "m=", "m@=a.gpz", "a/b=x.gpz", "-m=x.gpz", "m@v/1=x.gpz", "m n=x.gpz"} {
		var se *SourceError
		if _, err := ParseModelSource(s); !errors.As(err, &se) {
			t.Errorf("ParseModelSource(%q): %v, want a *SourceError", s, err)
		}
	}
}
