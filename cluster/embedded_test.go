package cluster

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The embedded server listens on loopback by default; beyond loopback it refuses to start without a token, and
// with one it refuses clients that do not present it.
func TestEmbeddedListenAndToken(t *testing.T) {
	e, err := StartEmbedded(EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Loopback || !strings.HasPrefix(e.URL, "nats://127.0.0.1:") {
		t.Errorf("default server: URL %s, loopback %v", e.URL, e.Loopback)
	}
	nc, err := Connect(e.URL, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	e.Shutdown()

	if _, err := StartEmbedded(EmbeddedConfig{Listen: "0.0.0.0:0"}); !errors.Is(err, ErrNoToken) {
		t.Fatalf("every interface without a token: %v, want ErrNoToken", err)
	}
	for _, bad := range []string{"4222", ":4222", "127.0.0.1:http", "127.0.0.1:70000"} {
		if _, err := StartEmbedded(EmbeddedConfig{Listen: bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("listen %q: %v", bad, err)
		}
	}

	e, err = StartEmbedded(EmbeddedConfig{Listen: "0.0.0.0:0", Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	if e.Loopback || strings.Contains(e.URL, "0.0.0.0") {
		t.Errorf("every interface: URL %s, loopback %v", e.URL, e.Loopback)
	}
	u, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	local := "nats://127.0.0.1:" + u.Port()
	for _, tok := range []string{"", "wrong"} {
		if nc, err := Connect(local, "t", tok); err == nil {
			nc.Close()
			t.Errorf("token %q accepted", tok)
		}
	}
	nc, err = Connect(local, "t", "s3cret")
	if err != nil {
		t.Fatalf("the right token: %v", err)
	}
	nc.Close()
}

func TestReadToken(t *testing.T) {
	t.Setenv(EnvToken, "from-env")
	if tok, err := ReadToken(""); err != nil || tok != "from-env" {
		t.Errorf("env: %q, %v", tok, err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "tok")
	os.WriteFile(f, []byte("  abc\n"), 0o600)
	if tok, err := ReadToken(f); err != nil || tok != "abc" {
		t.Errorf("file: %q, %v", tok, err)
	}
	os.WriteFile(f, []byte("\n"), 0o600)
	if _, err := ReadToken(f); err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("empty file: %v", err)
	}
	if _, err := ReadToken(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
}
