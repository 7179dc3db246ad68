package cluster

import (
	"sort"
	"time"
)

// book is the server's bounded-delay bookkeeping (Algorithm 1): one slot per shard with the newest gradient its
// worker pushed, and the rule that update t may happen once every live worker's newest gradient was computed
// at a version ≥ t − τ. It does no I/O, so the rule is tested on its own.
type book struct {
	tau int
	// reuse aggregates every live worker's newest gradient at every update (ADVGP's Algorithm 1), a gradient
	// counting again until its worker replaces it; otherwise an update takes the gradients no earlier update took.
	reuse   bool
	version int // t: the number of updates applied
	slots   map[int]*slot
	served  map[int]bool // shards that have had a worker
	// Stale counts gradients refused for being older than t − τ; Unknown those from a worker that holds no slot
	// (dropped, or replaced by a newer worker of the same shard).
	stale, unknown, joins, rejoins int
}

type slot struct {
	id      string
	shardN  int
	joined  int  // the version the worker joined at
	has     bool // a gradient arrived since the worker joined
	version int  // the version of the newest gradient
	grad    []float64
	loss    float64
	seen    time.Time // newest heartbeat or gradient
	gradAt  time.Time // newest gradient (or the join)
	used    bool      // an update took the newest gradient
	suspect time.Time // since when the worker's heartbeats say it waits for what was lost (zero: not)
	pushed  int       // the version the suspicion is about
}

func newBook(tau int, reuse bool) *book {
	return &book{tau: tau, reuse: reuse, slots: map[int]*slot{}, served: map[int]bool{}}
}

// join registers id as the worker of shard (replacing any earlier one); rejoin reports that the shard had
// been served before.
func (b *book) join(shard int, id string, shardN int, now time.Time) (rejoin bool) {
	if old, ok := b.slots[shard]; ok && old.id == id {
		old.seen = now
		return false
	}
	had := b.served[shard]
	b.served[shard] = true
	b.joins++
	if had {
		b.rejoins++
	}
	b.slots[shard] = &slot{id: id, shardN: shardN, joined: b.version, seen: now, gradAt: now}
	return had
}

// beat records a heartbeat; it reports false for a worker that holds no slot.
func (b *book) beat(shard int, id string, now time.Time) bool {
	s, ok := b.slots[shard]
	if !ok || s.id != id {
		return false
	}
	s.seen = now
	return true
}

// lost reports whether the worker of shard, whose heartbeat says it pushed a gradient at version pushed and
// has waited for a newer version for waited (by its clock), has waited for longer than grace for something
// lost in transit: its gradient (the book holds none at that version) or a version the server published (the
// book is past pushed), the book's side too holding for longer than grace by the server's clock (a heartbeat
// that queued while the server was busy is not evidence). A gradient or a version still in flight arrives
// within grace; the worker is then told to join again, which brings it the current version.
func (b *book) lost(shard int, id string, waiting bool, pushed int, waited time.Duration, now time.Time, grace time.Duration) bool {
	s, ok := b.slots[shard]
	if !ok || s.id != id {
		return false
	}
	if !waiting || (s.has && s.version >= pushed && b.version <= pushed) {
		s.suspect = time.Time{}
		return false
	}
	if s.suspect.IsZero() || s.pushed != pushed {
		s.suspect, s.pushed = now, pushed
		return false
	}
	if now.Sub(s.suspect) < grace || waited < grace {
		return false
	}
	s.suspect = time.Time{}
	return true
}

// accept stores a gradient as its worker's newest. It refuses (and counts) one computed at a version older
// than t − τ, and one from a worker without a slot; known reports whether the worker holds a slot.
func (b *book) accept(m *gradMsg, now time.Time) (ok, known bool) {
	s, has := b.slots[m.Shard]
	if !has || s.id != m.ID {
		b.unknown++
		return false, false
	}
	s.seen = now
	if m.Version < b.version-b.tau || m.Version > b.version {
		b.stale++
		return false, true
	}
	s.has, s.version, s.grad, s.loss, s.gradAt, s.used = true, m.Version, m.Grad, m.Loss, now, false
	return true, true
}

// ready reports whether update t = b.version may happen: some gradient is in, and every live worker's newest
// gradient was computed at a version ≥ t − τ (a worker that has pushed nothing since it joined at version j
// counts as j − 1, so τ = 0 waits for it).
func (b *book) ready() bool {
	any := false
	for _, s := range b.slots {
		v := s.joined - 1
		if s.has {
			v = s.version
			any = any || b.reuse || !s.used
		}
		if v < b.version-b.tau {
			return false
		}
	}
	return any
}

// aggregate writes Σ_k ∇G_k over the workers' newest gradients (with reuse; else those no earlier update took)
// into grad and returns Σ_k G_k, the number of training points their shards hold and the gradients' staleness
// t − v (v: the version a gradient was computed at) averaged over those points. ready guarantees one at least.
func (b *book) aggregate(grad []float64) (loss float64, points int, staleness float64) {
	clear(grad)
	lag := 0
	for _, k := range b.live() { // in shard order, so that a synchronous run is reproducible
		s := b.slots[k]
		if !s.has || (s.used && !b.reuse) {
			continue
		}
		s.used = true
		for i, v := range s.grad {
			grad[i] += v
		}
		loss += s.loss
		points += s.shardN
		lag += s.shardN * (b.version - s.version)
	}
	return loss, points, float64(lag) / float64(points)
}

// expire drops the workers silent for longer than hb, or without a gradient for longer than stall (0: never),
// and returns their shards and ids.
func (b *book) expire(now time.Time, hb, stall time.Duration) (shards []int, ids []string) {
	for k, s := range b.slots {
		if now.Sub(s.seen) > hb || (stall > 0 && now.Sub(s.gradAt) > stall) {
			shards = append(shards, k)
		}
	}
	sort.Ints(shards)
	for _, k := range shards {
		ids = append(ids, b.slots[k].id)
		delete(b.slots, k)
	}
	return shards, ids
}

// touch counts every worker as seen, and as having pushed, at now (after a pause of the server itself).
func (b *book) touch(now time.Time) {
	for _, s := range b.slots {
		s.seen, s.gradAt = now, now
	}
}

// live returns the shards that have a worker, sorted.
func (b *book) live() []int {
	ks := make([]int, 0, len(b.slots))
	for k := range b.slots {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}
