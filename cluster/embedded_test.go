package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The embedded server listens on loopback by default and refuses malformed listen addresses (beyond loopback:
// TestEmbeddedBeyondLoopback).
func TestEmbeddedListen(t *testing.T) {
	e, err := StartEmbedded(EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Loopback || !strings.HasPrefix(e.URL, "nats://127.0.0.1:") {
		t.Errorf("default server: URL %s, loopback %v", e.URL, e.Loopback)
	}
	nc, err := Connect(e.URL, "t", Security{})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	e.Shutdown()

	for _, bad := range []string{"4222", ":4222", "127.0.0.1:http", "127.0.0.1:70000"} {
		if _, err := StartEmbedded(EmbeddedConfig{Listen: bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("listen %q: %v", bad, err)
		}
	}

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
