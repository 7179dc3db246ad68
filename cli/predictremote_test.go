package cli

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/serve"
)

// remoteCSV writes a training table (a, b, class: labels -1, 2, 5 by region; y smooth in a and b) with n rows.
func remoteCSV(t *testing.T, path string, n int, seed uint64, withTargets bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var b strings.Builder
	if withTargets {
		b.WriteString("a,b,y,class\n")
	} else {
		b.WriteString("b,extra,a\n") // another order and an extra column: inputs are read by name
	}
	for i := 0; i < n; i++ {
		x1, x2 := 4*rng.Float64()-2, 4*rng.Float64()-2
		if !withTargets {
			fmt.Fprintf(&b, "%v,%d,%v\n", x2, i, x1)
			continue
		}
		class := -1
		switch {
		case x1 > 0.5:
			class = 5
		case x2 > 0:
			class = 2
		}
		fmt.Fprintf(&b, "%v,%v,%v,%d\n", x1, x2, math.Sin(2*x1)+0.5*x2+0.05*rng.NormFloat64(), class)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPredictRemoteSameAsLocal: gpzoo predict --url over REST and gRPC writes the bytes gpzoo predict --model
// writes, for an SVGP, an SGPR, a deep GP (with a seed) and a classifier, with more rows than one request takes
// (the deep GP's rows beyond the first request keep their Monte-Carlo numbers through row_offset).
func TestPredictRemoteSameAsLocal(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "train.csv")
	remoteCSV(t, data, 120, 1, true)
	models := []struct {
		name string
		args []string
	}{
		{"svgp", []string{"--model", "svgp", "--target", "y", "--features", "a,b", "--iters", "30", "--inducing", "8"}},
		{"sgpr", []string{"--model", "sgpr", "--target", "y", "--features", "a,b", "--iters", "5", "--inducing", "8"}},
		{"dgp", []string{"--model", "dgp", "--target", "y", "--features", "a,b", "--iters", "10", "--inducing", "6", "--layers", "2"}},
		{"cls", []string{"--model", "svgp", "--target", "class", "--classify", "--features", "a,b", "--iters", "30", "--inducing", "8"}},
	}
	var sources []serve.ModelSource
	for _, m := range models {
		path := filepath.Join(dir, m.name+".gpz")
		var out, errb bytes.Buffer
		args := append([]string{"train", "--csv", data, "--quiet", "--test-fraction", "0", "--save", path}, m.args...)
		if err := Main(args, &out, &errb); err != nil {
			t.Fatalf("train %s: %v\n%s", m.name, err, errb.String())
		}
		spec := m.name + "=" + path
		if m.name == "svgp" {
			spec = "svgp@v1=" + path
		}
		src, err := serve.ParseModelSource(spec)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, src)
	}

	const token = "remote-test-token"
	s, err := serve.New(serve.Config{Token: token, GRPCListen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, sources...)
	if err != nil {
		t.Fatal(err)
	}
	restAddr, grpcAddr := serveBoth(t, s)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	big := filepath.Join(dir, "big.csv") // more rows than one request (1000) takes
	remoteCSV(t, big, 1234, 2, false)
	small := filepath.Join(dir, "small.csv")
	remoteCSV(t, small, 40, 3, false)
	run := func(args ...string) []byte {
		t.Helper()
		out := filepath.Join(t.TempDir(), "y.csv")
		var stdout, errb bytes.Buffer
		if err := Main(append([]string{"predict", "--out", out}, args...), &stdout, &errb); err != nil {
			t.Fatalf("predict %q: %v\n%s", args, err, errb.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rest := "http://" + restAddr
	grpc := "grpc://" + grpcAddr
	cases := []struct {
		model, path, input string
		seed               []string
	}{
		{"svgp", "/v2/models/svgp/versions/v1", big, nil},
		{"sgpr", "/v2/models/sgpr", big, nil},
		{"dgp", "/v2/models/dgp", big, []string{"--seed", "7"}},
		{"cls", "/v2/models/cls", big, nil},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			local := run(append([]string{"--model", filepath.Join(dir, c.model+".gpz"), "--input", c.input}, c.seed...)...)
			lines := bytes.Count(local, []byte("\n"))
			if lines < 41 {
				t.Fatalf("local prediction: %d lines", lines)
			}
			if c.model == "cls" && !bytes.HasPrefix(local, []byte("p_-1,p_2,p_5,label\n")) {
				t.Errorf("classifier header: %q", local[:min(40, len(local))])
			}
			viaREST := run(append([]string{"--url", rest + c.path, "--token-file", tokenFile, "--input", c.input}, c.seed...)...)
			if !bytes.Equal(viaREST, local) {
				t.Errorf("REST differs from local:\n%s\n%s", head(viaREST), head(local))
			}
			t.Setenv(EnvServeToken, token)
			viaGRPC := run(append([]string{"--url", grpc + c.path, "--input", c.input}, c.seed...)...)
			if !bytes.Equal(viaGRPC, local) {
				t.Errorf("gRPC differs from local:\n%s\n%s", head(viaGRPC), head(local))
			}
			if c.seed != nil { // the seed reaches the server
				if other := run("--url", grpc+c.path, "--input", c.input, "--seed", "8"); bytes.Equal(other, local) {
					t.Error("another seed gave the same deep-GP prediction")
				}
			}
		})
	}

	// Refusals: a wrong token, no token, an unknown model, a token on the command line, --samples remotely.
	var stdout, errb bytes.Buffer
	bad := filepath.Join(dir, "bad-token")
	os.WriteFile(bad, []byte("nope"), 0o600)
	t.Setenv(EnvServeToken, "")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--url", rest + "/v2/models/svgp", "--token-file", bad}, "invalid bearer token"},
		{[]string{"--url", grpc + "/v2/models/svgp", "--token-file", bad}, "invalid bearer token"},
		{[]string{"--url", rest + "/v2/models/svgp"}, "missing bearer token"},
		{[]string{"--url", grpc + "/v2/models/nope", "--token-file", tokenFile}, `model "nope" is not loaded`},
		{[]string{"--url", rest + "/v2/models/svgp", "--token", token}, "flag provided but not defined: -token"},
		{[]string{"--url", rest + "/v2/models/svgp", "--token-file", tokenFile, "--samples", "5"}, "--samples is for a local model"},
		{[]string{"--url", rest + "/v2/models/svgp", "--token-file", tokenFile, "--model", filepath.Join(dir, "svgp.gpz")}, "not both"},
		{[]string{"--url", rest + "/models/svgp", "--token-file", tokenFile}, "does not name a model"},
		{[]string{"--url", "http://192.0.2.1:1/v2/models/svgp", "--token-file", tokenFile}, "refusing to send the bearer token in plaintext"},
		{[]string{"--model", filepath.Join(dir, "svgp.gpz"), "--token-file", tokenFile}, "--token-file and --ca go with --url"},
	} {
		errb.Reset()
		err := Main(append([]string{"predict", "--input", small}, c.args...), &stdout, &errb)
		if err == nil || !strings.Contains(err.Error()+errb.String(), c.msg) {
			t.Errorf("predict %q: %v (%s), want an error containing %q", c.args, err, errb.String(), c.msg)
		}
	}
}

func head(b []byte) string {
	lines := strings.SplitN(string(b), "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

// serveBoth serves s over REST and gRPC on loopback ports of the system's choosing until the test ends (then shuts
// it down and checks both transports returned cleanly) and returns their addresses.
func serveBoth(t *testing.T, s *serve.Server) (restAddr, grpcAddr string) {
	t.Helper()
	restL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- s.Serve(restL) }()
	go func() { done <- s.ServeGRPC(grpcL) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	})
	return restL.Addr().String(), grpcL.Addr().String()
}
