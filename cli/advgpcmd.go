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

  gpzoo advgp local ENTRY [run flags] [--nats URL [security flags]]
      one command on one machine: an embedded NATS server on loopback (or the NATS server at --nats), the
      parameter server and --workers worker processes (this binary's "advgp work"); prints the result as gpzoo
      run does
  gpzoo advgp serve ENTRY --run NAME [--nats URL | --listen HOST:PORT] [security flags] [--identities DIR]
                        [run flags]
      the parameter server only, on an external NATS server (--nats) or an embedded one listening on
      HOST:PORT (default 127.0.0.1:4222: this machine only; --port P is --listen 127.0.0.1:P). Workers must
      reach that address: with the default, only workers on this machine can. To take workers from other
      machines, listen on an interface they reach (--listen 0.0.0.0:4222, or the machine's address); the
      embedded server then requires TLS (--tls-cert FILE --tls-key FILE: its certificate, for the name workers
      use in --url; --tls-ca FILE: the CA that signed it) and client authentication: --identities DIR writes
      one NKey seed file per worker (DIR/NAME-worker-I.nk, mode 0600, never overwritten) that confines it to
      this run, else a token from --token-file FILE, $GPZOO_NATS_TOKEN, or a fresh random one printed with
      the workers' command. Start the workers yourself
  gpzoo advgp identities --run NAME --workers K --out DIR
      writes run NAME's identities for an external NATS server (--nats): DIR/NAME-server.nk (the server's
      --nkey), DIR/NAME-worker-I.nk (worker I's --nkey; seeds, mode 0600, never overwritten) and
      DIR/NAME-nats.conf, the users and their run-confining permissions to include in the NATS server's
      configuration
  gpzoo advgp work --url URL --run NAME --shard i/k [security flags] [--data DIR] [--delay D]
      one worker: joins run NAME, loads shard i of k of the entry's training data and pushes gradients until
      the server is done; a restarted worker joins again

Security flags (every connection; beyond loopback a connection is always TLS):
  --nkey FILE      NKey seed file (a worker's: from serve --identities)
  --creds FILE     NATS user credentials file (an operator-mode NATS server's user, from nsc)
  --token-file F   file holding the NATS token (default $GPZOO_NATS_TOKEN; never on the command line, which
                   other users of the machine can read)
  --tls-ca FILE    PEM CA that signed the NATS server's certificate (default: the system's roots)
  --tls-cert FILE, --tls-key FILE
                   this client's certificate and key (serve with the embedded server: the server's own)

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
		return advgpLocal(args[1:], stdout, stderr)
	case "serve":
		return advgpServe(args[1:], stdout, stderr)
	case "work":
		return advgpWork(args[1:], stderr)
	case "identities":
		return advgpIdentities(args[1:], stdout, stderr)
	}
	return fmt.Errorf("advgp: unknown subcommand %q (local, serve, work or identities; gpzoo advgp help)", args[0])
}

// ownFlags takes the flags fs defines (each with a value) out of args; the rest go to gpzoo run.
func ownFlags(cmd string, fs *flag.FlagSet, args []string) (rest []string, err error) {
	var mine []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || fs.Lookup(name) == nil {
			rest = append(rest, a)
			continue
		}
		mine = append(mine, a)
		if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%s: --%s needs a value", cmd, name)
			}
			mine = append(mine, args[i+1])
			i++
		}
	}
	if err := fs.Parse(mine); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return rest, nil
}

// advgpLocal runs the parameter server and worker processes on this machine.
func advgpLocal(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("advgp local", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	security := cluster.SecurityFlags(fs)
	rest, err := ownFlags("advgp local", fs, args)
	if err != nil {
		return err
	}
	sec, err := security()
	if err != nil {
		return fmt.Errorf("advgp local: %w", err)
	}
	return runEntryWith(rest, func(o *zoo.Options, data string) (func(), error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		if o.NATSURL != "" { // the embedded server on loopback needs none
			o.NATSSecurity = sec
		}
		o.Spawn = cluster.Command(exe, "advgp", "work", "--data", data)
		return func() {}, nil
	}, stdout, stderr)
}

// advgpServe runs the parameter server of an entry whose workers start elsewhere.
func advgpServe(args []string, stdout, stderr io.Writer) error {
	// --listen, --port, --identities and the security flags are serve's own flags; the rest go to gpzoo run.
	fs := flag.NewFlagSet("advgp serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:4222", "HOST:PORT of the embedded NATS server")
	port := fs.Int("port", 0, "port of the embedded NATS server on loopback")
	idDir := fs.String("identities", "", "folder to write one NKey identity per worker (and the server's) in")
	security := cluster.SecurityFlags(fs)
	rest, err := ownFlags("advgp serve", fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["port"] {
		if set["listen"] {
			return fmt.Errorf("advgp serve: --port and --listen exclude each other (--port P is --listen 127.0.0.1:P)")
		}
		*listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	}
	sec, err := security()
	if err != nil {
		return fmt.Errorf("advgp serve: %w", err)
	}
	if *idDir != "" {
		if set["token-file"] || set["creds"] || set["nkey"] {
			return fmt.Errorf("advgp serve: --identities excludes --token-file, --creds and --nkey (the server and each worker get an identity of their own)")
		}
		sec.Token = "" // from the environment: the identities replace it
	}
	return runEntryWith(rest, func(o *zoo.Options, data string) (func(), error) {
		if o.NATSRun == "" {
			return nil, fmt.Errorf("advgp serve: --run NAME is required (the workers' --run)")
		}
		if err := cluster.CheckRunName(o.NATSRun); err != nil {
			return nil, fmt.Errorf("advgp serve: %w", err)
		}
		o.Spawn = func(cluster.WorkerArgs) (cluster.Proc, error) { return external{}, nil }
		w := o.Workers
		if w == 0 {
			w = zoo.ADVGPWorkers
		}
		if o.NATSURL != "" {
			if *idDir != "" {
				return nil, fmt.Errorf("advgp serve: --identities is for the embedded NATS server (with --nats, the NATS server's operator issues credentials: --creds)")
			}
			o.NATSSecurity = sec
			workerCommand(stdout, o, w, sec, nil, set["token-file"], data)
			return func() {}, nil
		}
		host, _, _ := net.SplitHostPort(*listen)
		ec := cluster.EmbeddedConfig{Listen: *listen, Token: sec.Token, TLSCert: sec.TLSCert, TLSKey: sec.TLSKey, TLSCA: sec.TLSCA}
		var ids *cluster.Identities
		generated := false
		switch {
		case *idDir != "":
			// Checked before any file is written.
			if !cluster.IsLoopback(host) && (sec.TLSCert == "" || sec.TLSKey == "") {
				return nil, fmt.Errorf("%w: listening on %s: %w", cluster.ErrInsecureListen, *listen, cluster.ErrNoTLS)
			}
			if ids, err = cluster.IssueIdentities(o.NATSRun, w, *idDir); err != nil {
				return nil, fmt.Errorf("advgp serve: %w", err)
			}
			ec.Users = ids.NkeyUsers()
		case sec.Token == "" && !cluster.IsLoopback(host) && sec.TLSCert != "":
			if ec.Token, err = newToken(); err != nil {
				return nil, err
			}
			generated = true
		}
		e, err := cluster.StartEmbedded(ec)
		if err != nil {
			if ids != nil { // nobody has them yet: a second try must not find them
				for _, id := range append([]cluster.Identity{ids.Server}, ids.Workers...) {
					_ = os.Remove(id.SeedFile)
				}
			}
			return nil, fmt.Errorf("advgp serve: %w", err)
		}
		// The server's own connection: its identity (or the token) and the CA of the embedded server's certificate.
		o.NATSURL = e.URL
		o.NATSSecurity = cluster.Security{TLSCA: sec.TLSCA, Token: ec.Token}
		if ids != nil {
			o.NATSSecurity.NKeyFile = ids.Server.SeedFile
		}
		if e.Loopback {
			fmt.Fprintf(stdout, "advgp server: listening on %s (loopback: only workers on this machine can join; --listen HOST:PORT to take others)\n", *listen)
		} else {
			fmt.Fprintf(stdout, "advgp server: listening on %s, reachable from the network; clients must use TLS and authenticate\n", *listen)
		}
		if generated {
			fmt.Fprintf(stdout, "advgp server: generated NATS token (give it to the workers in $%s): %s\n", cluster.EnvToken, ec.Token)
		}
		workerCommand(stdout, o, w, cluster.Security{TLSCA: sec.TLSCA, Token: ec.Token}, ids, set["token-file"], data)
		return e.Shutdown, nil
	}, stdout, stderr)
}

// workerCommand prints the command that starts the workers: their identity files and CA on the command line,
// a token only as the environment variable's name (never its value).
func workerCommand(stdout io.Writer, o *zoo.Options, w int, sec cluster.Security, ids *cluster.Identities, tokenFile bool, data string) {
	env, extra := "", ""
	if sec.Token != "" && !tokenFile {
		env = cluster.EnvToken + "=... "
	}
	if sec.TLSCA != "" {
		extra += " --tls-ca " + sec.TLSCA
	}
	if tokenFile {
		extra += " --token-file FILE"
	}
	fmt.Fprintf(stdout, "advgp server: NATS %s, run %q; start %d workers:\n", o.NATSURL, o.NATSRun, w)
	if ids == nil {
		fmt.Fprintf(stdout, "  %sgpzoo advgp work --url %s --run %s --shard i/%d%s --data %s\n", env, o.NATSURL, o.NATSRun, w, extra, data)
		return
	}
	for i, id := range ids.Workers {
		fmt.Fprintf(stdout, "  gpzoo advgp work --url %s --run %s --shard %d/%d --nkey %s%s --data %s\n", o.NATSURL, o.NATSRun, i, w, id.SeedFile, extra, data)
	}
	fmt.Fprintf(stdout, "  (copy each worker's --nkey file, mode 0600, to its machine only)\n")
}

// advgpIdentities issues a run's identities for an external NATS server.
func advgpIdentities(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("advgp identities", flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := fs.String("run", "", "run name (the server's and the workers' --run)")
	workers := fs.Int("workers", 0, "number of workers")
	out := fs.String("out", "", "folder to write the identities in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return fmt.Errorf("advgp identities: want --run NAME --workers K --out DIR")
	}
	ids, err := cluster.IssueIdentities(*run, *workers, *out)
	if err != nil {
		return fmt.Errorf("advgp identities: %w", err)
	}
	fmt.Fprintf(stdout, "advgp identities: run %q, %d workers\n  NATS server: include %s in its configuration and reload it\n  parameter server: gpzoo advgp serve ENTRY --run %s --nats URL --nkey %s ...\n",
		ids.Run, len(ids.Workers), ids.ConfigFile, ids.Run, ids.Server.SeedFile)
	for i, w := range ids.Workers {
		fmt.Fprintf(stdout, "  worker %d: gpzoo advgp work --url URL --run %s --shard %d/%d --nkey %s ...\n", i, ids.Run, i, len(ids.Workers), w.SeedFile)
	}
	fmt.Fprintf(stdout, "  (copy each --nkey file, mode 0600, to its machine only)\n")
	return nil
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
	nc, err := cluster.Connect(a.URL, fmt.Sprintf("gpzoo-advgp-worker-%d", a.Shard), a.Security)
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
