package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// advgp serve's own flags are checked before anything starts, and errors name the flag or file at fault.
func TestADVGPServeFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-token")
	for _, c := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--port", "4223", "--listen", "127.0.0.1:4224"}, "--port and --listen"},
		{[]string{"--listen"}, "--listen needs a value"},
		{[]string{"--token-file", missing}, missing},
		{[]string{"--listen", "4222"}, `"4222"`},
		{[]string{"--listen", ":4222"}, "name the host"},
		{[]string{"--listen=127.0.0.1:99999"}, "99999"},
		{[]string{"--port", "x"}, "port"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"advgp", "serve", "kin40k/advgp", "--run", "r"}, c.args...)
		err := Main(args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%q: %v (want a message naming %q)", args, err, c.mention)
		}
	}
}
