package cluster

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gpzoo/gpzoo/gp/advgp"
)

func testConfig(workers, tau, iters, batch int) LocalConfig {
	return LocalConfig{Server: ServerConfig{Job: Job{Data: DataRef{Synthetic: &testData}, NumData: testData.N,
		Workers: workers, Tau: tau, Batch: batch, Seed: 3}, Iters: iters}}
}

func rawParams(m *advgp.Model) [][]float64 {
	var out [][]float64
	for _, p := range m.Params() {
		out = append(out, slices.Clone(p.Raw()))
	}
	return out
}

func maxRelDiff(a, b [][]float64) float64 {
	d := 0.0
	for i := range a {
		for j := range a[i] {
			d = math.Max(d, math.Abs(a[i][j]-b[i][j])/math.Max(1, math.Abs(b[i][j])))
		}
	}
	return d
}

// With τ = 0 and whole-shard gradients, k workers compute exactly the full-data gradient every update, so the
// run equals the one-worker run (up to the order of summation).
func TestSynchronousWorkersEqualOneWorker(t *testing.T) {
	one := newTestModel(t, 15)
	if _, err := localADVGP(one, testConfig(1, 0, 40, 0)); err != nil {
		t.Fatal(err)
	}
	four := newTestModel(t, 15)
	res, err := localADVGP(four, testConfig(4, 0, 40, 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates != 40 || res.Gradients() != 160 || res.Stale != 0 {
		t.Fatalf("4 synchronous workers: %d updates, %d gradients, %d stale; want 40, 160, 0", res.Updates, res.Gradients(), res.Stale)
	}
	if d := maxRelDiff(rawParams(four), rawParams(one)); d > 1e-9 {
		t.Fatalf("4 synchronous workers differ from 1 by %g (relative)", d)
	}
}

// recording wraps a Spawner and keeps the started workers by shard.
type recording struct {
	spawn Spawner
	mu    sync.Mutex
	procs map[int][]Proc
	args  map[int]WorkerArgs
}

func (r *recording) Spawn(a WorkerArgs) (Proc, error) {
	p, err := r.spawn(a)
	if err == nil {
		r.mu.Lock()
		if r.procs == nil {
			r.procs, r.args = map[int][]Proc{}, map[int]WorkerArgs{}
		}
		r.procs[a.Shard] = append(r.procs[a.Shard], p)
		r.args[a.Shard] = a
		r.mu.Unlock()
	}
	return p, err
}

// Four worker processes on loopback (minibatches, τ = 0) reach the accuracy of one in-process worker.
func TestWorkerProcessesMatchSingleProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	single := newTestModel(t, 20)
	c := testConfig(1, 0, 300, 100)
	if _, err := localADVGP(single, c); err != nil {
		t.Fatal(err)
	}
	four := newTestModel(t, 20)
	c = testConfig(4, 0, 300, 100)
	c.Spawn = processes(t)
	res, err := localADVGP(four, c)
	if err != nil {
		t.Fatal(err)
	}
	r1, r4 := testRMSE(t, single), testRMSE(t, four)
	t.Logf("test RMSE: 1 in-process worker %.4f, 4 worker processes %.4f (noise sd %.2g); %.0f points/s", r1, r4, testData.Noise, res.PointsPerSecond)
	if res.Updates != 300 || res.Dropped() != 0 {
		t.Fatalf("%d updates, %d dropped", res.Updates, res.Dropped())
	}
	if math.Abs(r4-r1) > 0.1*r1 || r4 > 2*testData.Noise {
		t.Fatalf("4 worker processes: RMSE %.4f, one worker %.4f", r4, r1)
	}
}

// Killing a worker process mid-run: the server drops it after the heartbeat timeout and finishes with the
// other three; a restarted worker for the same shard rejoins.
func TestKilledWorkerIsDroppedAndReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	model := newTestModel(t, 20)
	c := testConfig(4, 0, 200, 100)
	c.Server.Job.HeartbeatEvery = 50 * time.Millisecond
	c.Server.HeartbeatTimeout = 500 * time.Millisecond
	rec := &recording{spawn: processes(t)}
	c.Spawn = rec.Spawn
	var restart Proc
	c.Server.OnUpdate = func(v int) {
		switch v {
		case 50:
			rec.mu.Lock()
			p := rec.procs[3][0]
			rec.mu.Unlock()
			if err := p.Kill(); err != nil {
				t.Error(err)
			}
		case 120:
			rec.mu.Lock()
			a := rec.args[3]
			rec.mu.Unlock()
			var err error
			if restart, err = rec.Spawn(a); err != nil {
				t.Error(err)
			}
		}
	}
	res, err := localADVGP(model, c)
	if err != nil {
		t.Fatal(err)
	}
	if restart == nil {
		t.Fatal("the replacement worker was not started")
	}
	if err := restart.Wait(); err != nil {
		t.Fatalf("the replacement worker: %v", err)
	}
	// On a loaded machine another worker may miss a heartbeat and be dropped (and rejoin) too.
	if res.Updates != 200 || !slices.Contains(res.DroppedShards, 3) || res.Rejoins < 1 {
		t.Fatalf("%d updates, dropped shards %v, %d rejoins; want 200, shard 3 among them, ≥ 1", res.Updates, res.DroppedShards, res.Rejoins)
	}
	if r := testRMSE(t, model); r > 2*testData.Noise {
		t.Fatalf("RMSE %.4f after losing a worker", r)
	}
	t.Logf("per-shard gradients %v, RMSE %.4f", res.PerShard, testRMSE(t, model))
}

// With one slow worker, τ > 0 finishes a fixed number of updates sooner than the synchronous τ = 0.
func TestDelayBoundBeatsSynchronousWithSlowWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	const iters, delay = 60, 40 * time.Millisecond
	times := map[int]float64{}
	for _, tau := range []int{0, 5} {
		model := newTestModel(t, 15)
		c := testConfig(4, tau, iters, 100)
		c.Spawn = processes(t)
		c.Delay = map[int]time.Duration{0: delay}
		res, err := localADVGP(model, c)
		if err != nil {
			t.Fatal(err)
		}
		times[tau] = res.Seconds
		t.Logf("τ=%d: %d updates in %.2fs, gradients per shard %v, stale %d, RMSE %.4f", tau, res.Updates, res.Seconds, res.PerShard, res.Stale, testRMSE(t, model))
	}
	if times[0] < float64(iters)*delay.Seconds()*0.9 {
		t.Fatalf("τ=0 took %.2fs, less than %d × the slow worker's %v", times[0], iters, delay)
	}
	if !(times[5] < times[0]) {
		t.Fatalf("τ=5 took %.2fs, τ=0 %.2fs", times[5], times[0])
	}
}

// A server stopped half-way and resumed from its checkpoint ends with the parameters of an uninterrupted
// synchronous run, bit for bit.
func TestServerCheckpointResume(t *testing.T) {
	whole := newTestModel(t, 10)
	if _, err := localADVGP(whole, testConfig(2, 0, 60, 0)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	half := newTestModel(t, 10)
	stop := make(chan struct{})
	c := testConfig(2, 0, 60, 0)
	c.Server.CheckpointDir, c.Server.CheckpointEvery, c.Server.Stop = dir, 10, stop
	c.Server.OnUpdate = func(v int) {
		if v == 25 {
			close(stop)
		}
	}
	res, err := localADVGP(half, c)
	if !errors.Is(err, ErrInterrupted) || res.Updates != 25 {
		t.Fatalf("interrupted run: %v after %d updates", err, res.Updates)
	}
	resumed := newTestModel(t, 10)
	c = testConfig(2, 0, 60, 0)
	c.Server.CheckpointDir, c.Server.Resume = dir, true
	res, err = localADVGP(resumed, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates != 60 || len(res.Losses) != 60 {
		t.Fatalf("resumed: %d updates, %d losses", res.Updates, len(res.Losses))
	}
	if d := maxRelDiff(rawParams(resumed), rawParams(whole)); d != 0 {
		t.Fatalf("resumed run differs from the uninterrupted one by %g", d)
	}
	// A corrupt checkpoint is refused with ErrCheckpoint and leaves the model alone.
	path := filepath.Join(dir, CheckpointFile)
	data, _ := os.ReadFile(path)
	data[len(data)-5] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := newTestModel(t, 10)
	before := rawParams(fresh)
	if _, err := localADVGP(fresh, c); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("corrupt checkpoint: %v, want ErrCheckpoint", err)
	}
	if d := maxRelDiff(rawParams(fresh), before); d != 0 {
		t.Fatal("a refused checkpoint changed the model")
	}
}

// A worker that stalls (alive, heartbeating, but without gradients for longer than StallTimeout) is dropped,
// training goes on with the others, and the stalled worker is told to join again.
func TestStalledWorkerIsDroppedAndRejoins(t *testing.T) {
	model := newTestModel(t, 10)
	c := testConfig(3, 0, 40, 100)
	c.Server.Job.HeartbeatEvery = 20 * time.Millisecond
	c.Server.StallTimeout = 300 * time.Millisecond
	c.Delay = map[int]time.Duration{2: time.Second}
	// Keep the server busy long enough for the stalled worker to wake up, be told to rejoin and rejoin.
	c.Server.OnUpdate = func(v int) {
		if v == 5 {
			time.Sleep(1500 * time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := localADVGP(model, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates != 40 || !slices.Contains(res.DroppedShards, 2) || res.Rejoins < 1 {
		t.Fatalf("%d updates, dropped shards %v, %d rejoins; want 40, shard 2 among them, ≥ 1", res.Updates, res.DroppedShards, res.Rejoins)
	}
	t.Logf("gradients per shard %v, dropped %d, rejoins %d, refused %d+%d", res.PerShard, res.Dropped(), res.Rejoins, res.Stale, res.Unknown)
}

// Messages a server cannot use are refused and counted, and training goes on.
func TestInvalidGradientsRefused(t *testing.T) {
	e, err := StartEmbedded(EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	nc, err := Connect(e.URL, "test", Security{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	model := newTestModel(t, 5)
	c := testConfig(1, 0, 5, 0).Server
	c.Conn, c.Job.Run = nc, "invalid"
	nan := make([]float64, 0)
	c.OnUpdate = func(v int) {
		if v != 1 { // after the server subscribed; the slow worker leaves time to process them
			return
		}
		for _, m := range []any{gradMsg{Grad: nan}, gradMsg{Grad: make([]float64, 2)}} {
			data, _ := encode(m)
			if err := nc.Publish(subjectsOf("invalid").grad, data); err != nil {
				t.Error(err)
			}
		}
		if err := nc.Publish(subjectsOf("invalid").grad, []byte("not gob")); err != nil {
			t.Error(err)
		}
		// A join whose reply would go to the run's parameters subject.
		req, _ := encode(joinRequest{ID: "x", Shard: 0, Of: 1})
		if err := nc.PublishRequest(subjectsOf("invalid").join, subjectsOf("invalid").params, req); err != nil {
			t.Error(err)
		}
	}
	s, err := newServer(model.SVGP, c)
	if err != nil {
		t.Fatal(err)
	}
	nan = make([]float64, s.size)
	nan[3] = math.NaN()
	wn, err := Connect(e.URL, "worker", Security{})
	if err != nil {
		t.Fatal(err)
	}
	defer wn.Close()
	go func() {
		_, _ = Work(WorkerConfig{Conn: wn, Run: "invalid", Shard: 0, Of: 1, Delay: 50 * time.Millisecond})
	}()
	res, err := s.run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Invalid != 4 || res.Updates != 5 {
		t.Fatalf("%d invalid, %d updates; want 4, 5", res.Invalid, res.Updates)
	}
}

// One worker with τ > 0 gives one update per gradient, whatever the timing: the liveness tick must not
// re-apply the newest gradient by itself. With a tick every 25 ms (a heartbeat timeout of 100 ms) and a worker
// pausing 60 ms per gradient, a tick that updated would add updates between gradients. A run in which the
// worker was dropped (a loaded machine can hold a heartbeat past 100 ms; its rejoin changes the run) is run
// again, up to 5 times.
func TestTickDoesNotReapplyGradients(t *testing.T) {
	var runs [2][][]float64
	for i := range runs {
		for attempt := 1; ; attempt++ {
			model := newTestModel(t, 8)
			c := testConfig(1, 4, 15, 100)
			c.Server.HeartbeatTimeout = 100 * time.Millisecond
			c.Server.Job.HeartbeatEvery = 10 * time.Millisecond
			c.Delay = map[int]time.Duration{0: 60 * time.Millisecond}
			res, err := localADVGP(model, c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rejoins > 0 {
				if attempt == 5 {
					t.Fatalf("the worker was dropped in 5 runs out of 5: the machine is too loaded for a 100 ms heartbeat timeout")
				}
				continue
			}
			if res.Gradients() != res.Updates {
				t.Fatalf("%d updates from %d gradients", res.Updates, res.Gradients())
			}
			runs[i] = rawParams(model)
			break
		}
	}
	if d := maxRelDiff(runs[0], runs[1]); d != 0 {
		t.Fatalf("two runs of one worker differ by %g", d)
	}
}

// Every run records each update's staleness: zeros when synchronous; with τ = 1 and two workers whose gradients
// cross, some update takes a gradient one version old, and none one older than τ.
func TestStalenessRecorded(t *testing.T) {
	res, err := localADVGP(newTestModel(t, 10), testConfig(2, 0, 5, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Staleness) != 5 || slices.Max(res.Staleness) != 0 {
		t.Errorf("a synchronous run's staleness %v, want 5 zeros", res.Staleness)
	}
	c := testConfig(2, 1, 60, 0)
	c.Delay = map[int]time.Duration{1: 5 * time.Millisecond}
	if res, err = localADVGP(newTestModel(t, 10), c); err != nil {
		t.Fatal(err)
	}
	if len(res.Staleness) != 60 || !(slices.Max(res.Staleness) > 0) || slices.Max(res.Staleness) > 1 {
		t.Errorf("τ = 1, one slow worker: staleness %v, want some > 0 and none > 1", res.Staleness)
	}
}

// A gradient and a version lost in transit are recovered through the heartbeats (book.lost): the workers
// waiting for them are told to join again, and the synchronous run ends where a run without losses ends.
func TestLostGradientsAndVersionsRecovered(t *testing.T) {
	run := func(name string, loseGrad, loseVersion func(int) bool) (*advgp.Model, *Result) {
		e, err := StartEmbedded(EmbeddedConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Shutdown()
		conn := func(who string) *nats.Conn {
			nc, err := Connect(e.URL, who, Security{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(nc.Close)
			return nc
		}
		model := newTestModel(t, 8)
		c := testConfig(2, 0, 12, 0).Server
		c.Conn, c.Job.Run, c.lose = conn("server"), name, loseVersion
		c.Job.HeartbeatEvery = 20 * time.Millisecond
		s, err := newServer(model.SVGP, c)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 2)
		for shard := range 2 {
			w := WorkerConfig{Conn: conn(fmt.Sprintf("w%d", shard)), Run: name, Shard: shard, Of: 2}
			if shard == 0 {
				w.lose = loseGrad
			}
			go func() {
				_, err := Work(w)
				done <- err
			}()
		}
		res, err := s.run()
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("%s: worker: %v", name, err)
			}
		}
		return model, res
	}
	clean, cleanRes := run("clean", nil, nil)
	var lostGrad, lostVersion atomic.Bool
	lossy, res := run("lossy",
		func(v int) bool { return v == 3 && !lostGrad.Swap(true) },
		func(v int) bool { return v == 6 && !lostVersion.Swap(true) })
	if !lostGrad.Load() || !lostVersion.Load() {
		t.Fatal("the run lost no message: the hooks did not fire")
	}
	if cleanRes.Recovered != 0 || res.Recovered < 2 || res.Updates != 12 {
		t.Fatalf("recovered %d without losses and %d with (want 0 and ≥ 2: a gradient, a version for both workers), %d updates (want 12)",
			cleanRes.Recovered, res.Recovered, res.Updates)
	}
	if d := maxRelDiff(rawParams(lossy), rawParams(clean)); d > 1e-9 {
		t.Fatalf("the run with lost messages differs from the run without by %g (relative)", d)
	}
	t.Logf("recovered %d, rejoins %d, %.2f s against %.2f s", res.Recovered, res.Rejoins, res.Seconds, cleanRes.Seconds)
}
