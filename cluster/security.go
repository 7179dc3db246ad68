package cluster

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/internal/access"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Security is how a client proves who it is to a NATS server and how its connection is protected. Everything
// is NATS's own mechanism (nats.go's options), nothing home-made: a user credentials file (a user JWT and its
// NKey seed, as nsc writes them) or an NKey seed file (IssueIdentities writes one per worker), or a token; TLS
// with the CA that signed the server's certificate and, when the server verifies clients, a client certificate.
// Beyond loopback Connect always uses TLS (with the system's roots when TLSCA is empty), so neither secrets
// nor parameters and gradients cross a network in clear.
type Security struct {
	// CredsFile is a NATS user credentials file (for an operator-mode NATS server); NKeyFile an NKey seed file
	// (a user of the server's nkey list: IssueIdentities' files). At most one of the two.
	CredsFile, NKeyFile string
	// TLSCA is a PEM file of the CA(s) the server's certificate must be signed by ("": the system's roots);
	// TLSCert and TLSKey, PEM files, are this client's certificate and key (servers that verify clients).
	TLSCA, TLSCert, TLSKey string
	// Token is NATS token authentication (ReadToken: a file or EnvToken, never the command line); it excludes
	// CredsFile and NKeyFile.
	Token string
	// InboxPrefix is the prefix of the connection's reply subjects ("": NATS's _INBOX). The workers and the
	// server of a run use InboxPrefix(run), which the permissions of IssueIdentities' identities allow and
	// confine to the run.
	InboxPrefix string
}

// ErrMalformed is wrapped by a FileError for a file that was read but does not hold what it should (an NKey
// seed file without a user seed, a PEM file without a certificate, ...).
var ErrMalformed = errors.New("malformed")

// ErrSecurityConflict is returned for Security settings that exclude each other.
var ErrSecurityConflict = errors.New("cluster: conflicting NATS security settings")

// FileError reports a security file that could not be used: missing or unreadable (Err wraps the
// operating system's error, errors.Is(err, fs.ErrNotExist) for a missing file) or malformed (ErrMalformed).
type FileError struct {
	// What names the file's role ("NKey seed file", "TLS CA file", ...), Path the file.
	What, Path string
	Err        error
}

func (e *FileError) Error() string { return fmt.Sprintf("cluster: %s %s: %v", e.What, e.Path, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// readFile reads a security file with a FileError for a missing or unreadable one.
func readFile(what, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &FileError{What: what, Path: path, Err: err}
	}
	return b, nil
}

func malformed(what, path string, err error) error {
	if err == nil {
		return &FileError{What: what, Path: path, Err: ErrMalformed}
	}
	return &FileError{What: what, Path: path, Err: fmt.Errorf("%w: %w", ErrMalformed, err)}
}

// Check reads every file s names and returns the first problem (a FileError or ErrSecurityConflict), so that
// a command fails before it starts anything.
func (s Security) Check() error {
	_, err := s.options(false)
	return err
}

// options returns nats.go's options for s; forceTLS makes the connection TLS even without TLS files.
func (s Security) options(forceTLS bool) ([]nats.Option, error) {
	if s.CredsFile != "" && s.NKeyFile != "" {
		return nil, fmt.Errorf("%w: a credentials file (--creds) and an NKey seed file (--nkey) exclude each other", ErrSecurityConflict)
	}
	if s.Token != "" && (s.CredsFile != "" || s.NKeyFile != "") {
		return nil, fmt.Errorf("%w: a token excludes --creds and --nkey", ErrSecurityConflict)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both --tls-cert and --tls-key", ErrSecurityConflict)
	}
	var opts []nats.Option
	switch {
	case s.CredsFile != "":
		b, err := readFile("NATS credentials file", s.CredsFile)
		if err != nil {
			return nil, err
		}
		if _, err := nkeys.ParseDecoratedJWT(b); err != nil {
			return nil, malformed("NATS credentials file", s.CredsFile, err)
		}
		kp, err := nkeys.ParseDecoratedUserNKey(b)
		if err != nil {
			return nil, malformed("NATS credentials file", s.CredsFile, err)
		}
		kp.Wipe()
		opts = append(opts, nats.UserCredentials(s.CredsFile))
	case s.NKeyFile != "":
		b, err := readFile("NKey seed file", s.NKeyFile)
		if err != nil {
			return nil, err
		}
		kp, err := nkeys.ParseDecoratedUserNKey(b)
		if err != nil {
			return nil, malformed("NKey seed file", s.NKeyFile, err)
		}
		kp.Wipe()
		o, err := nats.NkeyOptionFromSeed(s.NKeyFile)
		if err != nil {
			return nil, malformed("NKey seed file", s.NKeyFile, err)
		}
		opts = append(opts, o)
	case s.Token != "":
		opts = append(opts, nats.Token(s.Token))
	}
	if s.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(s.InboxPrefix))
	}
	if forceTLS || s.TLSCA != "" || s.TLSCert != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.TLSCA != "" {
			b, err := readFile("TLS CA file", s.TLSCA)
			if err != nil {
				return nil, err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(b) {
				return nil, malformed("TLS CA file", s.TLSCA, errors.New("no PEM certificate"))
			}
			cfg.RootCAs = pool
		}
		if s.TLSCert != "" {
			for _, f := range [][2]string{{"TLS certificate file", s.TLSCert}, {"TLS key file", s.TLSKey}} {
				if _, err := readFile(f[0], f[1]); err != nil {
					return nil, err
				}
			}
			cert, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
			if err != nil {
				return nil, malformed("TLS certificate and key", s.TLSCert+", "+s.TLSKey, err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, nats.Secure(cfg))
	}
	return opts, nil
}

// beyondLoopback reports whether any server of a NATS URL list ("nats://h:p,tls://h2:p", or bare HOST:PORT)
// is not on this machine's loopback (access.LoopbackHost).
func beyondLoopback(urls string) bool {
	for _, u := range strings.Split(urls, ",") {
		u = strings.TrimSpace(u)
		if !strings.Contains(u, "://") {
			u = "nats://" + u
		}
		p, err := url.Parse(u)
		if err != nil || !access.LoopbackHost(p.Hostname()) {
			return true
		}
	}
	return false
}

// Connect opens a NATS connection to url for gpzoo (reconnecting for as long as it takes) with sec's
// authentication and TLS. A server beyond loopback is always reached over TLS (verified against sec.TLSCA, or
// the system's roots): a server that does not offer TLS is refused.
func Connect(url, name string, sec Security) (*nats.Conn, error) {
	sopts, err := sec.options(beyondLoopback(url))
	if err != nil {
		return nil, err
	}
	opts := append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(200 * time.Millisecond)}, sopts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if errors.Is(err, nats.ErrSecureConnWanted) {
			return nil, fmt.Errorf("cluster: connecting to NATS at %s: the server does not offer TLS, which gpzoo requires beyond loopback: %w", url, err)
		}
		return nil, fmt.Errorf("cluster: connecting to NATS at %s: %w", url, err)
	}
	return nc, nil
}

// ReadToken returns the token held by file (surrounding white space removed), or, for file "", the value of
// EnvToken ("" when unset): access.ReadToken.
func ReadToken(file string) (string, error) {
	tok, err := access.ReadToken(file, EnvToken)
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	return tok, nil
}

// SecurityFlags registers the NATS security flags every gpzoo cluster command takes (--creds, --nkey, --tls-ca,
// --tls-cert, --tls-key, --token-file) on fs and returns the function that reads them after fs.Parse: the
// Security, its files checked (Check). The token comes from --token-file or EnvToken, never from the command
// line; EnvToken is ignored when --creds or --nkey is given.
func SecurityFlags(fs *flag.FlagSet) func() (Security, error) {
	creds := fs.String("creds", "", "NATS user credentials `file` (a user JWT and its NKey seed, as nsc writes them)")
	nkey := fs.String("nkey", "", "NKey seed `file` (one of those the server's --identities wrote)")
	ca := fs.String("tls-ca", "", "PEM `file` of the CA that signed the NATS server's certificate (default: the system's roots; beyond loopback TLS is always used)")
	cert := fs.String("tls-cert", "", "PEM `file` of this client's TLS certificate (for servers that verify clients)")
	key := fs.String("tls-key", "", "PEM `file` of this client's TLS key")
	tokenFile := fs.String("token-file", "", "`file` holding the NATS token (default: $"+EnvToken+")")
	return func() (Security, error) {
		s := Security{CredsFile: *creds, NKeyFile: *nkey, TLSCA: *ca, TLSCert: *cert, TLSKey: *key}
		if *tokenFile != "" || (s.CredsFile == "" && s.NKeyFile == "") {
			tok, err := ReadToken(*tokenFile)
			if err != nil {
				return s, err
			}
			s.Token = tok
		}
		return s, s.Check()
	}
}

// Args returns the command-line flags that give a worker process s's files (Command's children): file names
// only; a token goes in the environment (EnvToken), never on a command line.
func (s Security) Args() []string {
	var a []string
	for _, f := range [][2]string{{"--creds", s.CredsFile}, {"--nkey", s.NKeyFile}, {"--tls-ca", s.TLSCA}, {"--tls-cert", s.TLSCert}, {"--tls-key", s.TLSKey}} {
		if f[1] != "" {
			a = append(a, f[0], f[1])
		}
	}
	return a
}

// InboxPrefix is the prefix of the reply subjects of run's clients: under the run's subjects, so that the
// permissions of IssueIdentities confine replies (the server's join replies) to the run too.
func InboxPrefix(run string) string { return RunSubjects(run) + ".inbox" }

// Identity is one NATS client identity IssueIdentities made: an NKey user whose seed is in SeedFile (mode 0600)
// and whom the NATS server grants Permissions.
type Identity struct {
	// Name is "server" or "worker-I"; PublicKey the NKey user's public key (U...).
	Name, PublicKey string
	SeedFile        string
	Permissions     *natsserver.Permissions
}

// Identities are the identities of one run: the parameter server's and one per worker.
type Identities struct {
	Run     string
	Server  Identity
	Workers []Identity
	// ConfigFile holds NATSConfig: the users with their permissions for an external NATS server's configuration.
	ConfigFile string
}

// NATSConfig returns the identities as a nats-server configuration block (authorization { users = [...] }:
// each user's public NKey and permissions; no secret), for an external NATS server's configuration file.
func (ids *Identities) NATSConfig() ([]byte, error) {
	type perm struct {
		Allow []string `json:"allow"`
	}
	type perms struct {
		Publish   perm `json:"publish"`
		Subscribe perm `json:"subscribe"`
	}
	type user struct {
		Nkey        string `json:"nkey"`
		Permissions perms  `json:"permissions"`
	}
	var users []user
	for _, id := range append([]Identity{ids.Server}, ids.Workers...) {
		users = append(users, user{Nkey: id.PublicKey, Permissions: perms{
			Publish: perm{id.Permissions.Publish.Allow}, Subscribe: perm{id.Permissions.Subscribe.Allow}}})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# gpzoo cluster run %s: its NATS users (public keys and permissions; include in the NATS server's configuration)\nauthorization ", ids.Run)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // '>' as is: nats-server's parser knows no \u escapes
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"users": users}); err != nil {
		return nil, fmt.Errorf("cluster: the identities' NATS configuration: %w", err)
	}
	return b.Bytes(), nil
}

// NkeyUsers returns the identities as the NATS server's users (EmbeddedConfig.Users, or an external server's
// authorization block: NATSConfig).
func (ids *Identities) NkeyUsers() []*natsserver.NkeyUser {
	users := []*natsserver.NkeyUser{{Nkey: ids.Server.PublicKey, Permissions: ids.Server.Permissions}}
	for _, w := range ids.Workers {
		users = append(users, &natsserver.NkeyUser{Nkey: w.PublicKey, Permissions: w.Permissions})
	}
	return users
}

// ErrIdentityExists is wrapped by IssueIdentities' error when a file it would write exists: identity files are
// never overwritten (a running worker may hold the old one; an operator removes them deliberately).
var ErrIdentityExists = errors.New("cluster: identity file exists (never overwritten)")

// WorkerPermissions are the NATS permissions of a worker of run: it may publish only its join requests,
// gradients and heartbeats (and, for the exact GP's kernel products, its products join requests, results and
// heartbeats), and subscribe only to the run's parameters, control messages, products tasks and heartbeats and its replies
// (InboxPrefix(run)); nothing of another run, and not the other workers' gradients.
func WorkerPermissions(run string) *natsserver.Permissions {
	s, p := subjectsOf(run), productSubjectsOf(run)
	return &natsserver.Permissions{
		Publish:   &natsserver.SubjectPermission{Allow: []string{s.join, s.grad, s.hb, p.join, p.result, p.beat}},
		Subscribe: &natsserver.SubjectPermission{Allow: []string{s.params, s.ctl + ">", p.task, p.alive, InboxPrefix(run) + ".>"}},
	}
}

// ServerPermissions are the NATS permissions of run's parameter server: every subject of the run, nothing else.
func ServerPermissions(run string) *natsserver.Permissions {
	all := []string{RunSubjects(run) + ".>"}
	return &natsserver.Permissions{
		Publish:   &natsserver.SubjectPermission{Allow: all},
		Subscribe: &natsserver.SubjectPermission{Allow: all},
	}
}

// IssueIdentities creates run's identities in dir (made with mode 0700 when missing): one NKey user for the
// parameter server (RUN-server.nk) and one per worker (RUN-worker-I.nk, I = 0..k-1), each seed file written
// with mode 0600 for the operator to hand to that machine (the worker's --nkey), with WorkerPermissions and
// ServerPermissions, and RUN-nats.conf, their NATSConfig for an external NATS server. It refuses
// (ErrIdentityExists) when any of the files exists, and writes none then.
func IssueIdentities(run string, k int, dir string) (*Identities, error) {
	if err := CheckRunName(run); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, fmt.Errorf("cluster: identities for %d workers: want at least 1", k)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: the identities' folder: %w", err)
	}
	ids, all := identitiesIn(run, k, dir)
	for _, f := range append(seedFiles(all), ids.ConfigFile) {
		if _, err := os.Lstat(f); err == nil {
			return nil, fmt.Errorf("%w: %s", ErrIdentityExists, f)
		}
	}
	var written []string
	undo := func(err error) (*Identities, error) {
		for _, f := range written {
			_ = os.Remove(f)
		}
		return nil, err
	}
	for _, id := range all {
		if err := writeSeed(id, run); err != nil {
			return undo(err)
		}
		written = append(written, id.SeedFile)
	}
	conf, err := ids.NATSConfig()
	if err != nil {
		return undo(err)
	}
	if err := writeNew(ids.ConfigFile, conf, 0o644); err != nil {
		return undo(err)
	}
	return ids, nil
}

func seedFiles(ids []*Identity) []string {
	f := make([]string, len(ids))
	for i, id := range ids {
		f[i] = id.SeedFile
	}
	return f
}

// writeNew writes data to a new file (ErrIdentityExists when it exists), removing it when the write fails.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: %s", ErrIdentityExists, path)
	}
	if err != nil {
		return fmt.Errorf("cluster: writing an identity: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("cluster: writing %s: %w", path, err)
	}
	return nil
}

func pointers(ids []Identity) []*Identity {
	p := make([]*Identity, len(ids))
	for i := range ids {
		p[i] = &ids[i]
	}
	return p
}

// writeSeed creates a fresh NKey user for id and writes its seed to id.SeedFile (exclusively, mode 0600).
func writeSeed(id *Identity, run string) error {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return fmt.Errorf("cluster: creating an NKey user: %w", err)
	}
	defer kp.Wipe()
	if id.PublicKey, err = kp.PublicKey(); err != nil {
		return fmt.Errorf("cluster: creating an NKey user: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return fmt.Errorf("cluster: creating an NKey user: %w", err)
	}
	text := fmt.Appendf(nil, "# gpzoo cluster run %s, %s: NATS NKey seed (secret: give it to that machine only; --nkey FILE)\n%s\n", run, id.Name, seed)
	defer clear(text)
	return writeNew(id.SeedFile, text, 0o600)
}

// LoadIdentities reads the identities IssueIdentities wrote for run's k workers in dir (a parameter server
// restarted with --resume takes them again, so that its running workers' seeds stay valid): each seed file's
// public key, and the permissions of its role. Errors: *FileError for a missing or unreadable seed file, or one
// that holds no NKey user seed (ErrMalformed).
func LoadIdentities(run string, k int, dir string) (*Identities, error) {
	if err := CheckRunName(run); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, fmt.Errorf("cluster: identities for %d workers: want at least 1", k)
	}
	ids, all := identitiesIn(run, k, dir)
	for _, id := range all {
		data, err := readFile("NKey seed file", id.SeedFile)
		if err != nil {
			return nil, err
		}
		kp, err := nkeys.FromSeed(bytes.TrimSpace(seedLine(data)))
		clear(data)
		if err != nil {
			return nil, &FileError{What: "NKey seed file", Path: id.SeedFile, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
		}
		id.PublicKey, err = kp.PublicKey()
		kp.Wipe()
		if err != nil || !strings.HasPrefix(id.PublicKey, "U") {
			return nil, &FileError{What: "NKey seed file", Path: id.SeedFile, Err: fmt.Errorf("%w: not an NKey user seed", ErrMalformed)}
		}
	}
	return ids, nil
}

// identitiesIn returns run's identities for k workers in dir without their keys: names, permissions, seed and
// configuration files (the layout IssueIdentities writes and LoadIdentities reads), and pointers to the server's
// then the workers'.
func identitiesIn(run string, k int, dir string) (*Identities, []*Identity) {
	ids := &Identities{Run: run, Server: Identity{Name: "server", Permissions: ServerPermissions(run)},
		ConfigFile: filepath.Join(dir, run+"-nats.conf")}
	for i := range k {
		ids.Workers = append(ids.Workers, Identity{Name: "worker-" + strconv.Itoa(i), Permissions: WorkerPermissions(run)})
	}
	all := append([]*Identity{&ids.Server}, pointers(ids.Workers)...)
	for _, id := range all {
		id.SeedFile = filepath.Join(dir, run+"-"+id.Name+".nk")
	}
	return ids, all
}

// seedLine returns the first line of data that is not a comment.
func seedLine(data []byte) []byte {
	for _, line := range bytes.Split(data, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return t
		}
	}
	return nil
}

// ConnectWithin is Connect retried every half second for up to within while the server does not answer (a
// worker started before its server), or until stop is closed; errors of the client's own files and flags
// (*FileError, ErrSecurityConflict) return at once.
func ConnectWithin(url, name string, sec Security, within time.Duration, stop <-chan struct{}) (*nats.Conn, error) {
	deadline := time.Now().Add(within)
	for {
		nc, err := Connect(url, name, sec)
		if err == nil {
			return nc, nil
		}
		var fe *FileError
		if errors.As(err, &fe) || errors.Is(err, ErrSecurityConflict) || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-stop:
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}
