package serve

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Config (a zero field takes its default).
const (
	DefaultListen         = "127.0.0.1:8080"
	DefaultMaxBatch       = 256
	DefaultMaxDelay       = 2 * time.Millisecond
	DefaultMaxBodyBytes   = 8 << 20
	DefaultMaxRows        = 10000
	DefaultMaxJointRows   = 2000
	DefaultMaxSamples     = 1000
	DefaultRequestTimeout = 30 * time.Second
	DefaultWatchDebounce  = 200 * time.Millisecond
)

// Config configures a Server. A zero field takes its default.
type Config struct {
	// Listen is the REST address, host:port (DefaultListen, loopback). An address that is not loopback
	// (127.0.0.0/8, ::1, localhost) requires TLSCert, TLSKey and Token.
	Listen string
	// GRPCListen is the gRPC address ("": no gRPC), under the same rule as Listen.
	GRPCListen string
	// TLSCert and TLSKey are the paths of a PEM certificate (chain) and its key: both or neither. With them
	// the server speaks HTTPS (and gRPC over TLS).
	TLSCert, TLSKey string
	// Token is the bearer token inference, metadata and /metrics require ("": none, loopback only). It is the
	// value itself: the command line reads it from a file or the environment, never from its arguments.
	Token string

	// MaxBatch is the largest number of rows one batched prediction coalesces (DefaultMaxBatch; 1 disables
	// batching). A request with more rows is predicted alone.
	MaxBatch int
	// MaxDelay is the longest a request waits for others to join its batch (DefaultMaxDelay).
	MaxDelay time.Duration
	// MaxBodyBytes bounds a request body (DefaultMaxBodyBytes; beyond: 413).
	MaxBodyBytes int64
	// MaxRows bounds the rows of a request (DefaultMaxRows; beyond: 413).
	MaxRows int
	// MaxJointRows bounds the rows of a request asking for joint outputs, O(N²) in memory: a full covariance,
	// or samples of a Gaussian predictive (DefaultMaxJointRows; beyond: 413).
	MaxJointRows int
	// MaxSamples bounds parameters.samples (DefaultMaxSamples; beyond: 400).
	MaxSamples int
	// RequestTimeout bounds the time of one inference (DefaultRequestTimeout; beyond: 503).
	RequestTimeout time.Duration
	// WatchDebounce is how long a watched directory must be quiet after a change to a file before the file is
	// (re)loaded (DefaultWatchDebounce), so that a file being written is read once complete.
	WatchDebounce time.Duration

	// Logger receives the access log and the model events (nil: slog.Default()).
	Logger *slog.Logger
	// Registerer receives the server's metrics (nil: a registry of the server's own, which /metrics serves).
	Registerer prometheus.Registerer
	// Gatherer is what /metrics serves when Registerer is set (nil: Registerer when it is also a Gatherer, such
	// as a *prometheus.Registry; prometheus.DefaultGatherer for prometheus.DefaultRegisterer).
	Gatherer prometheus.Gatherer
	// Version is the server version /v2 reports ("": gpzoo's module version).
	Version string
}

// withDefaults returns c with every zero field set to its default, or a *ConfigError for a negative limit or
// half a TLS pair.
func (c Config) withDefaults() (Config, error) {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	ints := []struct {
		name string
		v    *int
		def  int
	}{{"MaxBatch", &c.MaxBatch, DefaultMaxBatch}, {"MaxRows", &c.MaxRows, DefaultMaxRows},
		{"MaxJointRows", &c.MaxJointRows, DefaultMaxJointRows}, {"MaxSamples", &c.MaxSamples, DefaultMaxSamples}}
	for _, f := range ints {
		if *f.v < 0 {
			return c, &ConfigError{Field: f.name, Msg: fmt.Sprintf("%d is negative", *f.v)}
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	durs := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"MaxDelay", &c.MaxDelay, DefaultMaxDelay}, {"RequestTimeout", &c.RequestTimeout, DefaultRequestTimeout},
		{"WatchDebounce", &c.WatchDebounce, DefaultWatchDebounce}}
	for _, f := range durs {
		if *f.v < 0 {
			return c, &ConfigError{Field: f.name, Msg: fmt.Sprintf("%v is negative", *f.v)}
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.MaxBodyBytes < 0 {
		return c, &ConfigError{Field: "MaxBodyBytes", Msg: fmt.Sprintf("%d is negative", c.MaxBodyBytes)}
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return c, &ConfigError{Field: "TLSCert, TLSKey", Msg: "give both the certificate and its key, or neither"}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
