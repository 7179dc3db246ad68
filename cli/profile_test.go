package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfileEnv: $GPZOO_CPUPROFILE profiles any command into a new file, and never replaces one.
func TestCPUProfileEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.prof")
	t.Setenv(EnvCPUProfile, path)
	if err := Main([]string{"list"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("no profile written: %v", err)
	}
	if err := Main([]string{"list"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("an existing profile file was replaced")
	}
}
