package cluster

import (
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

	"github.com/gpzoo/gpzoo/gp/advgp"
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

// ErrNoToken is returned by StartEmbedded for a server reachable from the network without a token.
var ErrNoToken = errors.New("cluster: a NATS server listening beyond loopback needs a token (clients must authenticate)")

// EmbeddedConfig configures StartEmbedded.
type EmbeddedConfig struct {
	// Listen is the HOST:PORT the server listens on: "" means 127.0.0.1 on a free port; PORT 0 a free port.
	// A host other than a loopback address (127.0.0.0/8, ::1, localhost) makes the server reachable from the
	// network, and then Token is required.
	Listen string
	// Token, when set, is the secret every client must present (Connect's token): NATS token authentication.
	Token string
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

// StartEmbedded starts a NATS server as c says: on loopback by default, and beyond it only with a token
// (ErrNoToken otherwise).
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
	if !loopback && c.Token == "" {
		return nil, fmt.Errorf("%w: listening on %s", ErrNoToken, net.JoinHostPort(host, strconv.Itoa(max(port, 0))))
	}
	srv, err := natsserver.NewServer(&natsserver.Options{Host: host, Port: port, NoLog: true, NoSigs: true,
		MaxPayload: EmbeddedMaxPayload, MaxPending: 4 * EmbeddedMaxPayload, Authorization: c.Token})
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

// IsLoopback reports whether host (a name or an address) is this machine's loopback (access.LoopbackHost).
func IsLoopback(host string) bool { return access.LoopbackHost(host) }

// Shutdown stops the server.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// Connect opens a NATS connection to url for gpzoo (reconnecting for as long as it takes), presenting token
// when it is not empty.
func Connect(url, name, token string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(200 * time.Millisecond)}
	if token != "" {
		opts = append(opts, nats.Token(token))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
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

// WorkerArgs tell a Spawner what to start.
type WorkerArgs struct {
	URL, Run  string
	Token     string // NATS token ("" for a server without authentication)
	Shard, Of int
	Delay     time.Duration
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
	// URL is an external NATS server ("" starts an embedded one on loopback); Token, when set, is presented by
	// the server's and the workers' connections.
	URL   string
	Token string
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
func Local(model *advgp.Model, c LocalConfig) (*Result, error) {
	url := c.URL
	if url == "" {
		e, err := StartEmbedded(EmbeddedConfig{})
		if err != nil {
			return nil, err
		}
		defer e.Shutdown()
		url = e.URL
	}
	nc, err := Connect(url, "gpzoo-advgp-server", c.Token)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	cfg := c.Server
	cfg.Conn = nc
	if cfg.Job.Run == "" {
		cfg.Job.Run = nuid.Next()
	}
	s, err := newServer(model, cfg)
	if err != nil {
		return nil, err
	}
	spawn := c.Spawn
	if spawn == nil {
		spawn = InProcess(c.Loader)
	}
	k := cfg.Job.Workers
	procs := make([]Proc, 0, k)
	for i := range k {
		p, err := spawn(WorkerArgs{URL: url, Token: c.Token, Run: cfg.Job.Run, Shard: i, Of: k, Delay: c.Delay[i]})
		if err != nil {
			stopAll(procs, 0)
			return nil, fmt.Errorf("cluster: starting worker %d/%d: %w", i, k, err)
		}
		procs = append(procs, p)
	}
	res, err := s.run()
	grace := 10 * time.Second // the server said "done": the workers leave on their own
	if err != nil {
		grace = 0
	}
	stopAll(procs, grace)
	return res, err
}

// stopAll waits up to grace for the workers to end, then kills the rest.
func stopAll(procs []Proc, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		for _, p := range procs {
			_ = p.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	for _, p := range procs {
		_ = p.Kill()
	}
	<-done
}

// InProcess returns the Spawner of goroutine workers (each with its own NATS connection).
func InProcess(load Loader) Spawner {
	return func(a WorkerArgs) (Proc, error) {
		nc, err := Connect(a.URL, fmt.Sprintf("gpzoo-advgp-worker-%d", a.Shard), a.Token)
		if err != nil {
			return nil, err
		}
		p := &goProc{stop: make(chan struct{}), done: make(chan struct{})}
		go func() {
			defer close(p.done)
			defer nc.Close()
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
// --url URL --run RUN --shard i/k [--delay D] (what `gpzoo advgp work` takes), sharing this process's
// standard error; a token goes to the process in its environment (EnvToken), not on its command line.
func Command(name string, args ...string) Spawner {
	return func(a WorkerArgs) (Proc, error) {
		full := append(append([]string(nil), args...), "--url", a.URL, "--run", a.Run,
			"--shard", strconv.Itoa(a.Shard)+"/"+strconv.Itoa(a.Of))
		if a.Delay > 0 {
			full = append(full, "--delay", a.Delay.String())
		}
		cmd := exec.Command(name, full...)
		cmd.Stderr = os.Stderr
		if a.Token != "" {
			cmd.Env = append(os.Environ(), EnvToken+"="+a.Token)
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

// WorkerFlags registers the worker flags of `gpzoo advgp work` (--url, --run, --shard i/k, --delay) on fs and
// returns the function that reads them after fs.Parse.
func WorkerFlags(fs *flag.FlagSet) func() (WorkerArgs, error) {
	url := fs.String("url", nats.DefaultURL, "NATS server URL")
	tokenFile := fs.String("token-file", "", "file holding the NATS token (default: $"+EnvToken+")")
	run := fs.String("run", "default", "training run name (the server's --run)")
	shard := fs.String("shard", "", "this worker's shard `i/k` (0-based i)")
	delay := fs.Duration("delay", 0, "artificial pause before every gradient (slow-worker studies)")
	return func() (WorkerArgs, error) {
		a := WorkerArgs{URL: *url, Run: *run, Delay: *delay}
		var err error
		if a.Token, err = ReadToken(*tokenFile); err != nil {
			return a, err
		}
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
