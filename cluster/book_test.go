package cluster

import (
	"testing"
	"time"
)

// agg returns the book's aggregate of one-value gradients and its points.
func agg(b *book) ([]float64, int) {
	g, p, _ := aggLag(b)
	return g, p
}

// aggLag is agg with the aggregate's staleness.
func aggLag(b *book) ([]float64, int, float64) {
	g := make([]float64, 1)
	_, p, lag := b.aggregate(g)
	return g, p, lag
}

func grad(shard, version int) *gradMsg {
	return &gradMsg{ID: string(rune('a' + shard)), Shard: shard, Version: version, Grad: []float64{float64(shard + 1)}, ShardN: 10}
}

// The bounded-delay rule of Algorithm 1: update t waits until every worker's newest gradient has version ≥ t − τ.
func TestBookDelayRule(t *testing.T) {
	now := time.Now()
	for _, tau := range []int{0, 2} {
		b := newBook(tau, true)
		for k := range 3 {
			b.join(k, string(rune('a'+k)), 10, now)
		}
		if b.ready() {
			t.Fatalf("τ=%d: ready before any gradient", tau)
		}
		b.accept(grad(0, 0), now)
		b.accept(grad(1, 0), now)
		if got, want := b.ready(), tau > 0; got != want {
			t.Fatalf("τ=%d: ready with 2 of 3 gradients = %v, want %v", tau, got, want)
		}
		b.accept(grad(2, 0), now)
		if !b.ready() {
			t.Fatalf("τ=%d: not ready with every gradient in", tau)
		}
		// Worker 2 is slow: the others push at every version; the server may run τ updates ahead of it.
		for v := 1; ; v++ {
			b.version = v
			b.accept(grad(0, v), now)
			b.accept(grad(1, v), now)
			if !b.ready() {
				if v != tau+1 {
					t.Fatalf("τ=%d: blocked at version %d, want %d", tau, v, tau+1)
				}
				break
			}
		}
		// A gradient older than t − τ is refused and counted.
		if ok, known := b.accept(grad(2, b.version-tau-1), now); ok || !known || b.stale != 1 {
			t.Fatalf("τ=%d: stale gradient accepted (ok %v, known %v, stale %d)", tau, ok, known, b.stale)
		}
		sum, points := agg(b)
		if sum[0] != 6 || points != 30 {
			t.Fatalf("aggregate = %v over %d points, want 6 over 30", sum, points)
		}
	}
}

func TestBookDropAndRejoin(t *testing.T) {
	t0 := time.Now()
	b := newBook(0, true)
	b.join(0, "a", 10, t0)
	b.join(1, "b", 10, t0)
	b.accept(grad(0, 0), t0)
	b.accept(grad(1, 0), t0)
	b.version = 1
	b.accept(grad(0, 1), t0.Add(time.Second))
	if b.ready() {
		t.Fatal("ready without shard 1's gradient")
	}
	b.beat(0, "a", t0.Add(2*time.Second))
	shards, ids := b.expire(t0.Add(2*time.Second), 1500*time.Millisecond, 0)
	if len(shards) != 1 || shards[0] != 1 || ids[0] != "b" || len(b.slots) != 1 {
		t.Fatalf("expired %v %v (%d slots left), want shard 1 of b", shards, ids, len(b.slots))
	}
	if !b.ready() {
		t.Fatal("not ready after the silent worker was dropped")
	}
	if _, points := aggregatePoints(b); points != 10 {
		t.Fatalf("aggregate covers %d points after the drop, want 10", points)
	}
	// Its late gradient is refused as unknown; a new worker for shard 1 is a rejoin, and τ = 0 waits for it.
	if ok, known := b.accept(&gradMsg{ID: "b", Shard: 1, Version: 1}, t0); ok || known || b.unknown != 1 {
		t.Fatal("a dropped worker's gradient was accepted")
	}
	if !b.join(1, "c", 10, t0) || b.rejoins != 1 || b.joins != 3 {
		t.Fatalf("rejoin not counted: joins %d rejoins %d", b.joins, b.rejoins)
	}
	if b.ready() {
		t.Fatal("τ=0 did not wait for the rejoined worker")
	}
	// A worker that stops pushing gradients but keeps beating is dropped after the stall timeout.
	b.beat(1, "c", t0.Add(10*time.Second))
	b.beat(0, "a", t0.Add(10*time.Second))
	if shards, _ := b.expire(t0.Add(10*time.Second), time.Minute, 5*time.Second); len(shards) != 2 {
		t.Fatalf("stalled workers expired: %v, want both", shards)
	}
}

func aggregatePoints(b *book) ([]float64, int) {
	s, p := agg(b)
	return s, p
}

// A worker whose heartbeats say it waits after pushing at version v is told to join again only when, for longer
// than the grace period, the book lacks its gradient at v or is past v (a message lost in transit); waiting for
// the other workers, computing, or a message arriving within the grace is not lost.
func TestBookLost(t *testing.T) {
	t0, grace := time.Now(), time.Second
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	b := newBook(0, true)
	b.join(0, "a", 10, t0)
	b.join(1, "b", 10, t0)
	b.accept(grad(0, 0), t0)
	for _, d := range []time.Duration{0, 2 * time.Second} { // waits for worker 1's gradient: not lost
		if b.lost(0, "a", true, 0, 10*time.Second, at(d), grace) {
			t.Fatal("a worker waiting for the others is not lost")
		}
	}
	// Worker 1's gradient at version 0 is lost: its heartbeats say it waits, the book has nothing from it.
	if b.lost(1, "b", true, 0, 10*time.Second, at(0), grace) || b.lost(1, "b", true, 0, 10*time.Second, at(500*time.Millisecond), grace) {
		t.Fatal("lost within the grace period")
	}
	if !b.lost(1, "b", true, 0, 10*time.Second, at(1500*time.Millisecond), grace) {
		t.Fatal("a gradient missing for longer than the grace period is not lost")
	}
	// Worker 0 misses version 1: the book moved on while it waits at 0; a heartbeat saying it computes (or
	// waits at a newer version) clears the suspicion.
	b.accept(grad(1, 0), t0)
	b.version = 1
	if b.lost(0, "a", true, 0, 10*time.Second, at(2*time.Second), grace) || b.lost(0, "a", false, 0, 10*time.Second, at(2500*time.Millisecond), grace) ||
		b.lost(0, "a", true, 0, 10*time.Second, at(3*time.Second), grace) {
		t.Fatal("lost before waiting for longer than the grace period at the same version")
	}
	if !b.lost(0, "a", true, 0, 10*time.Second, at(4100*time.Millisecond), grace) {
		t.Fatal("a version missed for longer than the grace period is not lost")
	}
	if b.lost(2, "c", true, 0, 10*time.Second, at(9*time.Second), grace) || b.lost(0, "x", true, 0, 10*time.Second, at(9*time.Second), grace) {
		t.Fatal("a worker without a slot is not lost (it is told to join by its heartbeat)")
	}
}

// Without reuse an update aggregates only the gradients no earlier update took; with it (ADVGP's Algorithm 1)
// every live worker's newest. τ = 2, two workers, the second slow.
func TestBookReuse(t *testing.T) {
	now := time.Now()
	for _, reuse := range []bool{false, true} {
		b := newBook(2, reuse)
		b.join(0, "a", 10, now)
		b.join(1, "b", 10, now)
		b.accept(grad(0, 0), now)
		b.accept(grad(1, 0), now)
		if g, p := agg(b); g[0] != 3 || p != 20 { // both fresh: 1 + 2
			t.Fatalf("reuse %v: first update %v over %d points", reuse, g, p)
		}
		b.version = 1
		if b.ready() != reuse {
			t.Fatalf("reuse %v: ready with no new gradient = %v", reuse, b.ready())
		}
		b.accept(grad(0, 1), now) // worker 0 again; worker 1's gradient at 0 is within τ
		if !b.ready() {
			t.Fatalf("reuse %v: not ready with a new gradient", reuse)
		}
		g, p, lag := aggLag(b)
		if want := map[bool][3]float64{false: {1, 10, 0}, true: {3, 20, 0.5}}[reuse]; g[0] != want[0] || p != int(want[1]) || lag != want[2] {
			t.Errorf("reuse %v: second update %v over %d points, staleness %v; want %v over %v, staleness %v", reuse, g, p, lag, want[0], want[1], want[2])
		}
		// Update 2 takes worker 1's gradient, computed at version 0 (staleness 2), and with reuse worker 0's
		// at version 1 (staleness 1).
		b.version = 2
		b.accept(grad(1, 0), now)
		g, p, lag = aggLag(b)
		if want := map[bool][3]float64{false: {2, 10, 2}, true: {3, 20, 1.5}}[reuse]; g[0] != want[0] || p != int(want[1]) || lag != want[2] {
			t.Errorf("reuse %v: third update %v over %d points, staleness %v; want %v over %v, staleness %v", reuse, g, p, lag, want[0], want[1], want[2])
		}
	}
}
