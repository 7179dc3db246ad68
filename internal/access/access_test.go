package access

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.3.2.1:1": true, "[::1]:8080": true, "localhost:80": true, "LOCALHOST:80": true,
		"[::ffff:127.0.0.1]:80": true,
		":8080":                 false, "0.0.0.0:8080": false, "[::]:8080": false, "192.0.2.1:443": false,
		"example.com:80": false, "localhost.example.com:80": false, "127.0.0.1": false, "": false,
	} {
		if got := LoopbackAddr(addr); got != want {
			t.Errorf("LoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "[::1]": true, "::1": true, "localhost": true, "": false, "0.0.0.0": false} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GPZOO_TEST_TOKEN", " env-secret \n")
	if tok, err := ReadToken("", "GPZOO_TEST_TOKEN"); err != nil || tok != "env-secret" {
		t.Fatalf("from the environment: %q, %v", tok, err)
	}
	f := filepath.Join(dir, "tok")
	os.WriteFile(f, []byte("file-secret\n"), 0o600)
	if tok, err := ReadToken(f, "GPZOO_TEST_TOKEN"); err != nil || tok != "file-secret" {
		t.Fatalf("from a file: %q, %v", tok, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, err := ReadToken(empty, ""); err == nil {
		t.Fatal("an empty token file: no error")
	}
	if _, err := ReadToken(filepath.Join(dir, "none"), ""); err == nil {
		t.Fatal("a missing token file: no error")
	}
}
