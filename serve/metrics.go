package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics. Model and version labels hold loaded models' names and versions
// only (a request for an unknown model is counted with empty ones), so that requests cannot grow the label set.
type metrics struct {
	requests      *prometheus.CounterVec   // gpzoo_serve_requests_total{model,version,protocol,code}
	latency       *prometheus.HistogramVec // gpzoo_serve_request_duration_seconds{model,protocol}
	rows          *prometheus.CounterVec   // gpzoo_serve_rows_total{model,protocol}
	batchRows     *prometheus.HistogramVec // gpzoo_serve_batch_rows{model}
	batchRequests *prometheus.HistogramVec // gpzoo_serve_batch_requests{model}
	inflight      prometheus.Gauge         // gpzoo_serve_inflight_requests
	loaded        prometheus.Gauge         // gpzoo_serve_models_loaded
	loadFailures  *prometheus.CounterVec   // gpzoo_serve_model_load_failures_total{model}
	loadFailing   *prometheus.GaugeVec     // gpzoo_serve_model_load_failing{model}
	gatherer      prometheus.Gatherer
}

func newMetrics(c Config) (*metrics, error) {
	reg, gat := c.Registerer, c.Gatherer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, gat = r, r
	}
	if gat == nil {
		if g, ok := reg.(prometheus.Gatherer); ok {
			gat = g
		} else if reg == prometheus.DefaultRegisterer {
			gat = prometheus.DefaultGatherer
		}
	}
	m := &metrics{
		gatherer: gat,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpzoo_serve_requests_total",
			Help: "Inference and metadata requests answered, by model, version, protocol (rest, grpc) and status code."},
			[]string{"model", "version", "protocol", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpzoo_serve_request_duration_seconds",
			Help:    "Time to answer an inference request, by model and protocol.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}},
			[]string{"model", "protocol"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpzoo_serve_rows_total",
			Help: "Input rows of the inference requests answered successfully, by model and protocol."},
			[]string{"model", "protocol"}),
		batchRows: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpzoo_serve_batch_rows",
			Help:    "Rows per batched prediction (the rows of the requests coalesced into one), by model.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14)}, []string{"model"}),
		batchRequests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpzoo_serve_batch_requests",
			Help:    "Requests coalesced per batched prediction, by model.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10)}, []string{"model"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gpzoo_serve_inflight_requests",
			Help: "Inference requests being answered."}),
		loaded: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gpzoo_serve_models_loaded",
			Help: "Model versions loaded and serving."}),
		loadFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpzoo_serve_model_load_failures_total",
			Help: "Model files refused (corrupt, truncated, newer, or not predicting), by model name."}, []string{"model"}),
		loadFailing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpzoo_serve_model_load_failing",
			Help: "1 while the latest file of a watched model was refused (the previous version, if any, keeps serving)."}, []string{"model"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.rows, m.batchRows, m.batchRequests, m.inflight, m.loaded, m.loadFailures, m.loadFailing} {
		if err := reg.Register(c); err != nil {
			return nil, &ConfigError{Field: "Registerer", Msg: "registering the metrics: " + err.Error()}
		}
	}
	return m, nil
}

// observe records one answered request. code is the HTTP status for REST, the gRPC code's name for gRPC;
// model and version are "" when the request named no loaded model; rows counts the input rows of a successful
// inference (0 otherwise).
func (m *metrics) observe(protocol, model, version, code string, infer bool, rows int, d time.Duration) {
	m.requests.WithLabelValues(model, version, protocol, code).Inc()
	if infer {
		m.latency.WithLabelValues(model, protocol).Observe(d.Seconds())
	}
	if rows > 0 {
		m.rows.WithLabelValues(model, protocol).Add(float64(rows))
	}
}

// handler serves the metrics in Prometheus' text format.
func (m *metrics) handler() http.Handler {
	if m.gatherer == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, r, errorf(http.StatusNotFound, "no metrics gatherer configured (Config.Gatherer)"))
		})
	}
	return promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{})
}

func statusCode(code int) string { return strconv.Itoa(code) }
