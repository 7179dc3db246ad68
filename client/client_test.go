package client

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

const token = "s3cret-token"

// transports serves one fake over REST and gRPC (plaintext loopback, with a token) and returns a client of each.
func transports(t *testing.T, f *fake, o Options) map[string]*Client {
	t.Helper()
	out := map[string]*Client{}
	for name, target := range map[string]string{"rest": serveREST(t, f), "grpc": "grpc://" + serveGRPC(t, f, nil)} {
		c, err := New(target, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { c.Close() })
		out[name] = c
	}
	return out
}

func statusOf(err error) int {
	var e *oip.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func TestInfer(t *testing.T) {
	f := &fake{token: token}
	x := mat.NewDense(3, 2, []float64{1, 2, 0.1, 0.2, -1e300, 5e-324})
	for name, c := range transports(t, f, Options{Token: token}) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r, err := c.Infer(ctx, "m", x, Params{})
			if err != nil {
				t.Fatal(err)
			}
			a, b := 0.1, 0.2
			want := []float64{3, a + b, -1e300 + 5e-324}
			if !reflect.DeepEqual(r.Mean.RawMatrix().Data, want) || r.Var.At(2, 0) != 2 || r.ModelVersion != "2" || r.ModelName != "m" {
				t.Errorf("mean %v var %v version %q", r.Mean.RawMatrix().Data, mat.Formatted(r.Var), r.ModelVersion)
			}
			if len(r.Outputs) != 2 || r.Outputs[OutMean] == nil || r.Probs != nil || r.Cov != nil {
				t.Errorf("outputs %v", r.Outputs)
			}
			in := f.lastRequest().Inputs
			if len(in) != 1 || in[0].Name != InputTensor || !reflect.DeepEqual(in[0].Shape, []int64{3, 2}) || f.lastRequest().Parameters != nil {
				t.Errorf("sent %+v", f.lastRequest())
			}

			// Features: one [N] tensor per feature; parameters; version; full covariance and samples.
			r, err = c.Infer(ctx, "m", x, Params{Version: "1", Features: []string{"b", "a"}, Latent: true, FullCov: true, Samples: 2, Seed: 1 << 63, RowOffset: 1000})
			if err != nil {
				t.Fatal(err)
			}
			sent := f.lastRequest()
			if len(sent.Inputs) != 2 || sent.Inputs[0].Name != "b" || !reflect.DeepEqual(sent.Inputs[0].Data, []float64{1, 0.1, -1e300}) || !reflect.DeepEqual(sent.Inputs[0].Shape, []int64{3}) {
				t.Errorf("feature tensors %+v", sent.Inputs)
			}
			latent, _ := sent.Parameters.Bool(ParamLatent)
			full, _ := sent.Parameters.Bool(ParamFullCov)
			s, _, errS := sent.Parameters.Int(ParamSamples)
			seed, _, errSeed := sent.Parameters.Uint(ParamSeed)
			offset, _, errOffset := sent.Parameters.Int(ParamRowOffset)
			if !latent || !full || s != 2 || seed != 1<<63 || offset != 1000 || errS != nil || errSeed != nil || errOffset != nil {
				t.Errorf("parameters %v", sent.Parameters)
			}
			if r.ModelVersion != "1" || len(r.Cov) != 1 || r.Cov[0].At(2, 1) != 3 || len(r.Samples) != 2 || r.Samples[1].At(2, 0) != 5 {
				t.Errorf("version %q cov %v samples %v", r.ModelVersion, r.Cov, r.Samples)
			}

			// Outputs asked for by name.
			if _, err := c.Infer(ctx, "m", x, Params{Outputs: []string{OutMean}}); err != nil || len(f.lastRequest().Outputs) != 1 {
				t.Errorf("outputs: %v %+v", err, f.lastRequest().Outputs)
			}
		})
	}
}

func TestInferErrors(t *testing.T) {
	f := &fake{token: token}
	x := mat.NewDense(1, 2, []float64{1, 2})
	good := transports(t, f, Options{Token: token})
	bad := transports(t, f, Options{Token: "wrong"})
	none := transports(t, f, Options{})
	ctx := context.Background()
	for _, name := range []string{"rest", "grpc"} {
		t.Run(name, func(t *testing.T) {
			c := good[name]
			cases := []struct {
				what   string
				err    error
				status int
			}{
				{"unknown model", func() error { _, err := c.Infer(ctx, "nope", x, Params{}); return err }(), 404},
				{"unknown version", func() error { _, err := c.Infer(ctx, "m", x, Params{Version: "9"}); return err }(), 404},
				{"wrong token", func() error { _, err := bad[name].Infer(ctx, "m", x, Params{}); return err }(), 401},
				{"no token", func() error { _, err := none[name].Infer(ctx, "m", x, Params{}); return err }(), 401},
				{"metadata unknown", func() error { _, err := c.Metadata(ctx, "nope", ""); return err }(), 404},
				{"ready unknown", func() error { _, err := c.Ready(ctx, "nope"); return err }(), 404},
				{"features count", func() error { _, err := c.Infer(ctx, "m", x, Params{Features: []string{"a"}}); return err }(), 400},
				{"features repeated", func() error { _, err := c.Infer(ctx, "m", x, Params{Features: []string{"a", "a"}}); return err }(), 400},
				{"no rows", func() error { _, err := c.Infer(ctx, "m", &mat.Dense{}, Params{}); return err }(), 400},
				{"nil rows", func() error { _, err := c.Infer(ctx, "m", nil, Params{}); return err }(), 400},
			}
			for _, tc := range cases {
				if got := statusOf(tc.err); got != tc.status {
					t.Errorf("%s: %v (status %d), want %d", tc.what, tc.err, got, tc.status)
				}
			}
		})
	}
	// The server's 4xx and 5xx statuses come back (over gRPC through its status codes).
	for status, msg := range map[int]string{400: "bad input", 413: "too many rows", 422: "output \"variance\" is not finite at row 0", 503: "shutting down"} {
		f.answer = func(*oip.InferRequest) (*oip.InferResponse, error) { return nil, oip.Errorf(status, "%s", msg) }
		for name, c := range good {
			_, err := c.Infer(ctx, "m", x, Params{})
			var e *oip.Error
			if !errors.As(err, &e) || e.Status != status || e.Msg != msg {
				t.Errorf("%s: %v, want %d %q", name, err, status, msg)
			}
		}
	}
	// An answer whose outputs do not fit the rows is a 502.
	for _, o := range []oip.ResponseOutput{
		{Name: OutMean, Shape: []int64{2, 1}, Datatype: oip.FP64, Data: []float64{1, 2}},
		{Name: OutProbabilities, Shape: []int64{1, 0}, Datatype: oip.FP64, Data: []float64{}},
		{Name: OutLabel, Shape: []int64{2}, Datatype: oip.FP64, Data: []float64{1, 2}},
		{Name: OutCovariance, Shape: []int64{1, 1, 2}, Datatype: oip.FP64, Data: []float64{1, 2}},
		{Name: OutSamples, Shape: []int64{1, 2, 1}, Datatype: oip.FP64, Data: []float64{1, 2}},
	} {
		f.answer = func(*oip.InferRequest) (*oip.InferResponse, error) {
			return &oip.InferResponse{ModelName: "m", Outputs: []oip.ResponseOutput{o}}, nil
		}
		for name, c := range good {
			if _, err := c.Infer(ctx, "m", x, Params{}); statusOf(err) != 502 {
				t.Errorf("%s: output %+v: %v, want 502", name, o, err)
			}
		}
	}
	// REST only (gRPC's conversion refuses it first): an answer whose shape does not hold its data.
	f.answer = func(*oip.InferRequest) (*oip.InferResponse, error) {
		return &oip.InferResponse{ModelName: "m", Outputs: []oip.ResponseOutput{{Name: OutMean, Shape: []int64{1, 2}, Datatype: oip.FP64, Data: []float64{1}}}}, nil
	}
	for name, c := range good {
		if _, err := c.Infer(ctx, "m", x, Params{}); statusOf(err) != 502 && statusOf(err) != 500 {
			t.Errorf("%s: short output: %v, want 502 (REST) or 500 (gRPC: the server cannot send it)", name, err)
		}
	}
}

func TestMetadataAndReady(t *testing.T) {
	f := &fake{}
	for name, c := range transports(t, f, Options{}) {
		md, err := c.Metadata(context.Background(), "m", "1")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if md.Name != "m" || len(md.Inputs) != 3 || md.Inputs[1].Name != "a" || !reflect.DeepEqual(md.Inputs[0].Shape, []int64{-1, 2}) || !reflect.DeepEqual(md.Versions, []string{"1", "2"}) {
			t.Errorf("%s: metadata %+v", name, md)
		}
		if ok, err := c.Ready(context.Background(), "m"); !ok || err != nil {
			t.Errorf("%s: Ready(m) = %v, %v", name, ok, err)
		}
		if ok, err := c.Ready(context.Background(), "z"); ok || err != nil {
			t.Errorf("%s: Ready(z) = %v, %v; want false, nil", name, ok, err)
		}
	}
}

func TestTransportErrors(t *testing.T) {
	// Nothing listens: a *TransportError (REST); gRPC reports Unavailable (503).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := New("http://"+addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(1, 1, []float64{1})
	var te *TransportError
	if _, err := c.Infer(context.Background(), "m", x, Params{}); !errors.As(err, &te) {
		t.Errorf("REST, nobody listening: %T %v, want a *TransportError", err, err)
	}
	g, err := New("grpc://"+addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Infer(context.Background(), "m", x, Params{}); statusOf(err) != 503 {
		t.Errorf("gRPC, nobody listening: %v, want 503", err)
	}
	// A timeout is a *TransportError wrapping context.DeadlineExceeded, on both transports.
	f := &fake{answer: func(*oip.InferRequest) (*oip.InferResponse, error) {
		time.Sleep(300 * time.Millisecond)
		return &oip.InferResponse{}, nil
	}}
	for name, c := range transports(t, f, Options{Timeout: 50 * time.Millisecond}) {
		_, err := c.Infer(context.Background(), "m", x, Params{})
		if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: timeout: %T %v", name, err, err)
		}
	}
	// Not the protocol's JSON.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }))
	defer srv.Close()
	c, _ = New(srv.URL, Options{})
	if _, err := c.Infer(context.Background(), "m", x, Params{}); !errors.As(err, &te) {
		t.Errorf("HTML answer: %T %v, want a *TransportError", err, err)
	}
	// An error that is not the protocol's object keeps its status and body.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gateway down", http.StatusBadGateway) }))
	defer srv2.Close()
	c, _ = New(srv2.URL, Options{})
	if _, err := c.Infer(context.Background(), "m", x, Params{}); statusOf(err) != 502 || err.Error() != "gateway down" {
		t.Errorf("plain error: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	cases := []struct {
		target string
		o      Options
		field  string
	}{
		{"example.com:8080", Options{}, "target"},
		{"ftp://example.com", Options{}, "target"},
		{"http://", Options{}, "target"},
		{"http://u:p@example.com", Options{}, "target"},
		{"http://example.com?x=1", Options{}, "target"},
		{"grpc://example.com", Options{}, "target"},
		{"grpc://example.com:1/v2", Options{}, "target"},
		{"http://example.com:8080", Options{Token: "t"}, "Token"},
		{"grpc://10.1.2.3:8081", Options{Token: "t"}, "Token"},
		{"http://[::ffff:10.0.0.1]:80", Options{Token: "t"}, "Token"},
		{"https://example.com", Options{Token: "a\nb"}, "Token"},
		{"http://127.0.0.1:1", Options{CAFile: notPEM}, "TLS"},
		{"https://example.com", Options{CAFile: notPEM}, "CAFile"},
		{"https://example.com", Options{CAFile: filepath.Join(dir, "missing")}, "CAFile"},
		{"https://example.com", Options{CAFile: notPEM, HTTPClient: http.DefaultClient}, "CAFile"},
	}
	for _, c := range cases {
		_, err := New(c.target, c.o)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("New(%q, %+v): %v, want a *ConfigError on %s", c.target, c.o, err, c.field)
		}
	}
	for _, ok := range []struct {
		target string
		o      Options
	}{
		{"http://127.0.0.1:8080", Options{Token: "t"}},
		{"http://localhost:8080/prefix/", Options{Token: "t"}},
		{"grpc://[::1]:8081", Options{Token: "t"}},
		{"http://example.com:8080", Options{Token: "t", Insecure: true}},
		{"https://example.com", Options{Token: "t"}},
		{"grpcs://example.com:443", Options{Token: "t"}},
	} {
		c, err := New(ok.target, ok.o)
		if err != nil {
			t.Errorf("New(%q): %v", ok.target, err)
			continue
		}
		c.Close()
	}
}

// TLS with a CA file, over both transports; without the CA the certificate is refused.
func TestTLS(t *testing.T) {
	f := &fake{token: token}
	srv := httptest.NewUnstartedServer(f.rest())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	grpcAddr := serveGRPC(t, f, &srv.TLS.Certificates[0])
	x := mat.NewDense(1, 2, []float64{1, 2})
	for _, target := range []string{srv.URL, "grpcs://" + grpcAddr} {
		c, err := New(target, Options{Token: token, CAFile: ca})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := c.Infer(context.Background(), "m", x, Params{}); err != nil || r.Mean.At(0, 0) != 3 {
			t.Errorf("%s: %v", target, err)
		}
		c.Close()
		c, _ = New(target, Options{Token: token})
		if _, err := c.Infer(context.Background(), "m", x, Params{}); err == nil {
			t.Errorf("%s: an unknown authority was trusted", target)
		}
		c.Close()
	}
}

func TestParseModelURL(t *testing.T) {
	good := []struct{ url, target, model, version string }{
		{"https://h:8443/v2/models/kin8nm", "https://h:8443", "kin8nm", ""},
		{"http://127.0.0.1:8080/v2/models/m/", "http://127.0.0.1:8080", "m", ""},
		{"http://h/api/v2/models/m/versions/3", "http://h/api", "m", "3"},
		{"grpc://h:8081/v2/models/a%20b/versions/v%2F1", "grpc://h:8081", "a b", "v/1"},
		{"GRPCS://h:1/v2/models/m", "grpcs://h:1", "m", ""},
	}
	for _, g := range good {
		target, model, version, err := ParseModelURL(g.url)
		if err != nil || target != g.target || model != g.model || version != g.version {
			t.Errorf("ParseModelURL(%q) = %q, %q, %q, %v", g.url, target, model, version, err)
		}
	}
	for _, b := range []string{"https://h:8443", "https://h/v2/models/", "https://h/v2/models/m/infer", "https://h/v2/models/m/versions/",
		"grpc://h:1/x/v2/models/m", "//h/v2/models/m", "https://h/v2/models/m?x=1", "https://h/v2/models/%zz"} {
		var ce *ConfigError
		if _, _, _, err := ParseModelURL(b); !errors.As(err, &ce) {
			t.Errorf("ParseModelURL(%q): %v, want a *ConfigError", b, err)
		}
	}
}

// The request body Infer sends over REST is the protocol's JSON.
func TestRESTBody(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/models/a%2Fb/versions/1/infer" && r.URL.RawPath != "/v2/models/a%2Fb/versions/1/infer" {
			t.Errorf("path %q (raw %q)", r.URL.Path, r.URL.RawPath)
		}
		json.NewDecoder(r.Body).Decode(&body)
		w.Write([]byte(`{"model_name":"a/b","model_version":"1","id":"","outputs":[{"name":"label","shape":[1],"datatype":"FP64","data":[2]},{"name":"probabilities","shape":[1,2],"datatype":"FP64","data":[0.25,0.75]},{"name":"classes","shape":[2],"datatype":"FP64","data":[-1,2]}]}`))
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{})
	r, err := c.Infer(context.Background(), "a/b", mat.NewDense(1, 1, []float64{0.5}), Params{Version: "1", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if r.Labels[0] != 2 || r.Probs.At(0, 1) != 0.75 || len(r.Classes) != 2 || r.Classes[0] != -1 {
		t.Errorf("labels %v probs %v", r.Labels, r.Probs)
	}
	want := `{"inputs":[{"data":[0.5],"datatype":"FP64","name":"input","shape":[1,1]}],"parameters":{"seed":7}}`
	if b, _ := json.Marshal(body); string(b) != want {
		t.Errorf("body %s, want %s", b, want)
	}
}
