package cli

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

const advgpUsage = `gpzoo advgp: asynchronous distributed variational GP training (ADVGP, Peng et al. 2017) over NATS.

  gpzoo advgp local ENTRY [run flags]
      one command on one machine: an embedded NATS server on loopback, the parameter server and --workers
      worker processes (this binary's "advgp work"); prints the result as gpzoo run does
  gpzoo advgp serve ENTRY --run NAME [--nats URL | --listen HOST:PORT] [--token-file FILE] [run flags]
      the parameter server only, on an external NATS server (--nats) or an embedded one listening on
      HOST:PORT (default 127.0.0.1:4222: this machine only; --port P is --listen 127.0.0.1:P). Workers must
      reach that address: with the default, only workers on this machine can. To take workers from other
      machines, listen on an interface they reach (--listen 0.0.0.0:4222, or the machine's address); the server
      then requires a token: from --token-file FILE, else $GPZOO_NATS_TOKEN, else a fresh random one printed
      with the workers' command. Start the workers yourself
  gpzoo advgp work --url URL --run NAME --shard i/k [--token-file FILE] [--data DIR] [--delay D]
      one worker: joins run NAME, loads shard i of k of the entry's training data and pushes gradients until
      the server is done; a restarted worker joins again. The token comes from --token-file FILE or
      $GPZOO_NATS_TOKEN (never the command line, which other users of the machine can read)

ENTRY is one of protein/advgp, kin40k/advgp, keggdirected/advgp, synthetic10m/advgp (gpzoo list). Run flags
are those of gpzoo run plus --workers K (default 4), --tau T (delay bound, default 4; 0 = synchronous) and,
for serve, --run NAME. --checkpoint DIR makes the server checkpoint its parameters; --resume restarts from them.
`

func advgpCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
		fmt.Fprint(stdout, advgpUsage)
		return nil
	}
	switch args[0] {
	case "local":
		return runEntryWith(args[1:], func(o *zoo.Options, data string) (func(), error) {
			exe, err := os.Executable()
			if err != nil {
				return nil, err
			}
			o.Spawn = cluster.Command(exe, "advgp", "work", "--data", data)
			return func() {}, nil
		}, stdout, stderr)
	case "serve":
		return advgpServe(args[1:], stdout, stderr)
	case "work":
		return advgpWork(args[1:], stderr)
	}
	return fmt.Errorf("advgp: unknown subcommand %q (local, serve or work; gpzoo advgp help)", args[0])
}

// advgpServe runs the parameter server of an entry whose workers start elsewhere.
func advgpServe(args []string, stdout, stderr io.Writer) error {
	// --listen, --port and --token-file are serve's own flags; the rest go to gpzoo run.
	own := map[string]bool{"listen": true, "port": true, "token-file": true}
	fs := flag.NewFlagSet("advgp serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:4222", "HOST:PORT of the embedded NATS server")
	port := fs.Int("port", 0, "port of the embedded NATS server on loopback")
	tokenFile := fs.String("token-file", "", "file holding the NATS token")
	var mine, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !own[name] {
			rest = append(rest, a)
			continue
		}
		mine = append(mine, a)
		if !hasValue {
			if i+1 >= len(args) {
				return fmt.Errorf("advgp serve: --%s needs a value", name)
			}
			mine = append(mine, args[i+1])
			i++
		}
	}
	if err := fs.Parse(mine); err != nil {
		return fmt.Errorf("advgp serve: %w", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["port"] {
		if set["listen"] {
			return fmt.Errorf("advgp serve: --port and --listen exclude each other (--port P is --listen 127.0.0.1:P)")
		}
		*listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	}
	token, err := cluster.ReadToken(*tokenFile)
	if err != nil {
		return fmt.Errorf("advgp serve: %w", err)
	}
	return runEntryWith(rest, func(o *zoo.Options, data string) (func(), error) {
		if o.NATSRun == "" {
			return nil, fmt.Errorf("advgp serve: --run NAME is required (the workers' --run)")
		}
		o.Spawn = func(cluster.WorkerArgs) (cluster.Proc, error) { return external{}, nil }
		cleanup := func() {}
		generated := false
		if o.NATSURL == "" {
			host, _, _ := net.SplitHostPort(*listen)
			if token == "" && !cluster.IsLoopback(host) {
				if token, err = newToken(); err != nil {
					return nil, err
				}
				generated = true
			}
			e, err := cluster.StartEmbedded(cluster.EmbeddedConfig{Listen: *listen, Token: token})
			if err != nil {
				return nil, err
			}
			o.NATSURL, cleanup = e.URL, e.Shutdown
			if e.Loopback {
				fmt.Fprintf(stdout, "advgp server: listening on %s (loopback: only workers on this machine can join; --listen HOST:PORT to take others)\n", *listen)
			} else {
				fmt.Fprintf(stdout, "advgp server: listening on %s, reachable from the network; clients must present the token\n", *listen)
			}
		}
		o.NATSToken = token
		w := o.Workers
		if w == 0 {
			w = zoo.ADVGPWorkers
		}
		env, flagTok := "", ""
		switch {
		case generated:
			env = cluster.EnvToken + "=" + token + " "
		case *tokenFile != "":
			flagTok = " --token-file " + *tokenFile
		case token != "":
			env = cluster.EnvToken + "=... " // the operator's own token, from the environment: not echoed
		}
		fmt.Fprintf(stdout, "advgp server: NATS %s, run %q; start %d workers:\n  %sgpzoo advgp work --url %s --run %s --shard i/%d%s --data %s\n",
			o.NATSURL, o.NATSRun, w, env, o.NATSURL, o.NATSRun, w, flagTok, data)
		return cleanup, nil
	}, stdout, stderr)
}

// newToken returns a fresh random NATS token (128 bits, hex).
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("advgp serve: generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// external is the Proc of a worker started by somebody else.
type external struct{}

func (external) Wait() error { return nil }
func (external) Kill() error { return nil }

// advgpWork runs one worker.
func advgpWork(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("advgp work", flag.ContinueOnError)
	fs.SetOutput(stderr)
	get := cluster.WorkerFlags(fs)
	data := fs.String("data", datasets.DefaultDir(), "benchmark data directory")
	quiet := fs.Bool("quiet", true, "no progress output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := get()
	if err != nil {
		return err
	}
	nc, err := cluster.Connect(a.URL, fmt.Sprintf("gpzoo-advgp-worker-%d", a.Shard), a.Token)
	if err != nil {
		return err
	}
	defer nc.Close()
	stop := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() { <-sig; close(stop) }()
	cfg := cluster.WorkerConfig{Conn: nc, Run: a.Run, Shard: a.Shard, Of: a.Of, Delay: a.Delay, Stop: stop,
		Loader: func(ref cluster.DataRef) (x, y *mat.Dense, err error) {
			if *data != "" { // this machine's data directory, when it has one
				ref.Dir = *data
			}
			return zoo.ADVGPLoader(ref)
		}}
	if !*quiet {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	_, err = cluster.Work(cfg)
	return err
}
