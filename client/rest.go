package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gpzoo/gpzoo/oip"
)

// maxResponseBytes bounds what the client reads of one REST answer.
const maxResponseBytes = 1 << 30

// restTransport speaks the protocol's REST API under a base URL.
type restTransport struct {
	base  string // scheme://host[:port][/prefix], no trailing slash
	hc    *http.Client
	owned bool // hc is the client's own (Close closes its idle connections)
	token string
}

func newREST(u *url.URL, o Options, tlsConf *tls.Config) (*restTransport, error) {
	t := &restTransport{base: strings.ToLower(u.Scheme) + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/"), token: o.Token}
	if o.HTTPClient != nil {
		if o.TLS != nil || o.CAFile != "" {
			return nil, &ConfigError{Field: "HTTPClient", Msg: "give TLS and CAFile, or an HTTPClient whose transport is configured, not both"}
		}
		t.hc = o.HTTPClient
		return t, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	t.hc, t.owned = &http.Client{Transport: tr}, true
	return t, nil
}

// modelPath returns the path of the model (at version) with the suffix ("", "/ready", "/infer").
func (t *restTransport) modelPath(model, version, suffix string) string {
	p := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p + suffix
}

// do sends a request and returns the answer's status and body; a failed exchange is a *TransportError.
func (t *restTransport) do(ctx context.Context, op, method, path string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, r)
	if err != nil {
		return 0, nil, &TransportError{Op: op, Target: t.base, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return 0, nil, &TransportError{Op: op, Target: t.base, Err: unwrapURL(err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return 0, nil, &TransportError{Op: op, Target: t.base, Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if len(b) > maxResponseBytes {
		return 0, nil, &TransportError{Op: op, Target: t.base, Err: fmt.Errorf("the answer exceeds %d bytes", maxResponseBytes)}
	}
	return resp.StatusCode, b, nil
}

// unwrapURL drops the *url.Error around a client error (its message repeats the URL).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}

// serverError is the *oip.Error of a failed answer: the protocol's error object's message, else the body.
func serverError(status int, body []byte) *oip.Error {
	var e oip.ErrorResponse
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return &oip.Error{Status: status, Msg: e.Error}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 512 {
		msg = msg[:512] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &oip.Error{Status: status, Msg: msg}
}

// decode reads a successful answer into v (numbers among parameters kept exact as json.Number).
func decode(op, target string, body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return &TransportError{Op: op, Target: target, Err: fmt.Errorf("the answer is not the protocol's JSON: %w", err)}
	}
	return nil
}

func (t *restTransport) infer(ctx context.Context, model, version string, req *oip.InferRequest) (*oip.InferResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, oip.BadRequest("encoding the request: %v", err)
	}
	status, b, err := t.do(ctx, "infer", http.MethodPost, t.modelPath(model, version, "/infer"), body)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, serverError(status, b)
	}
	var res oip.InferResponse
	if err := decode("infer", t.base, b, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (t *restTransport) metadata(ctx context.Context, model, version string) (*oip.ModelMetadata, error) {
	status, b, err := t.do(ctx, "metadata", http.MethodGet, t.modelPath(model, version, ""), nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, serverError(status, b)
	}
	var md oip.ModelMetadata
	if err := decode("metadata", t.base, b, &md); err != nil {
		return nil, err
	}
	return &md, nil
}

// ready reads the model ready endpoint: 200 is ready; 503 answering {"ready": false} is not ready.
func (t *restTransport) ready(ctx context.Context, model, version string) (bool, error) {
	status, b, err := t.do(ctx, "ready", http.MethodGet, t.modelPath(model, version, "/ready"), nil)
	if err != nil {
		return false, err
	}
	if status == http.StatusOK {
		return true, nil
	}
	var r oip.ModelReadyResponse
	if status == http.StatusServiceUnavailable && json.Unmarshal(b, &r) == nil && !r.Ready && strings.Contains(string(b), `"ready"`) {
		return false, nil
	}
	return false, serverError(status, b)
}

func (t *restTransport) close() error {
	if t.owned {
		t.hc.CloseIdleConnections()
	}
	return nil
}
