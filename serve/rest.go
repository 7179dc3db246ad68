package serve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gpzoo/gpzoo/oip"
)

// routes is the REST API: the Open Inference Protocol's endpoints and /metrics. Every failure answers with
// the protocol's error object {"error": "..."}, unknown paths and methods included.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	health := func(h http.HandlerFunc) http.Handler { return s.logged("health", false, get(h)) }
	secured := func(kind string, infer bool, h http.Handler) http.Handler {
		return s.logged(kind, infer, s.requireToken(h))
	}
	mux.Handle("/v2/health/live", health(s.restLive))
	mux.Handle("/v2/health/ready", health(s.restReady))
	mux.Handle("/v2", secured("server_metadata", false, get(s.restServerMetadata)))
	mux.Handle("/v2/models/{name}", secured("model_metadata", false, get(s.restModelMetadata)))
	mux.Handle("/v2/models/{name}/versions/{version}", secured("model_metadata", false, get(s.restModelMetadata)))
	mux.Handle("/v2/models/{name}/ready", secured("model_ready", false, get(s.restModelReady)))
	mux.Handle("/v2/models/{name}/versions/{version}/ready", secured("model_ready", false, get(s.restModelReady)))
	mux.Handle("/v2/models/{name}/infer", secured("infer", true, post(s.restInfer)))
	mux.Handle("/v2/models/{name}/versions/{version}/infer", secured("infer", true, post(s.restInfer)))
	mux.Handle("/metrics", secured("metrics", false, get(s.met.handler().ServeHTTP)))
	mux.Handle("/", s.logged("unknown", false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errorf(http.StatusNotFound, "no such endpoint: %s %s", r.Method, clip(r.URL.Path)))
	})))
	return mux
}

// get and post refuse other methods with 405 (GET also answers HEAD).
func get(h http.HandlerFunc) http.Handler { return method(h, http.MethodGet, http.MethodHead) }

func post(h http.HandlerFunc) http.Handler { return method(h, http.MethodPost) }

func method(h http.HandlerFunc, allowed ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, m := range allowed {
			if r.Method == m {
				h(w, r)
				return
			}
		}
		w.Header().Set("Allow", allowed[0])
		writeError(w, r, errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s (use %s)", r.Method, clip(r.URL.Path), allowed[0]))
	})
}

func (s *Server) restLive(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, oip.LiveResponse{Live: s.Live()})
}

func (s *Server) restReady(w http.ResponseWriter, r *http.Request) {
	ready := s.Ready()
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, r, status, oip.ReadyResponse{Ready: ready})
}

func (s *Server) restServerMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, s.ServerMetadata())
}

func (s *Server) restModelMetadata(w http.ResponseWriter, r *http.Request) {
	name, version := r.PathValue("name"), r.PathValue("version")
	md, err := s.ModelMetadata(name, version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	info(r).model, info(r).version = md.Name, resolvedVersion(s, name, version)
	writeJSON(w, r, http.StatusOK, md)
}

func (s *Server) restModelReady(w http.ResponseWriter, r *http.Request) {
	name, version := r.PathValue("name"), r.PathValue("version")
	ready, err := s.ModelReady(name, version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	info(r).model, info(r).version = name, resolvedVersion(s, name, version)
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, r, status, oip.ModelReadyResponse{Name: name, Ready: ready})
}

// resolvedVersion is the version a request without one gets (for the log and metrics).
func resolvedVersion(s *Server, name, version string) string {
	if version != "" {
		return version
	}
	if vs := s.reg.table.Load().models[name]; len(vs) > 0 {
		return vs[len(vs)-1].version
	}
	return ""
}

func (s *Server) restInfer(w http.ResponseWriter, r *http.Request) {
	name, version := r.PathValue("name"), r.PathValue("version")
	ri := info(r)
	// An unknown model is a 404 before the body is read; the decoder's element limit follows from the model's
	// width (with slack, so that a few rows too many get the rows limit's clearer message).
	m, err := s.reg.lookup(name, version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	maxElements := (2*s.cfg.MaxRows + 16) * max(len(m.features), 1)
	m.release()
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeError(w, r, errorf(http.StatusRequestEntityTooLarge, "the request body of %d bytes exceeds the %d-byte limit", r.ContentLength, s.cfg.MaxBodyBytes))
		return
	}
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	req, err := oip.DecodeInferRequest(body, oip.Limits{MaxBytes: s.cfg.MaxBodyBytes, MaxElements: maxElements})
	if err != nil {
		ri.model, ri.version = m.name, m.version
		writeError(w, r, err)
		return
	}
	res, err := s.infer(r.Context(), name, version, req, &ri.requestInfo)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, res)
}

// writeJSON answers v as JSON with the status (HEAD: headers only).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a non-finite float could fail, and outputs are checked: answer the protocol's error all the same.
		status = http.StatusInternalServerError
		b, _ = json.Marshal(oip.ErrorResponse{Error: "encoding the response: " + err.Error()})
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

// writeError answers the protocol's error object: an *oip.Error's status and message, 500 for other errors.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *oip.Error
	if !errors.As(err, &e) {
		e = errorf(http.StatusInternalServerError, "%v", err)
	}
	if ri := info(r); ri != nil {
		ri.err = e.Msg
	}
	writeJSON(w, r, e.Status, e.Response())
}

// restInfo is a REST request's requestInfo and its error, filled by the handlers for the access log.
type restInfo struct {
	requestInfo
	err string
}

type restInfoKey struct{}

// info returns the request's restInfo (a throwaway one outside logged).
func info(r *http.Request) *restInfo {
	if ri, ok := r.Context().Value(restInfoKey{}).(*restInfo); ok {
		return ri
	}
	return &restInfo{}
}

// statusWriter records the status a handler answers.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// logged wraps h with the access log and the request metrics of its kind (health probes log at debug level).
func (s *Server) logged(kind string, infer bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &restInfo{}
		sw := &statusWriter{ResponseWriter: w}
		if infer {
			s.met.inflight.Inc()
			defer s.met.inflight.Dec()
		}
		r = r.WithContext(contextWith(r, ri))
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("handler panicked", "path", r.URL.Path, "panic", p)
				if sw.status == 0 {
					writeError(sw, r, errorf(http.StatusInternalServerError, "internal error"))
				}
			}
			d := time.Since(start)
			if sw.status == 0 {
				sw.status = http.StatusOK
			}
			if kind != "health" && kind != "unknown" {
				rows := 0
				if sw.status == http.StatusOK {
					rows = ri.rows
				}
				s.met.observe("rest", ri.model, ri.version, statusCode(sw.status), infer, rows, d)
			}
			level := slog.LevelInfo
			if kind == "health" {
				level = slog.LevelDebug
			}
			attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", clip(r.URL.Path)), slog.String("kind", kind),
				slog.String("model", ri.model), slog.String("version", ri.version), slog.Int("status", sw.status),
				slog.Int("rows", ri.rows), slog.Duration("duration", d), slog.String("remote", r.RemoteAddr)}
			if ri.err != "" {
				attrs = append(attrs, slog.String("error", ri.err))
			}
			s.log.LogAttrs(r.Context(), level, "request", attrs...)
		}()
		h.ServeHTTP(sw, r)
	})
}

func contextWith(r *http.Request, ri *restInfo) context.Context {
	return context.WithValue(r.Context(), restInfoKey{}, ri)
}
