package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/oip"
)

// metricValue returns the value of one sample line of /metrics (name with its labels, as printed), or -1.
func (ts *testServer) metricValue(t testing.TB, series string) float64 {
	t.Helper()
	status, body := ts.do(t, "GET", "/metrics", "")
	if status != 200 {
		t.Fatalf("/metrics: %d %s", status, body)
	}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return -1
}

// TestBatchedEqualsAlone sends many concurrent requests of different sizes, seeds and options to one server
// that coalesces them (a long MaxDelay) and each alone to another that never batches: the answers are the same
// bits.
func TestBatchedEqualsAlone(t *testing.T) {
	sources := func() []ModelSource {
		return []ModelSource{named(t, "gauss", golden("SVGP_gaussian")), named(t, "dgp", golden("DGP_coupled")), named(t, "softmax", golden("SVGP_softmax"))}
	}
	batched := start(t, Config{MaxBatch: 64, MaxDelay: 300 * time.Millisecond}, sources()...)
	alone := start(t, Config{MaxBatch: 1}, sources()...)
	type call struct {
		model string
		req   *oip.InferRequest
	}
	var calls []call
	for k := range 36 {
		model := []string{"gauss", "dgp", "softmax"}[k%3]
		params := oip.Parameters{"seed": json.Number(strconv.Itoa(1 + k%4))}
		if k%5 == 0 {
			params["latent"] = true
		}
		if model == "dgp" && k%2 == 0 {
			params["samples"] = json.Number("3") // a deep GP's draws are per row: batchable
		}
		calls = append(calls, call{model, matrixRequest(testRows(1+k%7, k), params)})
	}
	got := make([][]byte, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = json.Marshal(batched.infer(t, c.model, c.req))
		}()
	}
	wg.Wait()
	for i, c := range calls {
		want, _ := json.Marshal(alone.infer(t, c.model, c.req))
		if string(got[i]) != string(want) {
			t.Errorf("request %d (%s, %d rows, %v): batched\n%s\nalone\n%s", i, c.model, c.req.Inputs[0].Shape[0], c.req.Parameters, got[i], want)
		}
	}
	// The batched server did coalesce: fewer batches than requests, for every model.
	for _, m := range []string{"gauss", "dgp", "softmax"} {
		n := batched.metricValue(t, fmt.Sprintf(`gpzoo_serve_batch_requests_count{model=%q}`, m))
		sum := batched.metricValue(t, fmt.Sprintf(`gpzoo_serve_batch_requests_sum{model=%q}`, m))
		if sum != 12 || n <= 0 || n >= sum {
			t.Errorf("%s: %v requests in %v batches: want 12 requests coalesced into fewer batches", m, sum, n)
		}
	}
}
