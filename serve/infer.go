package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

// Infer answers one inference request for the model name at version ("": its default version, the one given
// last): the transport-independent core that every transport calls. Errors are *oip.Error with the HTTP status
// to answer (4xx for a bad request, 404 for an unknown model or version, 413 beyond the limits, 422 for a
// non-finite prediction, 503 past Config.RequestTimeout or ctx's end, 500 for the server's own failures). See
// the package documentation for the inputs, parameters and outputs.
func (s *Server) Infer(ctx context.Context, name, version string, req *oip.InferRequest) (*oip.InferResponse, error) {
	return s.infer(ctx, name, version, req, &requestInfo{})
}

// requestInfo is what an answered request tells its transport's log and metrics.
type requestInfo struct {
	model, version string // the loaded model's ("" when none was found)
	rows           int
}

func (s *Server) infer(ctx context.Context, name, version string, req *oip.InferRequest, info *requestInfo) (*oip.InferResponse, error) {
	if req == nil {
		return nil, errorf(http.StatusBadRequest, "no inference request")
	}
	m, err := s.reg.lookup(name, version)
	if err != nil {
		return nil, err
	}
	defer m.release()
	info.model, info.version = m.name, m.version
	o, offset, err := s.options(req.Parameters)
	if err != nil {
		return nil, err
	}
	x, err := m.inputs(req.Inputs, s.cfg.MaxRows)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	info.rows = n
	if offset > 0 {
		o.Keys = offsetKeys(o.Seed, offset, n)
	}
	want, err := m.wanted(req.Outputs, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	p, err := s.predict(ctx, m, x, o)
	if err != nil {
		return nil, err
	}
	outs, err := outputs(p, want, n, m.file)
	if err != nil {
		return nil, err
	}
	if !o.Latent {
		m.nameTargets(outs)
	}
	return &oip.InferResponse{ModelName: m.name, ModelVersion: m.version, ID: req.ID, Outputs: outs}, nil
}

// predict predicts x with o: in a batch with other requests when o allows it, else alone; either way within
// ctx and the server's limit of concurrent predictions.
func (s *Server) predict(ctx context.Context, m *model, x *mat.Dense, o modelfile.PredictOptions) (*modelfile.Prediction, error) {
	n, _ := x.Dims()
	var p *modelfile.Prediction
	var err error
	batchable := !o.FullCov && m.file.Batchable(o)
	switch {
	case batchable && s.cfg.MaxBatch > 1 && n <= s.cfg.MaxBatch:
		p, err = m.batcher.submit(ctx, x, o)
	case !batchable && n > s.cfg.MaxJointRows:
		return nil, errorf(http.StatusRequestEntityTooLarge, "%d rows: a request for joint outputs (full_cov, or samples of a Gaussian predictive) may have at most %d", n, s.cfg.MaxJointRows)
	default:
		p, err = s.alone(ctx, m, x, o)
	}
	if err != nil {
		return nil, s.predictError(ctx, m, err)
	}
	return p, nil
}

// alone predicts x by itself, in a goroutine so that the request can end (timeout, client gone) before the
// prediction does; the model stays acquired until the prediction ends.
func (s *Server) alone(ctx context.Context, m *model, x *mat.Dense, o modelfile.PredictOptions) (*modelfile.Prediction, error) {
	type result struct {
		p   *modelfile.Prediction
		err error
	}
	done := make(chan result, 1)
	m.acquire()
	go func() {
		defer m.release()
		var r result
		s.run(func() { r.p, r.err = safePredict(m.file, x, o) })
		done <- r
	}()
	select {
	case r := <-done:
		return r.p, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run runs f within the server's limit of concurrent predictions.
func (s *Server) run(f func()) {
	s.sem <- struct{}{}
	defer func() { <-s.sem }()
	f()
}

// safePredict is File.Predict with a panic turned into an error (a model's bug must not take the server down).
func safePredict(f *modelfile.File, x *mat.Dense, o modelfile.PredictOptions) (p *modelfile.Prediction, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("serve: the prediction panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return f.Predict(x, o)
}

// predictError maps a prediction's error to the protocol's: 503 past the deadline or for a request gone, 400
// for an option the model cannot honour, 500 (logged) otherwise.
func (s *Server) predictError(ctx context.Context, m *model, err error) error {
	var oe *oip.Error
	switch {
	case errors.As(err, &oe):
		return oe
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return errorf(http.StatusServiceUnavailable, "the prediction did not finish within the request timeout (%v)", s.cfg.RequestTimeout)
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return errorf(http.StatusServiceUnavailable, "the request was cancelled before its prediction finished")
	case errors.Is(err, gp.ErrUnsupported):
		return errorf(http.StatusBadRequest, "model %q cannot answer this request: %v", m.name, err)
	case errors.Is(err, gp.ErrConfig):
		return errorf(http.StatusBadRequest, "model %q: %v", m.name, err)
	}
	s.log.Error("prediction failed", "model", m.name, "version", m.version, "err", err)
	return errorf(http.StatusInternalServerError, "model %q: the prediction failed (see the server's log)", m.name)
}
