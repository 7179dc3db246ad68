package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
)

// The security flags of advgp serve, work and local, and of train and run with --nats, are checked before anything
// starts: missing and malformed files, conflicting settings, and a listener beyond loopback without TLS (no
// identity file written then).
func TestADVGPSecurityFlags(t *testing.T) {
	data := datatest.Fake(t, "kin40k")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.nk")
	bad := filepath.Join(dir, "bad.nk")
	if err := os.WriteFile(bad, []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(dir, "tok")
	if err := os.WriteFile(tok, []byte("t0k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids := filepath.Join(dir, "ids")
	csv := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(csv, []byte("x,y\n0,1\n1,2\n2,2.5\n3,2\n4,1\n5,0.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		is   error
	}{
		{[]string{"advgp", "work", "--shard", "0/2", "--nkey", missing}, fs.ErrNotExist},
		{[]string{"advgp", "work", "--shard", "0/2", "--nkey", bad}, cluster.ErrMalformed},
		{[]string{"advgp", "work", "--shard", "0/2", "--tls-cert", tok}, cluster.ErrSecurityConflict},
		{[]string{"advgp", "serve", "kin40k/advgp", "--data", data, "--run", "r", "--creds", bad}, cluster.ErrMalformed},
		{[]string{"advgp", "serve", "kin40k/advgp", "--data", data, "--run", "r", "--listen", "0.0.0.0:0", "--token-file", tok}, cluster.ErrNoTLS},
		{[]string{"advgp", "serve", "kin40k/advgp", "--data", data, "--run", "r", "--listen", "0.0.0.0:0"}, cluster.ErrInsecureListen},
		{[]string{"advgp", "serve", "kin40k/advgp", "--data", data, "--run", "r", "--listen", "0.0.0.0:0", "--identities", ids}, cluster.ErrNoTLS},
		{[]string{"advgp", "local", "kin40k/advgp", "--data", data, "--nkey", missing}, fs.ErrNotExist},
		// train and run reach an external NATS server (--nats) with the same flags
		{[]string{"train", "--csv", csv, "--target", "y", "--workers", "1", "--nats", "nats://127.0.0.1:1", "--nkey", missing}, fs.ErrNotExist},
		{[]string{"train", "--csv", csv, "--target", "y", "--workers", "1", "--nats", "nats://127.0.0.1:1", "--tls-cert", tok}, cluster.ErrSecurityConflict},
		{[]string{"run", "kin40k/advgp", "--data", data, "--nats", "nats://127.0.0.1:1", "--creds", bad}, cluster.ErrMalformed},
	} {
		var out, errb bytes.Buffer
		if err := Main(c.args, &out, &errb); !errors.Is(err, c.is) {
			t.Errorf("%q: %v, want %v", c.args, err, c.is)
		}
	}
	if err := Main([]string{"advgp", "serve", "kin40k/advgp", "--data", data, "--run", "r", "--identities", ids, "--token-file", tok}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--identities excludes") {
		t.Errorf("--identities with --token-file: %v", err)
	}
	if entries, _ := os.ReadDir(ids); len(entries) != 0 {
		t.Errorf("a refused serve wrote %d identity files", len(entries))
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader at a time.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// advgp serve --identities issues one identity per worker and prints each worker's command with its --nkey; the
// workers started with those commands train the run to its end, and a second serve refuses to overwrite them.
func TestADVGPServeIdentities(t *testing.T) {
	data := datatest.Fake(t, "kin40k")
	ids := filepath.Join(t.TempDir(), "ids")
	args := []string{"advgp", "serve", "kin40k/advgp", "--data", data, "--run", "secure", "--workers", "2", "--iters", "3",
		"--listen", "127.0.0.1:0", "--identities", ids, "--quiet"}
	out := &syncBuffer{}
	served := make(chan error, 1)
	go func() { served <- Main(args, out, &bytes.Buffer{}) }()
	cmd := regexp.MustCompile(`gpzoo advgp work (.*)\n`)
	var cmds [][]string
	for deadline := time.Now().Add(30 * time.Second); len(cmds) < 2; {
		select {
		case err := <-served:
			t.Fatalf("serve ended before printing the workers' commands: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no workers' commands after 30 s:\n%s", out.String())
		}
		cmds = nil
		for _, m := range cmd.FindAllStringSubmatch(out.String(), -1) {
			cmds = append(cmds, strings.Fields(m[1]))
		}
		time.Sleep(20 * time.Millisecond)
	}
	var work [][]string
	for i, c := range cmds {
		if !strings.Contains(strings.Join(c, " "), "--nkey "+filepath.Join(ids, "secure-worker-")) {
			t.Fatalf("worker %d's command has no identity: %q", i, c)
		}
		st, err := os.Stat(c[slices.Index(c, "--nkey")+1])
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("worker %d's seed file: %v, %v", i, st, err)
		}
		work = append(work, append([]string{"advgp", "work"}, c...))
	}
	workToEnd(t, out, served, work)
	if !strings.Contains(out.String(), "test") {
		t.Errorf("no result printed:\n%s", out.String())
	}
	if err := Main(args, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, cluster.ErrIdentityExists) {
		t.Errorf("serving again into the same folder: %v, want ErrIdentityExists", err)
	}
}

// advgp identities writes a run's identities for an external NATS server and prints who gets which file.
func TestADVGPIdentities(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ids")
	var out bytes.Buffer
	if err := Main([]string{"advgp", "identities", "--run", "r1", "--workers", "2", "--out", dir}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"r1-server.nk", "r1-worker-0.nk", "r1-worker-1.nk", "r1-nats.conf"} {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err != nil || !strings.Contains(out.String(), p) {
			t.Errorf("%s: %v; output:\n%s", f, err, out.String())
		}
	}
	if err := Main([]string{"advgp", "identities", "--run", "r1", "--workers", "2", "--out", dir}, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, cluster.ErrIdentityExists) {
		t.Errorf("issuing again: %v, want ErrIdentityExists", err)
	}
	for _, args := range [][]string{{"--run", "r2", "--workers", "2"}, {"--run", "a.b", "--workers", "2", "--out", dir}, {"--run", "r3", "--out", dir}} {
		if err := Main(append([]string{"advgp", "identities"}, args...), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
