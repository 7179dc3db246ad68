package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"io/fs"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// pki are the PEM files of a test CA, a server certificate it signed (for 127.0.0.1, ::1 and localhost) and a
// client certificate it signed.
type pki struct{ CA, Cert, Key, ClientCert, ClientKey string }

// newPKI generates a test PKI in a temporary folder: ECDSA P-256 keys and X.509 certificates from the standard
// library (test fixtures; the connections themselves use crypto/tls through NATS).
func newPKI(t testing.TB) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpzoo test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, kind string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, DNSNames: []string{"localhost"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	p := pki{CA: write("ca.pem", "CERTIFICATE", caDER)}
	p.Cert, p.Key = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.ClientCert, p.ClientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

// asyncErrors collects a connection's asynchronous errors (permission violations).
type asyncErrors struct {
	mu   sync.Mutex
	errs []error
}

func (a *asyncErrors) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	a.mu.Lock()
	a.errs = append(a.errs, err)
	a.mu.Unlock()
}

// violation waits up to a second for a permissions violation naming subject.
func (a *asyncErrors) violation(subject string) error {
	for range 100 {
		a.mu.Lock()
		for _, err := range a.errs {
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subject) {
				a.mu.Unlock()
				return err
			}
		}
		a.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// connectWatched is Connect with an error handler recording asynchronous errors.
func connectWatched(t *testing.T, url, name string, sec Security) (*nats.Conn, *asyncErrors) {
	t.Helper()
	nc, err := Connect(url, name, sec)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(nc.Close)
	a := &asyncErrors{}
	nc.SetErrorHandler(a.handler)
	return nc, a
}

// Files are read before anything connects, with typed errors: missing, malformed, conflicting.
func TestSecurityFiles(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.nk")
	bad := filepath.Join(dir, "bad.nk")
	if err := os.WriteFile(bad, []byte("SUNOTASEED\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("no certificate here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids, err := IssueIdentities("files", 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	good := ids.Workers[0].SeedFile
	var fe *FileError
	if err := (Security{NKeyFile: missing}).Check(); !errors.As(err, &fe) || !errors.Is(err, fs.ErrNotExist) || fe.Path != missing {
		t.Errorf("missing seed file: %v", err)
	}
	if err := (Security{NKeyFile: bad}).Check(); !errors.As(err, &fe) || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), bad) {
		t.Errorf("malformed seed file: %v", err)
	}
	if err := (Security{CredsFile: bad}).Check(); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed credentials file: %v", err)
	}
	if err := (Security{TLSCA: notPEM}).Check(); !errors.Is(err, ErrMalformed) {
		t.Errorf("a CA file without a certificate: %v", err)
	}
	if err := (Security{TLSCA: missing}).Check(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing CA file: %v", err)
	}
	for _, s := range []Security{{NKeyFile: good, CredsFile: good}, {NKeyFile: good, Token: "t"}, {TLSCert: notPEM}} {
		if err := s.Check(); !errors.Is(err, ErrSecurityConflict) {
			t.Errorf("%+v: %v, want ErrSecurityConflict", s, err)
		}
	}
	if err := (Security{NKeyFile: good}).Check(); err != nil {
		t.Errorf("an issued seed file: %v", err)
	}
	p := newPKI(t)
	if err := (Security{TLSCert: p.ClientCert, TLSKey: p.Cert}).Check(); !errors.Is(err, ErrMalformed) {
		t.Errorf("a certificate with another certificate as its key: %v", err)
	}

	// The flags: the token from the environment is ignored with --nkey, refused with --token-file and --nkey.
	t.Setenv(EnvToken, "env-token")
	parse := func(args ...string) (Security, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		get := SecurityFlags(fs)
		if err := fs.Parse(args); err != nil {
			return Security{}, err
		}
		return get()
	}
	if s, err := parse("--nkey", good, "--tls-ca", p.CA); err != nil || s.Token != "" || s.NKeyFile != good || s.TLSCA != p.CA {
		t.Errorf("--nkey --tls-ca: %+v, %v", s, err)
	}
	if s, err := parse(); err != nil || s.Token != "env-token" {
		t.Errorf("no flags: %+v, %v", s, err)
	}
	tok := filepath.Join(dir, "tok")
	if err := os.WriteFile(tok, []byte("file-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parse("--nkey", good, "--token-file", tok); !errors.Is(err, ErrSecurityConflict) {
		t.Errorf("--nkey and --token-file: %v", err)
	}
	if _, err := parse("--nkey", missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--nkey of a missing file: %v", err)
	}
	s := Security{NKeyFile: good, TLSCA: p.CA, TLSCert: p.ClientCert, TLSKey: p.ClientKey, Token: "secret"}
	if a := strings.Join(s.Args(), " "); strings.Contains(a, "secret") || a != "--nkey "+good+" --tls-ca "+p.CA+" --tls-cert "+p.ClientCert+" --tls-key "+p.ClientKey {
		t.Errorf("Args: %s", a)
	}

	for url, want := range map[string]bool{"nats://127.0.0.1:4222": false, "localhost:4222": false, "nats://[::1]:1": false,
		"nats://127.0.0.1:1,nats://10.0.0.2:1": true, "tls://example.org:4222": true, "0.0.0.0:4222": true} {
		if got := beyondLoopback(url); got != want {
			t.Errorf("beyondLoopback(%q) = %v", url, got)
		}
	}
}

// IssueIdentities writes one seed file per worker and one for the server (mode 0600), each the seed of the
// user it returns, and never overwrites.
func TestIssueIdentities(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ids")
	ids, err := IssueIdentities("run-1", 3, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids.Workers) != 3 || ids.Run != "run-1" || len(ids.NkeyUsers()) != 4 {
		t.Fatalf("%d workers, run %q, %d users", len(ids.Workers), ids.Run, len(ids.NkeyUsers()))
	}
	seen := map[string]bool{}
	before := map[string][]byte{}
	for _, id := range append([]Identity{ids.Server}, ids.Workers...) {
		st, err := os.Stat(id.SeedFile)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", id.SeedFile, st.Mode().Perm())
		}
		b, _ := os.ReadFile(id.SeedFile)
		before[id.SeedFile] = b
		kp, err := nkeys.ParseDecoratedUserNKey(b)
		if err != nil {
			t.Fatalf("%s: %v", id.SeedFile, err)
		}
		pub, _ := kp.PublicKey()
		if pub != id.PublicKey || seen[pub] || !nkeys.IsValidPublicUserKey(pub) {
			t.Errorf("%s: public key %s, identity's %s (seen before: %v)", id.Name, pub, id.PublicKey, seen[pub])
		}
		seen[pub] = true
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("folder: %v, %v", st.Mode(), err)
	}
	if _, err := IssueIdentities("run-1", 5, dir); !errors.Is(err, ErrIdentityExists) {
		t.Fatalf("issuing again: %v, want ErrIdentityExists", err)
	}
	for f, b := range before {
		if now, _ := os.ReadFile(f); string(now) != string(b) {
			t.Errorf("%s was overwritten", f)
		}
	}
	if err := os.Remove(ids.ConfigFile); err != nil {
		t.Fatal(err)
	}
	if _, err := IssueIdentities("run-1", 3, dir); !errors.Is(err, ErrIdentityExists) {
		t.Fatalf("issuing again with the seed files there: %v, want ErrIdentityExists", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run-1-worker-4.nk")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused issue wrote a new file: %v", err)
	}
	for _, c := range []struct {
		run string
		k   int
	}{{"a.b", 1}, {"a>", 1}, {"ok", 0}} {
		if _, err := IssueIdentities(c.run, c.k, dir); err == nil {
			t.Errorf("run %q, %d workers: no error", c.run, c.k)
		}
	}
}

// The NATS server confines each identity to its run: a worker cannot publish to another run's subjects, nor
// read other workers' gradients or publish parameters; clients without an identity, with a key the server does
// not know, or with a token are refused.
func TestIdentityPermissions(t *testing.T) {
	dir := t.TempDir()
	a, err := IssueIdentities("a", 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := IssueIdentities("b", 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartEmbedded(EmbeddedConfig{Users: a.NkeyUsers(), Token: "t"}); !errors.Is(err, ErrSecurityConflict) {
		t.Errorf("a token with users: %v, want ErrSecurityConflict", err)
	}
	e, err := StartEmbedded(EmbeddedConfig{Users: append(a.NkeyUsers(), b.NkeyUsers()...)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()

	stranger, err := IssueIdentities("stranger", 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Security{"no identity": {}, "an unknown key": {NKeyFile: stranger.Workers[0].SeedFile}, "a token": {Token: "t"}} {
		if nc, err := Connect(e.URL, name, s); err == nil || !errors.Is(err, nats.ErrAuthorization) {
			if nc != nil {
				nc.Close()
			}
			t.Errorf("%s: %v, want an authorization violation", name, err)
		}
	}

	serverB, _ := connectWatched(t, e.URL, "server-b", Security{NKeyFile: b.Server.SeedFile, InboxPrefix: InboxPrefix("b")})
	workerB, _ := connectWatched(t, e.URL, "worker-b0", Security{NKeyFile: b.Workers[0].SeedFile, InboxPrefix: InboxPrefix("b")})
	workerA, errsA := connectWatched(t, e.URL, "worker-a0", Security{NKeyFile: a.Workers[0].SeedFile, InboxPrefix: InboxPrefix("a")})
	sb := subjectsOf("b")
	got, err := serverB.SubscribeSync(sb.grad)
	if err != nil {
		t.Fatal(err)
	}
	if err := serverB.Flush(); err != nil {
		t.Fatal(err)
	}
	// Run a's worker publishes to run b's gradients: the server refuses it (a permissions violation) and b's
	// server never sees it. Then b's own worker's gradient arrives, and nothing else.
	if err := workerA.Publish(sb.grad, []byte("from a")); err != nil {
		t.Fatal(err)
	}
	if err := workerA.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := errsA.violation(sb.grad); err == nil {
		t.Errorf("no permissions violation for worker a0 publishing to %s", sb.grad)
	}
	if err := workerB.Publish(sb.grad, []byte("from b")); err != nil {
		t.Fatal(err)
	}
	m, err := got.NextMsg(2 * time.Second)
	if err != nil || string(m.Data) != "from b" {
		t.Fatalf("b's server received %v, %v; want b's worker's gradient", m, err)
	}
	if m, err := got.NextMsg(100 * time.Millisecond); err == nil {
		t.Errorf("b's server received %q", m.Data)
	}
	// Subscriptions outside the worker's permissions (another run's parameters, its own run's gradients) and
	// publications of parameters are refused.
	sa := subjectsOf("a")
	// The exact GP's kernel products (products.go): a worker reads its run's tasks, never another run's nor the
	// other workers' results, and publishes results, never tasks.
	pa, pb := productSubjectsOf("a"), productSubjectsOf("b")
	for _, subj := range []string{sb.params, sa.grad, "gpzoo.cluster.>", "_INBOX.>", pa.result, pb.task} {
		if _, err := workerA.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		if err := errsA.violation(subj); err == nil {
			t.Errorf("worker a0 subscribed to %s without a permissions violation", subj)
		}
	}
	for _, subj := range []string{sa.params, sa.ctl + "x", sb.join, pa.task, pb.result, pb.join} {
		if err := workerA.Publish(subj, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := errsA.violation(subj); err == nil {
			t.Errorf("worker a0 published to %s without a permissions violation", subj)
		}
	}
	// What a worker needs works: a request on its run's join subject, answered in its inbox.
	serverA, errsSA := connectWatched(t, e.URL, "server-a", Security{NKeyFile: a.Server.SeedFile, InboxPrefix: InboxPrefix("a")})
	sub, err := serverA.Subscribe(sa.join, func(m *nats.Msg) { _ = m.Respond([]byte("welcome")) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := serverA.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := workerA.Request(sa.join, []byte("join"), 2*time.Second); err != nil || string(m.Data) != "welcome" {
		t.Errorf("worker a0's join request: %v, %v", m, err)
	}
	// The server's identity is confined to its run too.
	if err := serverA.Publish(sb.params, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := errsSA.violation(sb.params); err == nil {
		t.Errorf("server a published to %s without a permissions violation", sb.params)
	}
}

// TLS: a client with the CA connects; one without it fails its handshake; with client verification, a client
// needs a certificate the CA signed.
func TestEmbeddedTLS(t *testing.T) {
	p := newPKI(t)
	e, err := StartEmbedded(EmbeddedConfig{TLSCert: p.Cert, TLSKey: p.Key})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	nc, err := Connect(e.URL, "t", Security{TLSCA: p.CA})
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	if !nc.TLSRequired() {
		t.Error("the connection is not TLS")
	}
	if st, err := nc.TLSConnectionState(); err != nil || !st.HandshakeComplete {
		t.Errorf("TLS state: %+v, %v", st, err)
	}
	nc.Close()
	if nc, err := Connect(e.URL, "t", Security{}); err == nil {
		nc.Close()
		t.Error("a client without the CA connected")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA: %v (want a certificate error)", err)
	}

	if _, err := StartEmbedded(EmbeddedConfig{TLSCert: p.Cert, TLSKey: p.Key, TLSVerifyClients: true}); !errors.Is(err, ErrSecurityConflict) {
		t.Errorf("verifying clients without a CA: %v", err)
	}
	if _, err := StartEmbedded(EmbeddedConfig{TLSCert: p.Cert, TLSKey: filepath.Join(t.TempDir(), "none")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing key file: %v", err)
	}
	v, err := StartEmbedded(EmbeddedConfig{TLSCert: p.Cert, TLSKey: p.Key, TLSCA: p.CA, TLSVerifyClients: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Shutdown()
	if nc, err := Connect(v.URL, "t", Security{TLSCA: p.CA}); err == nil {
		nc.Close()
		t.Error("a client without a certificate connected to a verifying server")
	}
	nc, err = Connect(v.URL, "t", Security{TLSCA: p.CA, TLSCert: p.ClientCert, TLSKey: p.ClientKey})
	if err != nil {
		t.Fatalf("a client with a certificate: %v", err)
	}
	nc.Close()
}

// Beyond loopback the embedded server refuses to start without TLS and authentication, naming what is
// missing; with both, clients need the CA and the token.
func TestEmbeddedBeyondLoopback(t *testing.T) {
	p := newPKI(t)
	ids, err := IssueIdentities("r", 1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg     EmbeddedConfig
		missing []error
	}{
		{EmbeddedConfig{Listen: "0.0.0.0:0"}, []error{ErrNoTLS, ErrNoAuth}},
		{EmbeddedConfig{Listen: "0.0.0.0:0", Token: "s3cret"}, []error{ErrNoTLS}},
		{EmbeddedConfig{Listen: "0.0.0.0:0", Users: ids.NkeyUsers()}, []error{ErrNoTLS}},
		{EmbeddedConfig{Listen: "0.0.0.0:0", TLSCert: p.Cert, TLSKey: p.Key}, []error{ErrNoAuth}},
		{EmbeddedConfig{Listen: "0.0.0.0:0", TLSCert: p.Cert, Token: "s3cret"}, []error{ErrNoTLS}},
	} {
		_, err := StartEmbedded(c.cfg)
		if !errors.Is(err, ErrInsecureListen) {
			t.Errorf("%+v: %v, want ErrInsecureListen", c.cfg, err)
			continue
		}
		for _, m := range []error{ErrNoTLS, ErrNoAuth} {
			if errors.Is(err, m) != slices.Contains(c.missing, m) {
				t.Errorf("%+v: %v (missing %v)", c.cfg, err, c.missing)
			}
		}
	}
	e, err := StartEmbedded(EmbeddedConfig{Listen: "0.0.0.0:0", Token: "s3cret", TLSCert: p.Cert, TLSKey: p.Key})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	if e.Loopback {
		t.Error("every interface reported as loopback")
	}
	port := e.srv.Addr().(*net.TCPAddr).Port
	local := "nats://127.0.0.1:" + strconv.Itoa(port)
	for name, s := range map[string]Security{"no token": {TLSCA: p.CA}, "a wrong token": {TLSCA: p.CA, Token: "wrong"}, "no CA": {Token: "s3cret"}} {
		if nc, err := Connect(local, name, s); err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		}
	}
	nc, err := Connect(local, "t", Security{TLSCA: p.CA, Token: "s3cret"})
	if err != nil {
		t.Fatalf("the CA and the token: %v", err)
	}
	nc.Close()
}

// A run trains with per-worker identities over TLS; a client with another run's identity cannot reach it, and
// garbage and gradients from a client that did not join, sent with a valid identity of the run, are refused
// and counted, never applied.
func TestLocalIdentitiesOverTLS(t *testing.T) {
	p := newPKI(t)
	dir := t.TempDir()
	ids, err := IssueIdentities("secure", 2, dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := IssueIdentities("other", 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	model := newTestModel(t, 5)
	size := 0
	for _, q := range model.Params() {
		size += len(q.Raw())
	}
	c := testConfig(2, 0, 6, 0)
	c.Server.Job.Run = "secure"
	c.Identities = ids
	c.Security = Security{TLSCA: p.CA}
	c.Embedded = EmbeddedConfig{TLSCert: p.Cert, TLSKey: p.Key, Users: append(ids.NkeyUsers(), other.NkeyUsers()...)}
	var rogueErrs, strangerErrs *asyncErrors
	var url string
	spawn := InProcess(nil)
	c.Spawn = func(a WorkerArgs) (Proc, error) {
		url = a.URL
		if a.Security.NKeyFile != ids.Workers[a.Shard].SeedFile || a.Security.TLSCA != p.CA {
			t.Errorf("worker %d's security: %+v", a.Shard, a.Security)
		}
		return spawn(a)
	}
	s := subjectsOf("secure")
	c.Server.OnUpdate = func(v int) {
		if v != 2 {
			return
		}
		rogue, re := connectWatched(t, url, "rogue", Security{TLSCA: p.CA, NKeyFile: ids.Workers[1].SeedFile, InboxPrefix: InboxPrefix("secure")})
		stranger, se := connectWatched(t, url, "stranger", Security{TLSCA: p.CA, NKeyFile: other.Workers[0].SeedFile})
		rogueErrs, strangerErrs = re, se
		nan := make([]float64, size)
		nan[1] = math.NaN()
		for _, m := range []any{gradMsg{ID: "never-joined", Shard: 0, Version: v, Points: 1, ShardN: 1, Grad: make([]float64, size)},
			gradMsg{ID: "never-joined", Grad: nan}} {
			data, err := encode(m)
			if err != nil {
				t.Error(err)
			}
			_ = rogue.Publish(s.grad, data)
		}
		_ = rogue.Publish(s.grad, []byte("not gob"))
		_ = stranger.Publish(s.grad, []byte("not gob either"))
		_ = rogue.Flush()
		_ = stranger.Flush()
	}
	res, err := localADVGP(model, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates != 6 || res.Invalid != 2 || res.Unknown != 1 {
		t.Errorf("%d updates, %d invalid, %d unknown; want 6, 2 (NaN, not gob; the other run's never reached the server), 1", res.Updates, res.Invalid, res.Unknown)
	}
	if strangerErrs == nil || strangerErrs.violation(s.grad) == nil {
		t.Error("no permissions violation for another run's worker")
	}
	if rogueErrs != nil && len(rogueErrs.errs) != 0 {
		t.Errorf("the run's own identity was refused: %v", rogueErrs.errs)
	}
}

// Worker processes get their identity and TLS files on their command line (Security.Args) and train.
func TestWorkerProcessesWithIdentities(t *testing.T) {
	p := newPKI(t)
	ids, err := IssueIdentities("procs", 2, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := testConfig(2, 0, 4, 0)
	c.Server.Job.Run = "procs"
	c.Identities = ids
	c.Security = Security{TLSCA: p.CA}
	c.Embedded = EmbeddedConfig{TLSCert: p.Cert, TLSKey: p.Key}
	c.Spawn = processes(t)
	res, err := localADVGP(newTestModel(t, 5), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates != 4 || res.Gradients() != 8 {
		t.Errorf("%d updates from %d gradients, want 4 from 8", res.Updates, res.Gradients())
	}
}

// The identities' NATS configuration block, loaded by an external NATS server (nats-server's own parser),
// admits the run's identities with their permissions and nobody else.
func TestIdentitiesNATSConfig(t *testing.T) {
	dir := t.TempDir()
	ids, err := IssueIdentities("ext", 2, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ids.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range append([]Identity{ids.Server}, ids.Workers...) {
		sb, _ := os.ReadFile(id.SeedFile)
		kp, err := nkeys.ParseDecoratedUserNKey(sb)
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		if strings.Contains(string(b), string(seed)) || !strings.Contains(string(b), id.PublicKey) {
			t.Errorf("%s: the configuration holds its seed or lacks its public key:\n%s", id.Name, b)
		}
	}
	conf := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(conf, []byte("port: -1\nhost: 127.0.0.1\ninclude ./ext-nats.conf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := natsserver.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(opts.Nkeys) != 3 || opts.Nkeys[1].Nkey != ids.Workers[0].PublicKey ||
		!slices.Equal(opts.Nkeys[1].Permissions.Publish.Allow, WorkerPermissions("ext").Publish.Allow) ||
		!slices.Equal(opts.Nkeys[0].Permissions.Subscribe.Allow, ServerPermissions("ext").Subscribe.Allow) {
		t.Fatalf("users %+v", opts.Nkeys)
	}
	opts.NoLog, opts.NoSigs = true, true
	srv, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the server did not start")
	}
	url := srv.ClientURL()
	if nc, err := Connect(url, "nobody", Security{}); err == nil {
		nc.Close()
		t.Error("a client without an identity connected")
	}
	w, errs := connectWatched(t, url, "worker", Security{NKeyFile: ids.Workers[1].SeedFile, InboxPrefix: InboxPrefix("ext")})
	if err := w.Publish(subjectsOf("other").grad, nil); err != nil {
		t.Fatal(err)
	}
	if errs.violation(subjectsOf("other").grad) == nil {
		t.Error("no permissions violation for another run's subject")
	}
	if err := w.Publish(subjectsOf("ext").grad, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if errs.violation(subjectsOf("ext").grad) != nil {
		t.Error("a permissions violation for the run's own gradient subject")
	}
}

// A restarted server takes its run's identities again (LoadIdentities): the same public keys and permissions
// as issued; a missing or malformed seed file is a FileError.
func TestLoadIdentities(t *testing.T) {
	dir := t.TempDir()
	issued, err := IssueIdentities("again", 2, dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadIdentities("again", 2, dir)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Server.PublicKey != issued.Server.PublicKey || len(loaded.Workers) != 2 ||
		loaded.Workers[1].PublicKey != issued.Workers[1].PublicKey || loaded.Workers[1].SeedFile != issued.Workers[1].SeedFile ||
		!slices.Equal(loaded.Workers[0].Permissions.Publish.Allow, issued.Workers[0].Permissions.Publish.Allow) {
		t.Errorf("loaded %+v, issued %+v", loaded, issued)
	}
	if _, err := LoadIdentities("again", 3, dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a third worker's missing seed: %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(issued.Workers[0].SeedFile, []byte("# comment\nnot a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var fe *FileError
	if _, err := LoadIdentities("again", 2, dir); !errors.Is(err, ErrMalformed) || !errors.As(err, &fe) {
		t.Errorf("a malformed seed: %v, want a FileError wrapping ErrMalformed", err)
	}
}

// A worker started before its server connects once the server listens (ConnectWithin); its own bad files fail
// at once, and an absent server after the time given.
func TestConnectWithin(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	started := make(chan *Embedded, 1)
	go func() {
		time.Sleep(700 * time.Millisecond)
		e, err := StartEmbedded(EmbeddedConfig{Listen: addr})
		if err != nil {
			t.Error(err)
		}
		started <- e
	}()
	t0 := time.Now()
	nc, err := ConnectWithin("nats://"+addr, "early", Security{}, 20*time.Second, nil)
	if err != nil {
		t.Fatalf("connecting before the server started: %v", err)
	}
	nc.Close()
	if e := <-started; e != nil {
		defer e.Shutdown()
	}
	if d := time.Since(t0); d < 500*time.Millisecond {
		t.Errorf("connected after %v, before the server started", d)
	}
	if _, err := ConnectWithin("nats://"+addr, "bad", Security{NKeyFile: filepath.Join(t.TempDir(), "missing.nk")}, time.Minute, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing seed file: %v", err)
	}
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := l2.Addr().String()
	l2.Close()
	if _, err := ConnectWithin("nats://"+gone, "late", Security{}, 600*time.Millisecond, nil); err == nil {
		t.Error("connected to no server")
	}
}
