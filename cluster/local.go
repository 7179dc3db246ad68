package cluster

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"github.com/gpzoo/gpzoo/internal/access"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// EmbeddedMaxPayload is the largest message the embedded NATS server accepts (the parameters of M = 1000
// inducing points in 20 dimensions take 8 MB).
const EmbeddedMaxPayload = 64 << 20

// EnvToken is the environment variable a worker reads the NATS token from (see Connect and WorkerFlags); a
// token on the command line would show in every process listing.
const EnvToken = "GPZOO_NATS_TOKEN"

// ErrInsecureListen is returned by StartEmbedded for a server reachable from the network without TLS or client
// authentication; the error also wraps what is missing: ErrNoTLS, ErrNoAuth.
var ErrInsecureListen = errors.New("cluster: a NATS server listening beyond loopback needs TLS and client authentication")

var (
	// ErrNoTLS: no server certificate (EmbeddedConfig.TLSCert, TLSKey), so clients would talk in clear.
	ErrNoTLS = errors.New("no TLS certificate and key (--tls-cert, --tls-key)")
	// ErrNoAuth: neither a token nor NKey users, so anybody reaching the port could join.
	ErrNoAuth = errors.New("no client authentication (a token, or NKey users: --identities)")
)

// EmbeddedConfig configures StartEmbedded.
type EmbeddedConfig struct {
	// Listen is the HOST:PORT the server listens on: "" means 127.0.0.1 on a free port; PORT 0 a free port.
	// A host other than a loopback address (127.0.0.0/8, ::1, localhost) makes the server reachable from the
	// network, and then TLS (TLSCert, TLSKey) and authentication (Token or Users) are required.
	Listen string
	// Token, when set, is the secret every client must present (Connect's token): NATS token authentication.
	// It excludes Users (a token holder would bypass the users' permissions).
	Token string
	// Users are NKey users (Identities.NkeyUsers): every client must authenticate as one of them and gets its
	// permissions.
	Users []*natsserver.NkeyUser
	// TLSCert and TLSKey are PEM files of the server's certificate and key: every client connection is TLS.
	// With TLSVerifyClients, clients must present a certificate signed by a CA in the PEM file TLSCA.
	TLSCert, TLSKey, TLSCA string
	TLSVerifyClients       bool
	// JetStreamDir, when set, enables JetStream with its storage in that folder (the work queues of OpenQueue
	// need it); "" leaves JetStream off.
	JetStreamDir string
}

// Embedded is a NATS server running inside this process.
type Embedded struct {
	srv *natsserver.Server
	// URL is the server's client URL (nats://HOST:PORT, without the token); for a server listening on every
	// interface (0.0.0.0 or ::) HOST is this machine's host name.
	URL string
	// Loopback reports whether the server listens on loopback only.
	Loopback bool
}

// StartEmbedded starts a NATS server as c says: on loopback by default, and beyond it only with TLS and
// client authentication (ErrInsecureListen otherwise, wrapping ErrNoTLS and/or ErrNoAuth).
func StartEmbedded(c EmbeddedConfig) (*Embedded, error) {
	host, port := "127.0.0.1", natsserver.RANDOM_PORT
	if c.Listen != "" {
		h, p, err := net.SplitHostPort(c.Listen)
		if err != nil {
			return nil, fmt.Errorf("cluster: listen address %q: want HOST:PORT: %w", c.Listen, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("cluster: listen address %q: port %q is not a number in 0–65535", c.Listen, p)
		}
		if h == "" {
			return nil, fmt.Errorf("cluster: listen address %q: name the host (127.0.0.1 for this machine only, 0.0.0.0 for every interface)", c.Listen)
		}
		host = h
		if n != 0 {
			port = n
		}
	}
	loopback := IsLoopback(host)
	if !loopback {
		var missing []error
		if c.TLSCert == "" || c.TLSKey == "" {
			missing = append(missing, ErrNoTLS)
		}
		if c.Token == "" && len(c.Users) == 0 {
			missing = append(missing, ErrNoAuth)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: listening on %s: %w", ErrInsecureListen, net.JoinHostPort(host, strconv.Itoa(max(port, 0))), errors.Join(missing...))
		}
	}
	if c.Token != "" && len(c.Users) > 0 {
		return nil, fmt.Errorf("%w: a token and NKey users exclude each other (a token holder would bypass the users' permissions)", ErrSecurityConflict)
	}
	opts := &natsserver.Options{Host: host, Port: port, NoLog: true, NoSigs: true,
		MaxPayload: EmbeddedMaxPayload, MaxPending: 4 * EmbeddedMaxPayload, Authorization: c.Token, Nkeys: c.Users,
		JetStream: c.JetStreamDir != "", StoreDir: c.JetStreamDir}
	if c.TLSCert != "" || c.TLSKey != "" {
		tc, err := serverTLS(c)
		if err != nil {
			return nil, err
		}
		opts.TLSConfig, opts.TLS, opts.TLSVerify, opts.TLSTimeout = tc, true, c.TLSVerifyClients, 5
	} else if c.TLSVerifyClients {
		return nil, fmt.Errorf("%w: verifying clients' certificates needs the server's TLS certificate and key", ErrSecurityConflict)
	}
	srv, err := natsserver.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: starting the embedded NATS server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("cluster: the embedded NATS server did not start on %s within 10 s (is the port in use?)", net.JoinHostPort(host, strconv.Itoa(max(port, 0))))
	}
	url := srv.ClientURL()
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			url = "nats://" + net.JoinHostPort(name, strconv.Itoa(srv.Addr().(*net.TCPAddr).Port))
		}
	}
	return &Embedded{srv: srv, URL: url, Loopback: loopback}, nil
}

// serverTLS returns the server's TLS configuration (natsserver.GenTLSConfig), its files checked first with
// FileErrors.
func serverTLS(c EmbeddedConfig) (*tls.Config, error) {
	if c.TLSCert == "" || c.TLSKey == "" {
		return nil, fmt.Errorf("%w: the server's certificate needs both TLSCert and TLSKey", ErrSecurityConflict)
	}
	if c.TLSVerifyClients && c.TLSCA == "" {
		return nil, fmt.Errorf("%w: verifying clients' certificates needs the CA that signs them (TLSCA)", ErrSecurityConflict)
	}
	files := [][2]string{{"TLS certificate file", c.TLSCert}, {"TLS key file", c.TLSKey}}
	if c.TLSCA != "" {
		files = append(files, [2]string{"TLS CA file", c.TLSCA})
	}
	for _, f := range files {
		if _, err := readFile(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	o := &natsserver.TLSConfigOpts{CertFile: c.TLSCert, KeyFile: c.TLSKey, Verify: c.TLSVerifyClients}
	if c.TLSVerifyClients {
		o.CaFile = c.TLSCA
	}
	tc, err := natsserver.GenTLSConfig(o)
	if err != nil {
		return nil, malformed("TLS certificate and key", c.TLSCert+", "+c.TLSKey, err)
	}
	return tc, nil
}

// IsLoopback reports whether host (a name or an address) is this machine's loopback (access.LoopbackHost).
func IsLoopback(host string) bool { return access.LoopbackHost(host) }

// Shutdown stops the server.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// WorkerArgs tell a Spawner what to start.
type WorkerArgs struct {
	URL, Run string
	// Security is the worker's NATS authentication and TLS (its own identity when the run has Identities).
	Security  Security
	Shard, Of int
	Delay     time.Duration
	// Products makes the worker a products worker of the exact GP by conjugate gradients (WorkProducts: shard
	// i of k computes its row blocks of the kernel products) instead of a row-sum model's (Work).
	Products bool
}

// Proc is a started worker.
type Proc interface {
	// Wait waits for the worker to end; Kill ends it at once (a crash, for fault tests).
	Wait() error
	Kill() error
}

// Spawner starts one worker.
type Spawner func(a WorkerArgs) (Proc, error)

// LocalConfig configures Local.
type LocalConfig struct {
	// Server configures the parameter server (its Conn is set by Local).
	Server ServerConfig
	// URL is an external NATS server ("" starts an embedded one: Embedded, on loopback by default); Security is
	// presented by the server's and the workers' connections.
	URL      string
	Security Security
	Embedded EmbeddedConfig
	// Identities, when set, are the run's (IssueIdentities for Server.Job.Run): the server connects as its
	// identity and worker i as Workers[i]; an embedded server takes them as its users.
	Identities *Identities
	// Spawn starts the workers (nil: goroutines in this process, each with its own connection, loading data
	// with Loader).
	Spawn  Spawner
	Loader Loader
	// Delay gives shard i an artificial pause before every gradient (the delay study's slow workers).
	Delay map[int]time.Duration
}

// Local trains model with a parameter server and Server.Job.Workers workers on one machine: it starts the
// embedded NATS server (unless URL is set), spawns the workers, serves until the last update, then waits for
// the workers to leave (killing those still there after a grace period).
func Local(model gp.RowSum, c LocalConfig) (*Result, error) {
	cfg := c.Server
	if cfg.Job.Run == "" {
		cfg.Job.Run = nuid.Next()
	}
	r, err := startLocal(cfg.Job.Run, cfg.Job.Workers, c.URL, c.Security, c.Embedded, c.Identities, "gpzoo-cluster-server")
	if err != nil {
		return nil, err
	}
	defer r.close()
	cfg.Conn = r.nc
	s, err := newServer(model, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	spawn := c.Spawn
	if spawn == nil {
		spawn = InProcess(c.Loader)
	}
	procs, err := r.spawnAll(spawn, false, c.Delay)
	if err != nil {
		return nil, err
	}
	res, err := s.run()
	grace := 10 * time.Second // the server said "done": the workers leave on their own
	if err != nil {
		grace = 0
	}
	_ = stopAll(procs, grace) // the run's result is the server's
	return res, err
}

// localRun is a run's NATS side on one machine: the server's connection to the embedded NATS server (or to the
// one at a URL) and what its workers present.
type localRun struct {
	url, run string
	k        int
	nc       *nats.Conn
	sec      Security // the workers' (before their identities)
	ids      *Identities
	embedded *Embedded
}

// startLocal starts the embedded NATS server unless url is set (taking the run's identities as its users) and
// connects the run's server to it as name, with its identity when ids is set.
func startLocal(run string, k int, url string, sec Security, ec EmbeddedConfig, ids *Identities, name string) (*localRun, error) {
	if ids != nil && (ids.Run != run || len(ids.Workers) < k) {
		return nil, fmt.Errorf("cluster: identities of run %q for %d workers, want run %q and %d workers", ids.Run, len(ids.Workers), run, k)
	}
	r := &localRun{url: url, run: run, k: k, sec: sec, ids: ids}
	if url == "" {
		if ids != nil && ec.Users == nil {
			ec.Users = ids.NkeyUsers()
		}
		e, err := StartEmbedded(ec)
		if err != nil {
			return nil, err
		}
		r.embedded, r.url = e, e.URL
	}
	ss := sec
	ss.InboxPrefix = InboxPrefix(run)
	if ids != nil {
		ss.NKeyFile, ss.CredsFile, ss.Token = ids.Server.SeedFile, "", ""
	}
	nc, err := Connect(r.url, name, ss)
	if err != nil {
		r.close()
		return nil, err
	}
	r.nc = nc
	return r, nil
}

// spawnAll starts the run's k workers (products workers when products is set); on an error it stops those it
// started.
func (r *localRun) spawnAll(spawn Spawner, products bool, delay map[int]time.Duration) ([]Proc, error) {
	procs := make([]Proc, 0, r.k)
	for i := range r.k {
		ws := r.sec
		ws.InboxPrefix = InboxPrefix(r.run)
		if r.ids != nil {
			ws.NKeyFile, ws.CredsFile, ws.Token = r.ids.Workers[i].SeedFile, "", ""
		}
		p, err := spawn(WorkerArgs{URL: r.url, Security: ws, Run: r.run, Shard: i, Of: r.k, Delay: delay[i], Products: products})
		if err != nil {
			_ = stopAll(procs, 0)
			return nil, fmt.Errorf("cluster: starting worker %d/%d: %w", i, r.k, err)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// close closes the server's connection and shuts the embedded NATS server down.
func (r *localRun) close() {
	if r.nc != nil {
		r.nc.Close()
	}
	if r.embedded != nil {
		r.embedded.Shutdown()
	}
}

// stopAll waits up to grace for the workers to end, then kills the rest; it returns the first worker's error (by
// index; a killed worker's is its kill).
func stopAll(procs []Proc, grace time.Duration) error {
	errs := make([]error, len(procs))
	done := make(chan struct{})
	go func() {
		for i, p := range procs {
			errs[i] = p.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		for _, p := range procs {
			_ = p.Kill()
		}
		<-done
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("worker %d: %w", i, err)
		}
	}
	return nil
}

// InProcess returns the Spawner of goroutine workers (each with its own NATS connection).
func InProcess(load Loader) Spawner {
	return func(a WorkerArgs) (Proc, error) {
		nc, err := Connect(a.URL, fmt.Sprintf("gpzoo-cluster-worker-%d", a.Shard), a.Security)
		if err != nil {
			return nil, err
		}
		p := &goProc{stop: make(chan struct{}), done: make(chan struct{})}
		go func() {
			defer close(p.done)
			defer nc.Close()
			if a.Products {
				p.err = WorkProducts(ProductWorkerConfig{Conn: nc, Run: a.Run, Index: a.Shard, Of: a.Of, Stop: p.stop})
				return
			}
			_, p.err = Work(WorkerConfig{Conn: nc, Run: a.Run, Shard: a.Shard, Of: a.Of, Loader: load, Delay: a.Delay, Stop: p.stop})
		}()
		return p, nil
	}
}

type goProc struct {
	stop, done chan struct{}
	once       sync.Once
	err        error
}

func (p *goProc) Wait() error { <-p.done; return p.err }

func (p *goProc) Kill() error {
	p.once.Do(func() { close(p.stop) })
	<-p.done
	return nil
}

// Command returns the Spawner of worker processes: name with args, then the worker's flags
// --url URL --run RUN --shard i/k [--delay D] and the files of its Security (Security.Args: what `gpzoo cluster
// work` takes), sharing this process's standard error; a token goes to the process in its environment
// (EnvToken), not on its command line.
func Command(name string, args ...string) Spawner {
	return func(a WorkerArgs) (Proc, error) {
		full := append(append([]string(nil), args...), "--url", a.URL, "--run", a.Run,
			"--shard", strconv.Itoa(a.Shard)+"/"+strconv.Itoa(a.Of))
		full = append(full, a.Security.Args()...)
		if a.Delay > 0 {
			full = append(full, "--delay", a.Delay.String())
		}
		if a.Products {
			full = append(full, "--products")
		}
		cmd := exec.Command(name, full...)
		cmd.Stderr = os.Stderr
		if a.Security.Token != "" {
			cmd.Env = append(os.Environ(), EnvToken+"="+a.Security.Token)
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &cmdProc{cmd: cmd}, nil
	}
}

type cmdProc struct{ cmd *exec.Cmd }

func (p *cmdProc) Wait() error { return p.cmd.Wait() }
func (p *cmdProc) Kill() error { return p.cmd.Process.Kill() }

// WorkerFlags registers the worker flags of `gpzoo cluster work` (--url, --run, --shard i/k, --delay, and
// SecurityFlags') on fs and returns the function that reads them after fs.Parse (the Security's InboxPrefix is
// the run's).
func WorkerFlags(fs *flag.FlagSet) func() (WorkerArgs, error) {
	url := fs.String("url", nats.DefaultURL, "NATS server URL")
	security := SecurityFlags(fs)
	run := fs.String("run", "default", "training run name (the server's --run)")
	shard := fs.String("shard", "", "this worker's shard `i/k` (0-based i)")
	delay := fs.Duration("delay", 0, "artificial pause before every gradient (slow-worker studies)")
	products := fs.Bool("products", false, "a products worker of the exact GP by conjugate gradients (gpzoo train --model gpr --workers K)")
	return func() (WorkerArgs, error) {
		a := WorkerArgs{URL: *url, Run: *run, Delay: *delay, Products: *products}
		if err := CheckRunName(a.Run); err != nil {
			return a, err
		}
		var err error
		if a.Security, err = security(); err != nil {
			return a, err
		}
		a.Security.InboxPrefix = InboxPrefix(a.Run)
		i, k, ok := strings.Cut(*shard, "/")
		var err1, err2 error
		a.Shard, err1 = strconv.Atoi(i)
		a.Of, err2 = strconv.Atoi(k)
		if !ok || err1 != nil || err2 != nil || a.Of < 1 || a.Shard < 0 || a.Shard >= a.Of {
			return a, fmt.Errorf("cluster: --shard %q: want i/k with 0 ≤ i < k", *shard)
		}
		return a, nil
	}
}
