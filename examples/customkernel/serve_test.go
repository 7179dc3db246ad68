package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/cli"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/serve"
	"gonum.org/v1/gonum/mat"
)

// TestServeCustomKernel serves a model whose kernel (the polynomial) lives outside gpzoo's built-ins: the
// server answers an inference request with the bits the model file predicts.
func TestServeCustomKernel(t *testing.T) {
	dir := t.TempDir()
	if err := run(io.Discard, 5, dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "poly.gpz")
	srv, err := serve.New(serve.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, serve.ModelSource{Name: "poly", File: path})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	xs := []float64{-2.5, 0, 1.25, 2.9}
	body, _ := json.Marshal(map[string]any{"inputs": []map[string]any{{"name": "x0", "datatype": "FP64", "shape": []int{len(xs)}, "data": xs}}})
	resp, err := http.Post(ts.URL+"/v2/models/poly/infer", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	var out struct {
		Outputs []struct {
			Name string    `json:"name"`
			Data []float64 `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.LoadFile(path, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.Predict(mat.NewDense(len(xs), 1, xs), modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for _, o := range out.Outputs {
		got[o.Name] = o.Data
	}
	for name, w := range map[string]*mat.Dense{"mean": want.Mean, "variance": want.Var} {
		g := got[name]
		if len(g) != len(xs) {
			t.Fatalf("output %s: %v", name, g)
		}
		for i := range xs {
			if math.Float64bits(g[i]) != math.Float64bits(w.At(i, 0)) {
				t.Errorf("%s[%d] = %v, want %v", name, i, g[i], w.At(i, 0))
			}
		}
	}
}

// TestCLIOffersThePolynomial: the example's binary is a gpzoo whose train --help lists the registered
// polynomial families.
func TestCLIOffersThePolynomial(t *testing.T) {
	var out, errOut bytes.Buffer
	_ = cli.Main([]string{"train", "--help"}, &out, &errOut)
	if s := out.String() + errOut.String(); !strings.Contains(s, "poly2") {
		t.Fatalf("gpzoo train --help does not offer poly2:\n%s", s)
	}
}
