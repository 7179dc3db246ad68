package serve

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpzoo/gpzoo/gp/modelfile"
	"gonum.org/v1/gonum/mat"
)

// Server serves model files over the Open Inference Protocol. Make one with New; serve REST with
// ListenAndServe, Serve or Handler; stop with Shutdown. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	tls     *tls.Config
	token   *tokenHash
	version string
	met     *metrics
	reg     *registry
	sem     chan struct{} // bounds the predictions running at once
	handler http.Handler

	closing  atomic.Bool
	mu       sync.Mutex
	servers  []*http.Server
	grpc     transport
	shutdown chan struct{}
}

// transport is a protocol served beside REST on its own listener (gRPC: serve/grpc.go sets newGRPC).
type transport interface {
	// Serve answers on l until Shutdown; it returns nil after Shutdown.
	Serve(l net.Listener) error
	// Shutdown stops accepting and drains the requests in flight, until ctx ends.
	Shutdown(ctx context.Context) error
}

// newGRPC makes the gRPC transport of s; nil while no gRPC transport is linked, and New then refuses
// Config.GRPCListen.
var newGRPC func(s *Server) (transport, error)

// New checks cfg (a *ConfigError, or an *InsecureListenError for an address beyond loopback without TLS and
// token), loads every model source (a *SourceError or *LoadError for a named file that cannot be served; the
// files of a watched directory that do not load are logged and counted, and the server starts without them)
// and returns a Server ready to serve. It listens nowhere yet.
func New(cfg Config, models ...ModelSource) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	hasTLS, hasToken := cfg.TLSCert != "", cfg.Token != ""
	if err := CheckListen(cfg.Listen, hasTLS, hasToken); err != nil {
		return nil, err
	}
	if cfg.GRPCListen != "" {
		if err := CheckListen(cfg.GRPCListen, hasTLS, hasToken); err != nil {
			return nil, err
		}
		if newGRPC == nil {
			return nil, &ConfigError{Field: "GRPCListen", Msg: "this build of gpzoo has no gRPC transport"}
		}
	}
	if len(models) == 0 {
		return nil, &ConfigError{Field: "models", Msg: "no model sources (give NAME[@VERSION]=FILE or a directory)"}
	}
	s := &Server{cfg: cfg, log: cfg.Logger, version: cfg.Version, sem: make(chan struct{}, max(runtime.GOMAXPROCS(0), 1)),
		shutdown: make(chan struct{})}
	if s.version == "" {
		s.version = moduleVersion()
	}
	if s.tls, err = loadTLS(cfg); err != nil {
		return nil, err
	}
	if hasToken {
		h := tokenHash(sha256.Sum256([]byte(cfg.Token)))
		s.token = &h
	}
	if s.met, err = newMetrics(cfg); err != nil {
		return nil, err
	}
	s.reg = newRegistry(s)
	for _, src := range models {
		err := src.check()
		if err == nil {
			if src.Dir != "" {
				err = s.reg.watch(src.Dir)
			} else {
				err = s.reg.addNamed(src)
			}
		}
		if err != nil {
			s.reg.close()
			return nil, err
		}
	}
	s.handler = s.routes()
	if cfg.GRPCListen != "" {
		if s.grpc, err = newGRPC(s); err != nil {
			s.reg.close()
			return nil, err
		}
	}
	return s, nil
}

// load loads a model file and gives it its batcher.
func (s *Server) load(name, version, path string) (*model, error) {
	m, err := loadModel(name, version, path)
	if err != nil {
		return nil, err
	}
	m.batcher = &batcher{predict: func(x *mat.Dense, o modelfile.PredictOptions) (*modelfile.Prediction, error) {
		return safePredict(m.file, x, o)
	}, cols: len(m.features), maxRows: s.cfg.MaxBatch, maxDelay: s.cfg.MaxDelay, run: s.run,
		acquire: m.acquire, release: m.release, open: map[batchKey]*batch{},
		observe: func(rows, requests int) {
			s.met.batchRows.WithLabelValues(m.name).Observe(float64(rows))
			s.met.batchRequests.WithLabelValues(m.name).Observe(float64(requests))
		}}
	return m, nil
}

// Handler returns the REST API's handler (the Open Inference Protocol's endpoints and /metrics), for a caller
// that runs its own http.Server; the listening rule and TLS are then the caller's.
func (s *Server) Handler() http.Handler { return s.handler }

// ListenAndServe serves REST on Config.Listen (HTTPS with TLS) and, with Config.GRPCListen, gRPC, until
// Shutdown; it returns nil after Shutdown, or the first error of a listener.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	if s.grpc == nil {
		return s.Serve(l)
	}
	gl, err := net.Listen("tcp", s.cfg.GRPCListen)
	if err != nil {
		l.Close()
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- s.Serve(l) }()
	go func() { errs <- s.serveGRPC(gl) }()
	if err := <-errs; err != nil {
		return err
	}
	return <-errs
}

// Serve serves REST on l (wrapped in TLS when configured) until Shutdown; it returns nil after Shutdown. l's
// address is checked against the listening rule as Config.Listen is.
func (s *Server) Serve(l net.Listener) error {
	if err := CheckListen(l.Addr().String(), s.tls != nil, s.token != nil); err != nil {
		l.Close()
		return err
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// The body must arrive within the request timeout, and the answer leave within twice it.
		ReadTimeout:    s.cfg.RequestTimeout + 10*time.Second,
		WriteTimeout:   2*s.cfg.RequestTimeout + 20*time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		TLSConfig:      s.tls,
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	var err error
	if s.tls != nil {
		err = srv.ServeTLS(l, "", "")
	} else {
		err = srv.Serve(l)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// serveGRPC serves the gRPC transport on l (its address checked as Serve checks REST's).
func (s *Server) serveGRPC(l net.Listener) error {
	if err := CheckListen(l.Addr().String(), s.tls != nil, s.token != nil); err != nil {
		l.Close()
		return err
	}
	return s.grpc.Serve(l)
}

// Shutdown stops the server gracefully: readiness turns false, the listeners close, the requests in flight are
// answered (until ctx ends: then ctx's error), the directory watcher stops and the models are released. The
// command line calls it on SIGTERM.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	first := !s.closing.Swap(true)
	servers := s.servers
	s.mu.Unlock()
	if !first {
		<-s.shutdown
		return nil
	}
	defer close(s.shutdown)
	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Shutdown(ctx); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	if s.grpc != nil {
		if err := s.grpc.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	wg.Wait()
	s.reg.close()
	return errors.Join(errs...)
}
