package cluster

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netLab is a test's own little network on this machine: network namespaces (named gpzt-PID-…, so that
// concurrent test runs never meet) joined by veth pairs with addresses in 10.231.X.0/24 (X from the process
// id). Everything it creates is deleted at the test's end, failed or not, and every process still running
// inside its namespaces is killed first. Only the namespaces' loopback and the veths between them are used:
// nothing reaches the host's own network.
type netLab struct {
	t      testing.TB
	prefix string
	subnet int // X of 10.231.X.0/24
	ns     []string
	links  int
}

// newNetLab returns an empty lab, or skips the test with one line when this process cannot build one (not
// root, or no ip command). Under CI=true (CI runs as root) it fails instead: CI must never skip it.
func newNetLab(t testing.TB) *netLab {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root (network namespaces and veth pairs)"
	} else if _, err := exec.LookPath("ip"); err != nil {
		why = "needs the ip command (iproute2)"
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the network-namespace test %s, and CI=true must run it", why)
		}
		t.Skipf("the network-namespace test %s", why)
	}
	pid := os.Getpid()
	l := &netLab{t: t, prefix: fmt.Sprintf("gpzt-%d-", pid), subnet: 1 + pid%250}
	t.Cleanup(l.destroy)
	return l
}

// ip runs the ip command with args and fails the test on error.
func (l *netLab) ip(args ...string) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// addNS creates the namespace prefix+name with its loopback up and returns its full name.
func (l *netLab) addNS(name string) string {
	l.t.Helper()
	full := l.prefix + name
	l.ip("netns", "add", full)
	l.ns = append(l.ns, full)
	l.ip("-n", full, "link", "set", "lo", "up")
	return full
}

// link joins namespaces a and b by a veth pair on a /30 of the lab's /24 (the link's own two addresses:
// a point-to-point link needs no routes) and returns a's and b's addresses.
func (l *netLab) link(a, b string) (addrA, addrB string) {
	l.t.Helper()
	k := l.links
	l.links++
	if k >= 60 {
		l.t.Fatal("netLab: at most 60 links in a /24")
	}
	addrA = fmt.Sprintf("10.231.%d.%d", l.subnet, 4*k+1)
	addrB = fmt.Sprintf("10.231.%d.%d", l.subnet, 4*k+2)
	devA, devB := fmt.Sprintf("gz%d-a", k), fmt.Sprintf("gz%d-b", k)
	l.ip("-n", a, "link", "add", devA, "type", "veth", "peer", "name", devB, "netns", b)
	l.ip("-n", a, "addr", "add", addrA+"/30", "dev", devA)
	l.ip("-n", b, "addr", "add", addrB+"/30", "dev", devB)
	l.ip("-n", a, "link", "set", devA, "up")
	l.ip("-n", b, "link", "set", devB, "up")
	return addrA, addrB
}

// destroy kills every process left in the lab's namespaces and deletes the namespaces (their veths go with
// them). It reports what it could not undo.
func (l *netLab) destroy() {
	for _, ns := range l.ns {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	for _, ns := range l.ns {
		var err error
		for range 20 { // a killed process may hold the namespace for a moment
			var out []byte
			if out, err = exec.Command("ip", "netns", "del", ns).CombinedOutput(); err == nil {
				break
			} else {
				err = fmt.Errorf("%v: %s", err, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			l.t.Errorf("netLab: deleting namespace %s: %v", ns, err)
		}
	}
}

// in runs f on an OS thread that has entered namespace ns: sockets f creates (listeners, dials) belong to ns
// for their whole life. The thread returns to this process's namespace afterwards; if it cannot, it is not
// handed back to the Go runtime (which then ends it).
func (l *netLab) in(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return // the thread was not moved: ending the goroutine unlocks nothing harmful
		}
		defer self.Close()
		target, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("returning from %s: %w", ns, err))
			return // still locked: the runtime ends this thread with the goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// nsDialer dials from inside a namespace (nats.SetCustomDialer takes it).
type nsDialer struct {
	lab *netLab
	ns  string
}

func (d nsDialer) Dial(network, address string) (net.Conn, error) {
	var c net.Conn
	err := d.lab.in(d.ns, func() error {
		var err error
		c, err = net.DialTimeout(network, address, 5*time.Second)
		return err
	})
	return c, err
}

// listen opens a TCP listener inside namespace ns.
func (l *netLab) listen(ns, addr string) net.Listener {
	l.t.Helper()
	var ln net.Listener
	if err := l.in(ns, func() error {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err
	}); err != nil {
		l.t.Fatalf("listening on %s in %s: %v", addr, ns, err)
	}
	l.t.Cleanup(func() { ln.Close() })
	return ln
}

// nsProc is a process started inside a namespace, its standard error read line by line (the server's
// structured log) and its standard output kept.
type nsProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's, once done is closed

	mu     sync.Mutex
	lines  []string
	stdout strings.Builder
	seen   chan struct{} // closed and replaced on every new line
}

// start runs name with args inside ns (ip netns exec), with env added to this process's environment, ended by
// ctx's deadline at the latest.
func (l *netLab) start(ctx context.Context, ns, label string, env []string, name string, args ...string) *nsProc {
	l.t.Helper()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 2 * time.Second
	p := &nsProc{name: label, cmd: cmd, done: make(chan struct{}), seen: make(chan struct{})}
	cmd.Stdout = &lockedWriter{p: p}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		l.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("starting %s in %s: %v", label, ns, err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.seen)
			p.seen = make(chan struct{})
			p.mu.Unlock()
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	l.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

type lockedWriter struct{ p *nsProc }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.stdout.Write(b)
}

// kill sends SIGKILL (a crash: no checkpoint, no goodbye) and waits for the process to end.
func (p *nsProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// wait waits for the process to end within d and returns its error.
func (p *nsProc) wait(d time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		return fmt.Errorf("%s still running after %v", p.name, d)
	}
}

// count returns the number of standard-error lines matching re.
func (p *nsProc) count(re *regexp.Regexp) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, s := range p.lines {
		if re.MatchString(s) {
			n++
		}
	}
	return n
}

// await waits up to d for a standard-error line on which ok holds (ok sees every line, old and new), and
// reports whether one came before the process ended or d passed.
func (p *nsProc) await(d time.Duration, ok func(line string) bool) bool {
	deadline := time.After(d)
	next := 0
	for {
		p.mu.Lock()
		lines, seen := p.lines[next:], p.seen
		next = len(p.lines)
		p.mu.Unlock()
		for _, s := range lines {
			if ok(s) {
				return true
			}
		}
		select {
		case <-seen:
		case <-p.done:
			p.mu.Lock()
			rest := p.lines[next:]
			p.mu.Unlock()
			for _, s := range rest {
				if ok(s) {
					return true
				}
			}
			return false
		case <-deadline:
			return false
		}
	}
}

// output returns the process's standard output and the last n lines of its standard error (for failure
// messages).
func (p *nsProc) output(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	tail := p.lines[max(0, len(p.lines)-n):]
	return fmt.Sprintf("%s stdout:\n%s\n%s stderr (last %d lines):\n%s", p.name, p.stdout.String(), p.name, len(tail), strings.Join(tail, "\n"))
}

// updateRe reads the update number of the server's log lines that carry one (evaluations, drops).
var updateRe = regexp.MustCompile(`(?:update|version)=(\d+)`)

// atUpdate returns a line predicate: the server's log reached update ≥ v.
func atUpdate(v int) func(string) bool {
	return func(s string) bool {
		m := updateRe.FindStringSubmatch(s)
		if m == nil {
			return false
		}
		n, _ := strconv.Atoi(m[1])
		return n >= v
	}
}

// buildGpzoo builds the gpzoo command into the test's temporary folder (once per test: every process of the
// lab runs that binary).
func buildGpzoo(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "gpzoo")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", path, "../cmd/gpzoo").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/gpzoo: %v: %s", err, out)
	}
	return path
}

// netnsPKI is a test certificate authority and a server certificate it signed for the given IP addresses (the
// names clients put in their URLs: here the server's and the proxy's addresses, since TLS runs end to end
// through the proxy), as PEM files in a temporary folder.
type netnsPKI struct{ CA, Cert, Key string }

func newNetnsPKI(t testing.TB, ips ...string) netnsPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpzoo netns test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(cryptorand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "gpzoo netns test server"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, ip := range ips {
		leaf.IPAddresses = append(leaf.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := netnsPKI{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server-key.pem")}
	for _, f := range []struct {
		path, kind string
		der        []byte
	}{{p.CA, "CERTIFICATE", caDER}, {p.Cert, "CERTIFICATE", der}, {p.Key, "EC PRIVATE KEY", keyDER}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// tlsConfig is a client's TLS configuration trusting the test CA.
func (p netnsPKI) tlsConfig(t testing.TB) *tls.Config {
	t.Helper()
	b, err := os.ReadFile(p.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatal("the test CA file holds no certificate")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}
