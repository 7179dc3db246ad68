package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpzoo/gpzoo/internal/access"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gpzoo/gpzoo/serve"
)

// EnvServeToken is the environment variable gpzoo serve (and predict --url) read the bearer token from when no
// --token-file is given.
const EnvServeToken = "GPZOO_SERVE_TOKEN"

const serveUsage = `gpzoo serve: serve model files over the Open Inference Protocol (KServe v2), REST and gRPC.

Usage:
  gpzoo serve --model NAME[@VERSION]=FILE.gpz ... | --models DIR [flags]

Each --model serves FILE.gpz as NAME (VERSION: default the first 12 hex digits of the file's SHA-256; several
versions of one name may be served, /v2/models/NAME/versions/V picks one, the last given is the default).
--models DIR serves every *.gpz in DIR, named by its file name, and follows the directory: a replaced file is
loaded and swapped in atomically (requests in flight finish on the old model), a new one is added, a removed
one unloaded, and a corrupt one refused (logged, counted in /metrics) while the old model keeps serving.

  curl -s localhost:8080/v2/models/NAME/infer -d '{"inputs":[{"name":"x","datatype":"FP64","shape":[1,D],"data":[...]}]}'

Security: the server listens on loopback unless told otherwise. Any other address requires both TLS
(--tls-cert, --tls-key) and a bearer token (--token-file FILE, else $` + EnvServeToken + `; never on the
command line, which other users of the machine can read); without them it refuses to start. With a token,
inference, metadata and /metrics require "Authorization: Bearer TOKEN"; the health endpoints do not.

Flags:
  --model NAME[@VERSION]=FILE  a model to serve (repeatable)
  --models DIR                 serve and watch every *.gpz in DIR
  --listen HOST:PORT           REST address (default ` + serve.DefaultListen + `)
  --grpc-listen HOST:PORT      gRPC address (default: no gRPC)
  --tls-cert FILE, --tls-key FILE   PEM certificate and key: HTTPS and gRPC over TLS
  --token-file FILE            the bearer token clients must present (default $` + EnvServeToken + `)
  --max-batch N                rows one batched prediction coalesces (default 256; 1: no batching)
  --max-delay D                longest wait for a batch to fill (default 2ms)
  --max-body BYTES             largest request body (default 8 MiB)
  --max-rows N                 most rows in one request (default 10000)
  --timeout D                  longest inference (default 30s)
  --log-format text|json       access and event log format on standard error (default text)
  --quiet                      no access log (model events and errors only)

SIGTERM or SIGINT stops the server gracefully: in-flight requests are answered first.
`

// modelFlags collects repeated --model values.
type modelFlags []string

func (m *modelFlags) String() string     { return strings.Join(*m, ",") }
func (m *modelFlags) Set(v string) error { *m = append(*m, v); return nil }

func serveCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage) }
	var models modelFlags
	fs.Var(&models, "model", "NAME[@VERSION]=FILE.gpz")
	dir := fs.String("models", "", "model directory")
	listen := fs.String("listen", serve.DefaultListen, "REST address")
	grpcListen := fs.String("grpc-listen", "", "gRPC address")
	cert := fs.String("tls-cert", "", "TLS certificate")
	key := fs.String("tls-key", "", "TLS key")
	tokenFile := fs.String("token-file", "", "token file")
	maxBatch := fs.Int("max-batch", 0, "batch rows")
	maxDelay := fs.Duration("max-delay", 0, "batch delay")
	maxBody := fs.Int64("max-body", 0, "body bytes")
	maxRows := fs.Int("max-rows", 0, "rows per request")
	timeout := fs.Duration("timeout", 0, "inference timeout")
	logFormat := fs.String("log-format", "text", "text or json")
	quiet := fs.Bool("quiet", false, "no access log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected arguments %q (see gpzoo serve --help)", fs.Args())
	}
	var sources []serve.ModelSource
	for _, m := range models {
		src, err := serve.ParseModelSource(m)
		if err != nil {
			return fmt.Errorf("serve: --model: %w", err)
		}
		sources = append(sources, src)
	}
	if *dir != "" {
		sources = append(sources, serve.DirSource(*dir))
	}
	if len(sources) == 0 {
		return errors.New("serve: give --model NAME=FILE.gpz (repeatable) or --models DIR (see gpzoo serve --help)")
	}
	token, err := readServeToken(*tokenFile)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	var h slog.Handler
	switch *logFormat {
	case "text":
		h = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	case "json":
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	default:
		return fmt.Errorf("serve: --log-format %q: want text or json", *logFormat)
	}
	cfg := serve.Config{Listen: *listen, GRPCListen: *grpcListen, TLSCert: *cert, TLSKey: *key, Token: token,
		MaxBatch: *maxBatch, MaxDelay: *maxDelay, MaxBodyBytes: *maxBody, MaxRows: *maxRows, RequestTimeout: *timeout,
		Logger: slog.New(h)}
	// The listening rule is checked before any model is loaded: a server that would be reachable without TLS
	// and a token does not start.
	for _, addr := range []string{cfg.Listen, cfg.GRPCListen} {
		if addr == "" {
			continue
		}
		if err := serve.CheckListen(addr, cfg.TLSCert != "", token != ""); err != nil {
			return err // package serve's errors name it
		}
	}
	srv, err := serve.New(cfg, sources...)
	if err != nil {
		return err
	}
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "gpzoo serve: REST on %s://%s/v2", scheme, cfg.Listen)
	if cfg.GRPCListen != "" {
		fmt.Fprintf(stdout, ", gRPC on %s", cfg.GRPCListen)
	}
	fmt.Fprintln(stdout)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe() }()
	select {
	case err := <-done:
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	case s := <-sig:
		fmt.Fprintf(stdout, "gpzoo serve: %v: draining in-flight requests\n", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	if err := <-done; err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(stdout, "gpzoo serve: stopped")
	return nil
}

// readServeToken returns the bearer token of file, or, for file "", of $GPZOO_SERVE_TOKEN ("" when unset: no
// token).
func readServeToken(file string) (string, error) { return access.ReadToken(file, EnvServeToken) }
