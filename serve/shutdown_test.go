package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestShutdownDrains: a request in flight when Shutdown starts (waiting in its batch) is answered; readiness
// turns false; Shutdown returns once it is.
func TestShutdownDrains(t *testing.T) {
	ts := start(t, Config{MaxDelay: 400 * time.Millisecond}, named(t, "m", golden("SVGP_gaussian")))
	body, _ := json.Marshal(matrixRequest(testRows(2, 1), nil))
	type answer struct {
		status int
		body   []byte
	}
	answered := make(chan answer, 1)
	go func() {
		status, b := ts.do(t, "POST", "/v2/models/m/infer", string(body))
		answered <- answer{status, b}
	}()
	waitFor(t, "the request in flight", func() bool { return ts.metricValue(t, "gpzoo_serve_inflight_requests") == 1 })
	start := time.Now()
	if err := ts.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ts.Ready() {
		t.Error("ready after Shutdown")
	}
	select {
	case a := <-answered:
		if a.status != http.StatusOK {
			t.Errorf("the request in flight: %d %s", a.status, a.body)
		}
	default:
		t.Fatal("Shutdown returned before the request in flight was answered")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	if err := <-ts.done; err != nil {
		t.Errorf("Serve after Shutdown: %v", err)
	}
	ts.done <- nil // for the cleanup's Serve check
}
