package dist

import (
	"errors"
	"flag"
	"fmt"
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

// Embedded is a NATS server running inside this process, listening on loopback.
type Embedded struct {
	srv *natsserver.Server
	// URL is the server's client URL (nats://127.0.0.1:PORT).
	URL string
}

// StartEmbedded starts a NATS server on a free loopback port (port 0) or the given one.
func StartEmbedded(port int) (*Embedded, error) {
	if port == 0 {
		port = natsserver.RANDOM_PORT
	}
	srv, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true,
		MaxPayload: EmbeddedMaxPayload, MaxPending: 4 * EmbeddedMaxPayload})
	if err != nil {
		return nil, fmt.Errorf("dist: starting the embedded NATS server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("dist: the embedded NATS server did not start within 10 s")
	}
	return &Embedded{srv: srv, URL: srv.ClientURL()}, nil
}

// Shutdown stops the server.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// Connect opens a NATS connection to url for gpzoo (reconnecting for as long as it takes).
func Connect(url, name string) (*nats.Conn, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("dist: connecting to NATS at %s: %w", url, err)
	}
	return nc, nil
}

// WorkerArgs tell a Spawner what to start.
type WorkerArgs struct {
	URL, Run  string
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
	// URL is an external NATS server ("" starts an embedded one on loopback).
	URL string
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
		e, err := StartEmbedded(0)
		if err != nil {
			return nil, err
		}
		defer e.Shutdown()
		url = e.URL
	}
	nc, err := Connect(url, "gpzoo-advgp-server")
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
		p, err := spawn(WorkerArgs{URL: url, Run: cfg.Job.Run, Shard: i, Of: k, Delay: c.Delay[i]})
		if err != nil {
			stopAll(procs, 0)
			return nil, fmt.Errorf("dist: starting worker %d/%d: %w", i, k, err)
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
		nc, err := Connect(a.URL, fmt.Sprintf("gpzoo-advgp-worker-%d", a.Shard))
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
// standard error.
func Command(name string, args ...string) Spawner {
	return func(a WorkerArgs) (Proc, error) {
		full := append(append([]string(nil), args...), "--url", a.URL, "--run", a.Run,
			"--shard", strconv.Itoa(a.Shard)+"/"+strconv.Itoa(a.Of))
		if a.Delay > 0 {
			full = append(full, "--delay", a.Delay.String())
		}
		cmd := exec.Command(name, full...)
		cmd.Stderr = os.Stderr
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
	run := fs.String("run", "default", "training run name (the server's --run)")
	shard := fs.String("shard", "", "this worker's shard `i/k` (0-based i)")
	delay := fs.Duration("delay", 0, "artificial pause before every gradient (slow-worker studies)")
	return func() (WorkerArgs, error) {
		a := WorkerArgs{URL: *url, Run: *run, Delay: *delay}
		i, k, ok := strings.Cut(*shard, "/")
		var err1, err2 error
		a.Shard, err1 = strconv.Atoi(i)
		a.Of, err2 = strconv.Atoi(k)
		if !ok || err1 != nil || err2 != nil || a.Of < 1 || a.Shard < 0 || a.Shard >= a.Of {
			return a, fmt.Errorf("dist: --shard %q: want i/k with 0 ≤ i < k", *shard)
		}
		return a, nil
	}
}
