package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
)

// golden returns the path of a golden model file of gp/modelfile (every family; inputs x0, x1).
func golden(name string) string {
	return filepath.Join("..", "gp", "modelfile", "testdata", "golden", name+".gpz")
}

// withFeatures writes a copy of a golden model file whose inputs are named names, and returns its path.
func withFeatures(t testing.TB, name string, names ...string) string {
	t.Helper()
	f, err := modelfile.LoadFile(golden(name), gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(names)
	f.Meta["features"] = string(b)
	path := filepath.Join(t.TempDir(), name+".gpz")
	if err := modelfile.SaveFile(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testServer is a Server serving REST on a loopback port.
type testServer struct {
	*Server
	url   string
	log   *syncBuffer
	token string
	done  chan error
}

// start makes a Server with cfg (its logger writing to a buffer) and serves it on 127.0.0.1; it is shut down
// at the test's end.
func start(t testing.TB, cfg Config, sources ...ModelSource) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(cfg, sources...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, url: "http://" + l.Addr().String(), log: logs, token: cfg.Token, done: make(chan error, 1)}
	go func() { ts.done <- s.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-ts.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

func named(t testing.TB, name, path string) ModelSource {
	t.Helper()
	src, err := ParseModelSource(name + "=" + path)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// do sends a request (with the server's token, if any, unless the header is set) and returns the status and
// body.
func (ts *testServer) do(t testing.TB, method, path string, body string, header ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if ts.token != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// infer posts an inference request and decodes a 200's response (t fails otherwise).
func (ts *testServer) infer(t testing.TB, model string, req *oip.InferRequest) *oip.InferResponse {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	status, body := ts.do(t, "POST", "/v2/models/"+model+"/infer", string(b))
	if status != http.StatusOK {
		t.Fatalf("infer %s: %d %s", model, status, body)
	}
	var res oip.InferResponse
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("infer %s: %v in %s", model, err, body)
	}
	return &res
}

// matrixRequest is a request of one [N, D] tensor.
func matrixRequest(rows [][]float64, params oip.Parameters) *oip.InferRequest {
	var data []float64
	for _, r := range rows {
		data = append(data, r...)
	}
	return &oip.InferRequest{Parameters: params, Inputs: []oip.RequestInput{{Name: "input", Shape: []int64{int64(len(rows)), int64(len(rows[0]))}, Datatype: oip.FP64, Data: data}}}
}

// testRows returns n rows of 2 inputs, different for each seed.
func testRows(n int, seed int) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = []float64{float64((seed*31+i*7)%23)/11 - 1, float64((seed*17+i*5)%19)/9 - 1}
	}
	return rows
}

// output returns the named output of a response.
func output(t testing.TB, res *oip.InferResponse, name string) oip.ResponseOutput {
	t.Helper()
	for _, o := range res.Outputs {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no output %q in %+v", name, res)
	return oip.ResponseOutput{}
}

// copyFile copies src to dst atomically (a temporary file renamed over dst).
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, dst, b)
}

func writeAtomic(t testing.TB, dst string, b []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// discard is a logger for servers whose log a test does not read.
var discard = slog.New(slog.DiscardHandler)
