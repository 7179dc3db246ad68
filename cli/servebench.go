package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

const serveBenchUsage = `gpzoo serve-bench: load-test gpzoo serve on this machine.

Usage:
  gpzoo serve-bench --model NAME=FILE.gpz ... [--duration 5s] [--concurrency 1,16,64] [--rows 1,100] [--json FILE]

It starts "gpzoo serve" (this binary) as a child process on a free loopback port with the models given, waits
until it is ready, then, for every model, request size (rows per request) and concurrency (requests in flight,
each worker sending its next request as soon as the previous one is answered), sends inference requests over
REST for --duration with vegeta (github.com/tsenart/vegeta) and reports requests/s, rows/s, p50 and p99 latency
and errors; at the end the server's peak resident memory (VmHWM). Client and server share the machine. The
request rows are seeded random numbers (N(0, 0.5²) in every input), 64 bodies per request size, cycled.
The reference models:

  gpzoo run kin8nm-bb/svgp --data DIR --save svgp.gpz
  gpzoo run kin8nm-havasi/dgp-coupled-1 --data DIR --save dgp.gpz
  gpzoo serve-bench --model svgp=svgp.gpz --model dgp=dgp.gpz

Flags:
  --model NAME=FILE.gpz   a model to load-test (repeatable, required)
  --duration D            length of each cell (default 5s)
  --concurrency LIST      requests in flight (default 1,16,64)
  --rows LIST             rows per request (default 1,100)
  --max-batch N, --max-delay D   passed to gpzoo serve
  --seed N                seed of the request rows (default 1)
  --json FILE             also write the table as JSON
`

// serveBenchCell is one measured cell of serve-bench.
type serveBenchCell struct {
	Model       string  `json:"model"`
	Rows        int     `json:"rows_per_request"`
	Concurrency int     `json:"concurrency"`
	Requests    uint64  `json:"requests"`
	ReqPerSec   float64 `json:"requests_per_second"`
	RowsPerSec  float64 `json:"rows_per_second"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	Errors      uint64  `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
}

// serveBenchReport is serve-bench's JSON output.
type serveBenchReport struct {
	Cells         []serveBenchCell `json:"cells"`
	ServerPeakRSS int64            `json:"server_peak_rss_bytes"`
	GOMAXPROCS    string           `json:"server_gomaxprocs,omitempty"`
	Duration      string           `json:"duration_per_cell"`
}

func serveBenchCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve-bench", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveBenchUsage) }
	var models modelFlags
	fs.Var(&models, "model", "NAME=FILE.gpz")
	duration := fs.Duration("duration", 5*time.Second, "per cell")
	concList := fs.String("concurrency", "1,16,64", "concurrencies")
	rowsList := fs.String("rows", "1,100", "rows per request")
	maxBatch := fs.Int("max-batch", 0, "serve --max-batch")
	maxDelay := fs.Duration("max-delay", 0, "serve --max-delay")
	seed := fs.Uint64("seed", 1, "seed")
	jsonOut := fs.String("json", "", "JSON output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(models) == 0 || fs.NArg() > 0 {
		return errors.New("serve-bench: give --model NAME=FILE.gpz (repeatable; see gpzoo serve-bench --help)")
	}
	if *duration <= 0 {
		return fmt.Errorf("serve-bench: --duration %v: want a positive duration", *duration)
	}
	concs, err := positiveInts("concurrency", *concList)
	if err != nil {
		return err
	}
	rowCounts, err := positiveInts("rows", *rowsList)
	if err != nil {
		return err
	}
	type target struct {
		name string
		d    int
	}
	var targets []target
	for _, m := range models {
		name, file, ok := strings.Cut(m, "=")
		if !ok {
			return fmt.Errorf("serve-bench: --model %q: want NAME=FILE.gpz", m)
		}
		f, err := modelfile.LoadFile(file, gp.BuildOptions{})
		if err != nil {
			return fmt.Errorf("serve-bench: %w", err)
		}
		targets = append(targets, target{name: name, d: len(f.InputNames())})
	}
	addr, err := freeLoopbackPort()
	if err != nil {
		return fmt.Errorf("serve-bench: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("serve-bench: %w", err)
	}
	sargs := []string{"serve", "--listen", addr, "--quiet"}
	for _, m := range models {
		sargs = append(sargs, "--model", m)
	}
	if *maxBatch > 0 {
		sargs = append(sargs, "--max-batch", strconv.Itoa(*maxBatch))
	}
	if *maxDelay > 0 {
		sargs = append(sargs, "--max-delay", maxDelay.String())
	}
	cmd := exec.Command(exe, sargs...)
	cmd.Env = append(os.Environ(), EnvServeToken+"=") // a loopback server without a token
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("serve-bench: starting the server: %w", err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	base := "http://" + addr
	if err := waitReady(base, 60*time.Second); err != nil {
		return fmt.Errorf("serve-bench: %w", err)
	}
	fmt.Fprintf(stdout, "gpzoo serve-bench: server pid %d on %s, %v per cell (client and server share this machine)\n", cmd.Process.Pid, addr, *duration)
	rep := serveBenchReport{Duration: duration.String()}
	row := "%-12s %8v %11v %9v %9v %10v %9v %9v %7v\n"
	fmt.Fprintf(stdout, row, "model", "rows/req", "concurrency", "requests", "req/s", "rows/s", "p50 ms", "p99 ms", "errors")
	rng := rand.New(rand.NewPCG(*seed, 0xbe7c))
	for _, t := range targets {
		for _, rows := range rowCounts {
			bodies := make([][]byte, 64)
			for i := range bodies {
				if bodies[i], err = benchBody(rng, rows, t.d); err != nil {
					return err
				}
			}
			for _, c := range concs {
				cell := attackCell(base+"/v2/models/"+t.name+"/infer", bodies, c, *duration)
				cell.Model, cell.Rows = t.name, rows
				cell.RowsPerSec = cell.ReqPerSec * float64(rows)
				rep.Cells = append(rep.Cells, cell)
				fmt.Fprintf(stdout, row, t.name, rows, c, cell.Requests, fmt.Sprintf("%.0f", cell.ReqPerSec),
					fmt.Sprintf("%.0f", cell.RowsPerSec), fmt.Sprintf("%.2f", cell.P50ms), fmt.Sprintf("%.2f", cell.P99ms), cell.Errors)
			}
		}
	}
	rep.ServerPeakRSS = peakRSS(cmd.Process.Pid)
	fmt.Fprintf(stdout, "server peak RSS (VmHWM): %.1f MiB\n", float64(rep.ServerPeakRSS)/(1<<20))
	for _, c := range rep.Cells {
		if c.Errors > 0 {
			fmt.Fprintf(stdout, "errors in %s rows=%d c=%d: %s\n", c.Model, c.Rows, c.Concurrency, c.FirstError)
		}
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("serve-bench: %w", err)
		}
	}
	return nil
}

// attackCell sends requests (cycling through bodies) from c workers, each with one request in flight, for d.
func attackCell(url string, bodies [][]byte, c int, d time.Duration) serveBenchCell {
	var mu sync.Mutex // vegeta's workers call the targeter concurrently
	i := 0
	targeter := func(t *vegeta.Target) error {
		mu.Lock()
		body := bodies[i%len(bodies)]
		i++
		mu.Unlock()
		t.Method, t.URL, t.Body = http.MethodPost, url, body
		t.Header = http.Header{"Content-Type": []string{"application/json"}}
		return nil
	}
	atk := vegeta.NewAttacker(vegeta.Workers(uint64(c)), vegeta.MaxWorkers(uint64(c)), vegeta.Connections(c),
		vegeta.MaxConnections(c), vegeta.KeepAlive(true), vegeta.Timeout(60*time.Second))
	var m vegeta.Metrics
	for r := range atk.Attack(targeter, vegeta.Rate{}, d, "serve-bench") {
		m.Add(r)
	}
	m.Close()
	cell := serveBenchCell{Concurrency: c, Requests: m.Requests, ReqPerSec: m.Throughput,
		P50ms: float64(m.Latencies.P50) / 1e6, P99ms: float64(m.Latencies.P99) / 1e6}
	cell.Errors = m.Requests - uint64(float64(m.Requests)*m.Success+0.5)
	if len(m.Errors) > 0 {
		cell.FirstError = m.Errors[0]
	}
	return cell
}

// benchBody returns an inference request of rows random rows of width d.
func benchBody(rng *rand.Rand, rows, d int) ([]byte, error) {
	data := make([]float64, rows*d)
	for i := range data {
		data[i] = rng.NormFloat64() * 0.5
	}
	req := map[string]any{"inputs": []map[string]any{{"name": "input", "datatype": "FP64", "shape": []int{rows, d}, "data": data}}}
	return json.Marshal(req)
}

func positiveInts(flagName, list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("serve-bench: --%s %q: want a comma-separated list of positive integers", flagName, list)
		}
		out = append(out, v)
	}
	return out, nil
}

// freeLoopbackPort returns 127.0.0.1:PORT with a port free a moment ago.
func freeLoopbackPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitReady polls base/v2/health/ready until it answers 200 or timeout passes.
func waitReady(base string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v2/health/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server at %s was not ready within %v", base, timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// peakRSS returns the VmHWM of process pid in bytes (0 where /proc is not available).
func peakRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
