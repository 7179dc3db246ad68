package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/dist"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

const advgpUsage = `gpzoo advgp: asynchronous distributed variational GP training (ADVGP, Peng et al. 2017) over NATS.

  gpzoo advgp local ENTRY [run flags]
      one command on one machine: an embedded NATS server on loopback, the parameter server and --workers
      worker processes (this binary's "advgp work"); prints the result as gpzoo run does
  gpzoo advgp serve ENTRY --run NAME [--nats URL | --port P] [run flags]
      the parameter server only, on an external NATS server (--nats) or an embedded one listening on port P
      (default 4222); start the workers yourself, anywhere that reaches the server
  gpzoo advgp work --url URL --run NAME --shard i/k [--data DIR] [--delay D]
      one worker: joins run NAME, loads shard i of k of the entry's training data and pushes gradients until
      the server is done; a restarted worker joins again

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
			o.Spawn = dist.Command(exe, "advgp", "work", "--data", data)
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
	fs := flag.NewFlagSet("advgp serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	port := fs.Int("port", 4222, "port of the embedded NATS server")
	// --port is serve's own flag; the rest go to gpzoo run.
	var rest []string
	for i := 0; i < len(args); i++ {
		if a := args[i]; a == "--port" || a == "-port" {
			if i+1 >= len(args) {
				return fmt.Errorf("advgp serve: --port needs a value")
			}
			if err := fs.Parse(args[i : i+2]); err != nil {
				return fmt.Errorf("advgp serve: %w", err)
			}
			i++
			continue
		}
		rest = append(rest, args[i])
	}
	return runEntryWith(rest, func(o *zoo.Options, data string) (func(), error) {
		if o.NATSRun == "" {
			return nil, fmt.Errorf("advgp serve: --run NAME is required (the workers' --run)")
		}
		o.Spawn = func(dist.WorkerArgs) (dist.Proc, error) { return external{}, nil }
		cleanup := func() {}
		if o.NATSURL == "" {
			e, err := dist.StartEmbedded(*port)
			if err != nil {
				return nil, err
			}
			o.NATSURL, cleanup = e.URL, e.Shutdown
		}
		w := o.Workers
		if w == 0 {
			w = zoo.ADVGPWorkers
		}
		fmt.Fprintf(stdout, "advgp server: NATS %s, run %q; start %d workers:\n  gpzoo advgp work --url %s --run %s --shard i/%d --data %s\n",
			o.NATSURL, o.NATSRun, w, o.NATSURL, o.NATSRun, w, data)
		return cleanup, nil
	}, stdout, stderr)
}

// external is the Proc of a worker started by somebody else.
type external struct{}

func (external) Wait() error { return nil }
func (external) Kill() error { return nil }

// advgpWork runs one worker.
func advgpWork(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("advgp work", flag.ContinueOnError)
	fs.SetOutput(stderr)
	get := dist.WorkerFlags(fs)
	data := fs.String("data", datasets.DefaultDir(), "benchmark data directory")
	quiet := fs.Bool("quiet", true, "no progress output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := get()
	if err != nil {
		return err
	}
	nc, err := dist.Connect(a.URL, fmt.Sprintf("gpzoo-advgp-worker-%d", a.Shard))
	if err != nil {
		return err
	}
	defer nc.Close()
	stop := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() { <-sig; close(stop) }()
	cfg := dist.WorkerConfig{Conn: nc, Run: a.Run, Shard: a.Shard, Of: a.Of, Delay: a.Delay, Stop: stop,
		Loader: func(ref dist.DataRef) (x, y *mat.Dense, err error) {
			if *data != "" { // this machine's data directory, when it has one
				ref.Dir = *data
			}
			return zoo.ADVGPLoader(ref)
		}}
	if !*quiet {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	_, err = dist.Work(cfg)
	return err
}
