package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/serve"
)

// TestServeRefusals: gpzoo serve refuses, before loading anything, to listen beyond loopback without TLS and a
// token (REST and gRPC alike), to take the token on its command line, and to start without models.
func TestServeRefusals(t *testing.T) {
	golden := filepath.Join("..", "gp", "modelfile", "testdata", "golden", "SVGP_gaussian.gpz")
	tok := filepath.Join(t.TempDir(), "tok")
	writeFile(t, tok, "secret\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"public REST, nothing", []string{"--model", "m=" + golden, "--listen", "0.0.0.0:0"}, "TLS and token missing"},
		{"public REST, token only", []string{"--model", "m=" + golden, "--listen", "0.0.0.0:0", "--token-file", tok}, "TLS missing"},
		{"public gRPC", []string{"--model", "m=" + golden, "--grpc-listen", "[::]:0"}, "not a loopback address"},
		{"token on the command line", []string{"--model", "m=" + golden, "--token", "secret"}, "flag provided but not defined"},
		{"no models", nil, "give --model"},
		{"bad source", []string{"--model", "m"}, "NAME[@VERSION]=FILE"},
		{"missing file", []string{"--model", "m=" + filepath.Join(t.TempDir(), "none.gpz")}, "no such file"},
		{"empty token file", []string{"--model", "m=" + golden, "--token-file", writeFile(t, filepath.Join(t.TempDir(), "empty"), "")}, "is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Main(append([]string{"serve"}, c.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error()+errOut.String(), c.want) {
				t.Fatalf("err %v (stderr %q), want one saying %q", err, errOut.String(), c.want)
			}
		})
	}
	var insecure *serve.InsecureListenError
	err := Main([]string{"serve", "--model", "m=" + golden, "--listen", "0.0.0.0:8080"}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.As(err, &insecure) {
		t.Fatalf("a public address: %v, want a *serve.InsecureListenError", err)
	}
}

// writeFile writes content to path and returns path.
func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
