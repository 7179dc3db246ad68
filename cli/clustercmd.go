package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

const clusterUsage = `gpzoo %[1]s: distributed training over NATS of every model whose objective is a sum over rows
(svgp and its layer families decoupled, hybrid, orth, orthnat; dgp; ADVGP, Peng et al. 2017): a parameter server
holds the model given by its Spec and applies the same optimiser, natural-gradient or proximal steps and
stopping rule as single-process training; k workers each own one shard of the rows and push the gradients of
their data term. The exact GP (gpr, Gaussian likelihood) trains by conjugate gradients on one server whose K
workers compute its kernel products, each its row blocks of every product (Wang et al. 2019); sgpr takes the
whole data set in one process and refuses it. (gpzoo advgp is the same command under its former name.)

  gpzoo run ENTRY --workers K [--tau T]          (= gpzoo %[1]s local ENTRY --workers K)
  gpzoo train --csv FILE ... --workers K [--tau T]
      one machine: an embedded NATS server on loopback, the parameter server and K worker processes (this
      binary's "%[1]s work"); prints the result and saves the model as without --workers
  gpzoo %[1]s serve (ENTRY | --csv FILE | --rows FILE [train flags]) --run NAME --workers K [--tau T]
                  [--nats URL | --listen HOST:PORT] [security flags] [--identities DIR] [--data-out DIR]
                  [--rejoin-wait D]
      the parameter server only, on an external NATS server (--nats) or an embedded one listening on
      HOST:PORT (default 127.0.0.1:4222: this machine only; --port P is --listen 127.0.0.1:P). Workers must
      reach that address: with the default, only workers on this machine can. To take workers from other
      machines, listen on an interface they reach (--listen 0.0.0.0:4222, or the machine's address); the
      embedded server then requires TLS (--tls-cert FILE --tls-key FILE: its certificate, for the name workers
      use in --url; --tls-ca FILE: the CA that signed it) and client authentication: --identities DIR writes
      one NKey seed file per worker (DIR/NAME-worker-I.nk, mode 0600, never overwritten) that confines it to
      this run, else a token from --token-file FILE, $GPZOO_NATS_TOKEN, or a fresh random one printed with
      the workers' command. Start the workers yourself: the command prints theirs. An ENTRY's workers load
      their split from their own --data DIR; with --csv the server writes the standardised training rows to a
      row file (.gpzr) in --data-out DIR (default: a temporary folder) that each worker reads its shard of:
      copy it to the workers' hosts; with --rows FILE (a row file or CSV too large for memory: gpzoo train
      --help) the workers read their shards of FILE itself, --data-file naming their host's copy. A gpr run's
      products need every worker: a silent one ends the run after 5 s, unless --rejoin-wait D (e.g. 2m) gives
      the same worker's command, started again (by hand or by a supervisor), D to join and take over its rows
  gpzoo %[1]s identities --run NAME --workers K --out DIR
      writes run NAME's identities for an external NATS server (--nats): DIR/NAME-server.nk (the server's
      --nkey), DIR/NAME-worker-I.nk (worker I's --nkey; seeds, mode 0600, never overwritten) and
      DIR/NAME-nats.conf, the users and their run-confining permissions to include in the NATS server's
      configuration
  gpzoo %[1]s work --url URL --run NAME --shard i/k [security flags] [--data DIR | --data-file FILE] [--delay D]
      one worker: joins run NAME, loads shard i of k of the training rows (an entry's split from DIR; or its
      shard of the row file, FILE being this host's copy) and pushes gradients until the server is done; a
      restarted worker joins again
  gpzoo %[1]s work --url URL --run NAME --shard i/k --products [security flags]
      one products worker of a gpr run (the command serve prints for --model gpr): gets the kernel and the
      inputs from the server and computes row blocks i of k of its kernel products until the server is done;
      server and workers exchange heartbeats, and a lost worker ends the run with an error unless it is
      started again within serve's --rejoin-wait

Security flags (every connection; beyond loopback a connection is always TLS):
  --nkey FILE      NKey seed file (a worker's: from serve --identities)
  --creds FILE     NATS user credentials file (an operator-mode NATS server's user, from nsc)
  --token-file F   file holding the NATS token (default $GPZOO_NATS_TOKEN; never on the command line, which
                   other users of the machine can read)
  --tls-ca FILE    PEM CA that signed the NATS server's certificate (default: the system's roots)
  --tls-cert FILE, --tls-key FILE
                   this client's certificate and key (serve with the embedded server: the server's own)

ENTRY is an entry of a family that is a sum over rows, of the exact GP (kin40k/gpr: its kernel products on the
workers) or an ADVGP entry (protein/advgp, kin40k/advgp, keggdirected/advgp, synthetic10m/advgp; gpzoo list). Run flags are those of gpzoo run (train flags those of
gpzoo train) plus --workers K (ADVGP default 4), --tau T (delay bound; ADVGP default 4, others 0 =
synchronous) and, for serve, --run NAME. --checkpoint DIR makes the server checkpoint its parameters and
optimiser state; --resume restarts from them. Each worker takes a minibatch of B rows of its shard (--batch B;
its whole shard when smaller), as data-parallel training takes a batch per process; an update aggregates the
gradients that arrived since the last one (ADVGP entries: every worker's newest, Algorithm 1).
`

// clusterCmd returns `gpzoo cluster` under name ("cluster", or its former name "advgp").
func clusterCmd(name string) func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
			fmt.Fprintf(stdout, clusterUsage, name)
			return nil
		}
		switch args[0] {
		case "local":
			return clusterLocal(name, args[1:], stdout, stderr)
		case "serve":
			return clusterServe(name, args[1:], stdout, stderr)
		case "work":
			return clusterWork(name, args[1:], stderr)
		case "identities":
			return clusterIdentities(name, args[1:], stdout, stderr)
		}
		return fmt.Errorf("%w: %s: unknown subcommand %q (local, serve, work or identities; gpzoo %s help)", ErrUsage, name, args[0], name)
	}
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

// clusterLocal runs the parameter server and worker processes on this machine: gpzoo run ENTRY or gpzoo train
// --csv FILE with --workers (the embedded NATS server on loopback, or the one at --nats with the security flags,
// which run and train take themselves).
func clusterLocal(name string, args []string, stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if hasFlag(args, "csv") {
		return trainCmdWith(args, func(c *zoo.CustomConfig) (func(), error) {
			if c.Cluster == nil {
				return nil, fmt.Errorf("%s local --csv: --workers K is required", name)
			}
			c.Cluster.Spawn = cluster.Command(exe, name, "work")
			return func() {}, nil
		}, stdout, stderr)
	}
	return runEntryWith(name+" local", args, func(e *zoo.Entry, o *zoo.Options, data string) (func(), error) {
		if o.Workers == 0 && e.Model != "advgp" {
			return nil, fmt.Errorf("%s local: --workers K is required", name)
		}
		o.Spawn = cluster.Command(exe, name, "work", "--data", data)
		return func() {}, nil
	}, stdout, stderr)
}

// hasFlag reports whether args name the flag --name (or -name).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && n == name {
			return true
		}
	}
	return false
}

// serveFlags are the flags of `gpzoo cluster serve` that are its own (the rest go to gpzoo run or train).
type serveFlags struct {
	name          string
	listen, idDir string
	dataOut       string
	sec           cluster.Security
	set           map[string]bool
	tokenFile     bool
	resume        bool // --resume: a restarted server takes its run's identities again
}

// serveNATS is where a served run's NATS is: the URL and Security of the server's own connection, the
// Security the workers' commands show, the identities issued, and what to shut down at the end.
type serveNATS struct {
	url       string
	serverSec cluster.Security
	workerSec cluster.Security
	ids       *cluster.Identities
	shutdown  func()
}

// start connects a served run to NATS: the external server at url, or an embedded one as the flags say.
func (f *serveFlags) start(url, run string, workers int, stdout io.Writer) (*serveNATS, error) {
	name := f.name
	if run == "" {
		return nil, fmt.Errorf("%s serve: --run NAME is required (the workers' --run)", name)
	}
	if err := cluster.CheckRunName(run); err != nil {
		return nil, fmt.Errorf("%s serve: %w", name, err)
	}
	if url != "" {
		if f.idDir != "" {
			return nil, fmt.Errorf("%s serve: --identities is for the embedded NATS server (with --nats, the NATS server's operator issues credentials: --creds, or gpzoo %s identities)", name, name)
		}
		return &serveNATS{url: url, serverSec: f.sec, workerSec: f.sec, shutdown: func() {}}, nil
	}
	sec := f.sec
	host, _, _ := net.SplitHostPort(f.listen)
	ec := cluster.EmbeddedConfig{Listen: f.listen, Token: sec.Token, TLSCert: sec.TLSCert, TLSKey: sec.TLSKey, TLSCA: sec.TLSCA}
	var (
		ids       *cluster.Identities
		err       error
		generated bool
	)
	switch {
	case f.idDir != "":
		// Checked before any file is written.
		if !cluster.IsLoopback(host) && (sec.TLSCert == "" || sec.TLSKey == "") {
			return nil, fmt.Errorf("%w: listening on %s: %w", cluster.ErrInsecureListen, f.listen, cluster.ErrNoTLS)
		}
		if f.resume {
			ids, err = cluster.LoadIdentities(run, workers, f.idDir)
		} else if ids, err = cluster.IssueIdentities(run, workers, f.idDir); errors.Is(err, cluster.ErrIdentityExists) {
			err = fmt.Errorf("%w (a restarted server takes its run's identities again with --resume)", err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s serve: %w", name, err)
		}
		ec.Users = ids.NkeyUsers()
	case sec.Token == "" && !cluster.IsLoopback(host) && sec.TLSCert != "":
		if ec.Token, err = newToken(name); err != nil {
			return nil, err
		}
		generated = true
	}
	e, err := cluster.StartEmbedded(ec)
	if err != nil {
		if ids != nil && !f.resume { // nobody has them yet: a second try must not find them
			for _, id := range append([]cluster.Identity{ids.Server}, ids.Workers...) {
				_ = os.Remove(id.SeedFile)
			}
		}
		return nil, fmt.Errorf("%s serve: %w", name, err)
	}
	// The server's own connection: its identity (or the token) and the CA of the embedded server's certificate.
	n := &serveNATS{url: e.URL, serverSec: cluster.Security{TLSCA: sec.TLSCA, Token: ec.Token},
		workerSec: cluster.Security{TLSCA: sec.TLSCA, Token: ec.Token}, ids: ids, shutdown: e.Shutdown}
	if ids != nil {
		n.serverSec.NKeyFile = ids.Server.SeedFile
	}
	if e.Loopback {
		fmt.Fprintf(stdout, "%s server: listening on %s (loopback: only workers on this machine can join; --listen HOST:PORT to take others)\n", name, f.listen)
	} else {
		fmt.Fprintf(stdout, "%s server: listening on %s, reachable from the network; clients must use TLS and authenticate\n", name, f.listen)
	}
	if generated {
		fmt.Fprintf(stdout, "%s server: generated NATS token (give it to the workers in $%s): %s\n", name, cluster.EnvToken, ec.Token)
	}
	return n, nil
}

// workerCommand prints the command that starts the workers: their identity files and CA on the command line,
// a token only as the environment variable's name (never its value); data is the workers' data flag.
func (f *serveFlags) workerCommand(stdout io.Writer, n *serveNATS, run string, w int, data string) {
	env, extra := "", ""
	if n.workerSec.Token != "" && !f.tokenFile {
		env = cluster.EnvToken + "=... "
	}
	if n.workerSec.TLSCA != "" {
		extra += " --tls-ca " + n.workerSec.TLSCA
	}
	if f.tokenFile {
		extra += " --token-file FILE"
	}
	fmt.Fprintf(stdout, "%s server: NATS %s, run %q; start %d workers:\n", f.name, n.url, run, w)
	if n.ids == nil {
		fmt.Fprintf(stdout, "  %sgpzoo %s work --url %s --run %s --shard i/%d%s %s\n", env, f.name, n.url, run, w, extra, data)
		return
	}
	for i, id := range n.ids.Workers {
		fmt.Fprintf(stdout, "  gpzoo %s work --url %s --run %s --shard %d/%d --nkey %s%s %s\n", f.name, n.url, run, i, w, id.SeedFile, extra, data)
	}
	fmt.Fprintf(stdout, "  (copy each worker's --nkey file, mode 0600, to its machine only)\n")
}

// clusterServe runs the parameter server of an entry or of a CSV file whose workers start elsewhere.
func clusterServe(name string, args []string, stdout, stderr io.Writer) error {
	// --listen, --port, --identities, --data-out and the security flags are serve's own flags; the rest go to
	// gpzoo run (an entry) or gpzoo train (--csv).
	fs := newFlagSet(name+" serve", io.Discard)
	f := &serveFlags{name: name, set: map[string]bool{}}
	listen := fs.String("listen", "127.0.0.1:4222", "HOST:PORT of the embedded NATS server")
	port := fs.Int("port", 0, "port of the embedded NATS server on loopback")
	idDir := fs.String("identities", "", "folder to write one NKey identity per worker (and the server's) in")
	dataOut := fs.String("data-out", "", "folder for the row file of a --csv run's workers")
	rejoin := fs.Duration("rejoin-wait", 0, "how long a gpr run waits for a silent products worker started again")
	security := cluster.SecurityFlags(fs)
	rest, err := ownFlags(name+" serve", fs, args)
	if err != nil {
		return err
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.set["port"] {
		if f.set["listen"] {
			return fmt.Errorf("%s serve: --port and --listen exclude each other (--port P is --listen 127.0.0.1:P)", name)
		}
		*listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	}
	f.listen, f.idDir, f.dataOut, f.tokenFile, f.resume = *listen, *idDir, *dataOut, f.set["token-file"], hasFlag(rest, "resume")
	if f.sec, err = security(); err != nil {
		return fmt.Errorf("%s serve: %w", name, err)
	}
	if f.idDir != "" {
		if f.set["token-file"] || f.set["creds"] || f.set["nkey"] {
			return fmt.Errorf("%s serve: --identities excludes --token-file, --creds and --nkey (the server and each worker get an identity of their own)", name)
		}
		f.sec.Token = "" // from the environment: the identities replace it
	}
	external := func(cluster.WorkerArgs) (cluster.Proc, error) { return externalProc{}, nil }
	if *rejoin < 0 {
		return fmt.Errorf("%w: %s serve: --rejoin-wait %v is negative", ErrUsage, name, *rejoin)
	}
	// rejoinFor refuses --rejoin-wait for a run without products workers, and sets it for one with them.
	rejoinFor := func(products bool, wait *time.Duration) error {
		if f.set["rejoin-wait"] && !products {
			return fmt.Errorf("%s serve: --rejoin-wait is for gpr's products workers (the row-sum models' workers rejoin at any time)", name)
		}
		*wait = *rejoin
		return nil
	}
	if hasFlag(rest, "rows") || hasFlag(rest, "csv") {
		return trainCmdWith(rest, func(c *zoo.CustomConfig) (func(), error) {
			cc := c.Cluster
			if cc == nil {
				return nil, fmt.Errorf("%s serve: --workers K is required", name)
			}
			products := zoo.ClusterProducts(c.Family)
			if err := rejoinFor(products, &cc.RejoinWait); err != nil {
				return nil, err
			}
			n, err := f.start(cc.URL, cc.Run, cc.Workers, stdout)
			if err != nil {
				return nil, err
			}
			cc.URL, cc.Security, cc.Spawn, cc.DataDir = n.url, n.serverSec, external, f.dataOut
			if products { // products workers: the server sends them the inputs
				f.workerCommand(stdout, n, cc.Run, cc.Workers, "--products")
				return n.shutdown, nil
			}
			cc.OnData = func(path string) { // the row file the workers read: --rows FILE, or --csv's rows written out
				f.workerCommand(stdout, n, cc.Run, cc.Workers, "--data-file "+path)
				fmt.Fprintf(stdout, "  (each worker reads only its shard of %s: give workers on other hosts a copy at the path of their --data-file)\n", path)
			}
			return n.shutdown, nil
		}, stdout, stderr)
	}
	if f.dataOut != "" {
		return fmt.Errorf("%s serve: --data-out is for --csv runs (an entry's workers load their split from their --data)", name)
	}
	return runEntryWith(name+" serve", rest, func(e *zoo.Entry, o *zoo.Options, data string) (func(), error) {
		w := o.Workers
		if w == 0 {
			if e.Model != "advgp" {
				return nil, fmt.Errorf("%s serve: --workers K is required", name)
			}
			w = zoo.ADVGPWorkers
		}
		products := e.Config != nil && zoo.ClusterProducts(e.Config.Family)
		if err := rejoinFor(products, &o.RejoinWait); err != nil {
			return nil, err
		}
		n, err := f.start(o.NATSURL, o.NATSRun, w, stdout)
		if err != nil {
			return nil, err
		}
		o.NATSURL, o.NATSSecurity, o.Spawn = n.url, n.serverSec, external
		if products { // products workers: the server sends them the inputs
			f.workerCommand(stdout, n, o.NATSRun, w, "--products")
		} else {
			f.workerCommand(stdout, n, o.NATSRun, w, "--data "+data)
		}
		return n.shutdown, nil
	}, stdout, stderr)
}

// clusterIdentities issues a run's identities for an external NATS server.
func clusterIdentities(name string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(name+" identities", stderr)
	run := fs.String("run", "", "run name (the server's and the workers' --run)")
	workers := fs.Int("workers", 0, "number of workers")
	out := fs.String("out", "", "folder to write the identities in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return fmt.Errorf("%s identities: want --run NAME --workers K --out DIR", name)
	}
	ids, err := cluster.IssueIdentities(*run, *workers, *out)
	if err != nil {
		return fmt.Errorf("%s identities: %w", name, err)
	}
	fmt.Fprintf(stdout, "%s identities: run %q, %d workers\n  NATS server: include %s in its configuration and reload it\n  parameter server: gpzoo %s serve ENTRY --run %s --nats URL --nkey %s ...\n",
		name, ids.Run, len(ids.Workers), ids.ConfigFile, name, ids.Run, ids.Server.SeedFile)
	for i, w := range ids.Workers {
		fmt.Fprintf(stdout, "  worker %d: gpzoo %s work --url URL --run %s --shard %d/%d --nkey %s ...\n", i, name, ids.Run, i, len(ids.Workers), w.SeedFile)
	}
	fmt.Fprintf(stdout, "  (copy each --nkey file, mode 0600, to its machine only)\n")
	return nil
}

// newToken returns a fresh random NATS token (128 bits, hex).
func newToken(name string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("%s serve: generating a token: %w", name, err)
	}
	return hex.EncodeToString(b), nil
}

// externalProc is the Proc of a worker started by somebody else.
type externalProc struct{}

func (externalProc) Wait() error { return nil }
func (externalProc) Kill() error { return nil }

// clusterWork runs one worker.
func clusterWork(name string, args []string, stderr io.Writer) error {
	fs := newFlagSet(name+" work", stderr)
	get := cluster.WorkerFlags(fs)
	data := fs.String("data", datasets.DefaultDir(), "benchmark data directory (an entry's workers)")
	dataFile := fs.String("data-file", "", "this host's copy of the run's row file (a --csv run's workers; default: the server's path)")
	quiet := fs.Bool("quiet", true, "no progress output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := get()
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() { <-sig; close(stop) }()
	// A worker may start before its server: it keeps trying to connect for as long as it would try to join.
	nc, err := cluster.ConnectWithin(a.URL, fmt.Sprintf("gpzoo-%s-worker-%d", name, a.Shard), a.Security, cluster.DefaultJoinTimeout, stop)
	if err != nil {
		return err
	}
	defer nc.Close()
	if a.Products { // the exact GP's kernel products: the server sends the inputs with the kernel
		err := cluster.WorkProducts(cluster.ProductWorkerConfig{Conn: nc, Run: a.Run, Index: a.Shard, Of: a.Of, Stop: stop})
		fmt.Fprintf(stderr, "%s products worker %d/%d: peak RSS %s\n", name, a.Shard, a.Of, rssString(peakRSS(os.Getpid())))
		return err
	}
	cfg := cluster.WorkerConfig{Conn: nc, Run: a.Run, Shard: a.Shard, Of: a.Of, Delay: a.Delay, Stop: stop, DataFile: *dataFile,
		Loader: func(ref cluster.DataRef) (x, y *mat.Dense, err error) {
			if *data != "" { // this machine's data directory, when it has one
				ref.Dir = *data
			}
			return zoo.ClusterLoader(ref)
		}}
	if !*quiet {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	res, err := cluster.Work(cfg)
	if res != nil && res.Gradients > 0 { // one line for the operator: what this worker did, and its memory
		fmt.Fprintf(stderr, "%s worker %d/%d: %d gradients over %d rows, %.1f s computing, peak RSS %s\n",
			name, a.Shard, a.Of, res.Gradients, res.Points, res.Seconds, rssString(peakRSS(os.Getpid())))
	}
	return err
}
