package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/oip"
)

// TestWatchReplaceUnderLoad replaces a watched model file while requests keep coming: no request fails, the
// new version takes over, a corrupt replacement is refused (logged, counted in /metrics) while the previous
// version keeps serving, and new and removed files add and unload models.
func TestWatchReplaceUnderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gpz")
	copyFile(t, golden("SVGP_gaussian"), path)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := start(t, Config{WatchDebounce: 20 * time.Millisecond, MaxDelay: time.Millisecond}, DirSource(dir))
	v1 := ts.metadata(t, "m").Versions[0]

	var stop atomic.Bool
	var served, failed atomic.Int64
	versions := sync.Map{}
	var wg sync.WaitGroup
	body, _ := json.Marshal(matrixRequest(testRows(3, 1), nil))
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				status, b := ts.do(t, "POST", "/v2/models/m/infer", string(body))
				var res oip.InferResponse
				if status != http.StatusOK || json.Unmarshal(b, &res) != nil {
					failed.Add(1)
					t.Errorf("a request failed during the replacement: %d %s", status, b)
					continue
				}
				served.Add(1)
				versions.Store(res.ModelVersion, true)
			}
		}()
	}
	current := func() string { return ts.metadata(t, "m").Versions[0] }

	// A replacement (written atomically, as gpzoo writes model files) is swapped in.
	time.Sleep(50 * time.Millisecond)
	copyFile(t, golden("SGPR"), path)
	waitFor(t, "the replacement", func() bool { return current() != v1 })
	v2 := current()
	waitFor(t, "requests on the new version", func() bool { _, ok := versions.Load(v2); return ok })

	// A corrupt replacement (a flipped byte: the checksum fails) is refused; v2 keeps serving.
	data, err := os.ReadFile(golden("SVGP_studentt"))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	writeAtomic(t, path, data)
	waitFor(t, "the refusal", func() bool {
		return ts.metricValue(t, `gpzoo_serve_model_load_failures_total{model="m"}`) == 1
	})
	if ts.metricValue(t, `gpzoo_serve_model_load_failing{model="m"}`) != 1 {
		t.Error("the failing gauge is not set")
	}
	n := served.Load()
	waitFor(t, "requests after the refusal", func() bool { return served.Load() > n+10 })
	if current() != v2 {
		t.Errorf("after a corrupt replacement the version is %s, want %s still", current(), v2)
	}
	stop.Store(true)
	wg.Wait()
	if failed.Load() != 0 || served.Load() == 0 {
		t.Fatalf("%d requests served, %d failed", served.Load(), failed.Load())
	}
	if _, ok := versions.Load(v1); !ok {
		t.Error("no request was served by the first version")
	}
	log := ts.log.String()
	if !strings.Contains(log, "model replaced") || !strings.Contains(log, "model file refused: the loaded version keeps serving") || !strings.Contains(log, "checksum") {
		t.Errorf("the log lacks the replacement or the refusal:\n%s", log)
	}

	// A good file again clears the failing gauge; a new file adds a model; a removed file unloads it.
	copyFile(t, golden("SVGP_gaussian"), path)
	waitFor(t, "the good file", func() bool { return current() == v1 })
	if ts.metricValue(t, `gpzoo_serve_model_load_failing{model="m"}`) != 0 {
		t.Error("the failing gauge is still set")
	}
	copyFile(t, golden("SVGP_poisson"), filepath.Join(dir, "counts.gpz"))
	waitFor(t, "the new model", func() bool { status, _ := ts.do(t, "GET", "/v2/models/counts/ready", ""); return status == 200 })
	if got := ts.metricValue(t, "gpzoo_serve_models_loaded"); got != 2 {
		t.Errorf("models loaded %v, want 2", got)
	}
	if err := os.Remove(filepath.Join(dir, "counts.gpz")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the unloading", func() bool { status, _ := ts.do(t, "GET", "/v2/models/counts/ready", ""); return status == 404 })
	if got := ts.metricValue(t, "gpzoo_serve_models_loaded"); got != 1 {
		t.Errorf("models loaded %v, want 1", got)
	}
}

// TestWatchStartup: at start, a corrupt file of a watched directory is refused and counted while the others
// serve; a named source that does not load stops New with a *LoadError.
func TestWatchStartup(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, golden("SGPR"), filepath.Join(dir, "good.gpz"))
	if err := os.WriteFile(filepath.Join(dir, "bad.gpz"), []byte("\x89GPZ\r\n\x1a\nnot really"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := start(t, Config{}, DirSource(dir))
	if status, _ := ts.do(t, "GET", "/v2/models/good/ready", ""); status != 200 {
		t.Errorf("good: %d", status)
	}
	if status, _ := ts.do(t, "GET", "/v2/models/bad/ready", ""); status != 404 {
		t.Errorf("bad: %d", status)
	}
	if got := ts.metricValue(t, `gpzoo_serve_model_load_failures_total{model="bad"}`); got != 1 {
		t.Errorf("load failures of bad: %v", got)
	}
	_, err := New(Config{Logger: discard}, named(t, "bad", filepath.Join(dir, "bad.gpz")))
	var le *LoadError
	if !errorsAs(err, &le) || le.Name != "bad" {
		t.Errorf("New with a corrupt named file: %v, want a *LoadError", err)
	}
}
