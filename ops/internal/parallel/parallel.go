// Package parallel runs the pieces of one numerical call on the calling goroutine and a pool of workers that
// stay awake between calls.
//
// A training step is a sequence of a few hundred calls of 20 µs to 2 ms each, most of them split over the cores.
// Started as fresh goroutines, each call's helpers land on a processor whose thread has gone to sleep since the
// previous call: waking it (a futex and a context switch) and parking it again cost as much as a small call's
// work, so at the sizes users have (hundreds of rows, M ≈ 100) a second core bought nothing. Here each worker,
// once done, spins for a short while (Spin) watching for the next call before it sleeps, as OpenBLAS's threads
// do; the caller likewise spins briefly before it blocks on the workers' completion.
//
// Do(n, f) runs f(0), …, f(n−1), each exactly once, and returns when all have returned. Pieces are claimed
// dynamically by the caller and by whichever workers are idle, so a call made while the pool is busy (a nested
// call from inside a piece, or a call from another goroutine) still completes, on the callers that reach it.
// Which goroutine runs which piece is not fixed: pieces must write disjoint outputs, and results must not depend
// on the assignment (every caller splits its work by the size of its operands, never by who runs a piece).
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Spin is how long an idle worker, and a caller waiting for its pieces, keep polling before they block.
const Spin = 50 * time.Microsecond

// job is one call of Do.
type job struct {
	f       func(int)
	n       int64
	next    atomic.Int64 // the next piece to claim
	done    atomic.Int64 // pieces finished
	waiting atomic.Bool  // the caller blocks on wake
	wake    chan struct{}
}

// run claims and runs pieces until none is left, and wakes the caller if it finished the last one while the
// caller sleeps.
func (j *job) run() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.n {
			return
		}
		j.f(int(i))
		if j.done.Add(1) == j.n && j.waiting.Load() {
			select {
			case j.wake <- struct{}{}:
			default:
			}
		}
	}
}

// worker is one pooled goroutine: it runs the job posted to it, then polls for the next one for Spin, then sleeps
// until a job is posted with a wake-up.
type worker struct {
	post     atomic.Pointer[job]
	sleeping atomic.Bool
	wake     chan struct{}
}

func (w *worker) loop() {
	for {
		if j := w.post.Load(); j != nil {
			j.run()
			w.post.Store(nil)
			continue
		}
		if w.spin() {
			continue
		}
		// Announce the sleep, then look once more: a poster stores its job before it reads sleeping, so either
		// this load sees the job or the poster sees sleeping and sends the wake-up.
		w.sleeping.Store(true)
		if w.post.Load() == nil {
			<-w.wake
		}
		w.sleeping.Store(false)
	}
}

// spin polls for a posted job for Spin and reports whether one arrived.
func (w *worker) spin() bool {
	start := time.Now()
	for {
		for range 64 {
			if w.post.Load() != nil {
				return true
			}
		}
		if time.Since(start) > Spin {
			return false
		}
		yield()
	}
}

var (
	mu      sync.Mutex
	workers atomic.Pointer[[]*worker]
)

// pool returns at least want workers (want < GOMAXPROCS), starting missing ones.
func pool(want int) []*worker {
	if ws := workers.Load(); ws != nil && len(*ws) >= want {
		return *ws
	}
	mu.Lock()
	defer mu.Unlock()
	var ws []*worker
	if p := workers.Load(); p != nil {
		ws = *p
	}
	for len(ws) < want {
		w := &worker{wake: make(chan struct{}, 1)}
		go w.loop()
		ws = append(ws, w)
	}
	all := append([]*worker(nil), ws...)
	workers.Store(&all)
	return all
}

// Do runs f(i) for i = 0, …, n−1, on the calling goroutine and on up to GOMAXPROCS−1 idle pooled workers, and
// returns when every f(i) has returned. With n ≤ 1 or GOMAXPROCS = 1 it calls f on the caller alone.
func Do(n int, f func(i int)) { do(n, f, true) }

// do is Do; publish makes the call's pieces claimable by idle DAG runners too (see helpOpen).
func do(n int, f func(i int), publish bool) {
	procs := runtime.GOMAXPROCS(0)
	if n <= 1 || procs <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	j := &job{f: f, n: int64(n), wake: make(chan struct{}, 1)}
	helpers := min(n, procs) - 1
	for _, w := range pool(procs - 1)[:procs-1] {
		if helpers == 0 {
			break
		}
		if !w.post.CompareAndSwap(nil, j) { // busy: the pieces go to those that are free, the caller included
			continue
		}
		helpers--
		if w.sleeping.Load() {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	slot := -1
	if publish {
		slot = openJob(j)
	}
	j.run()
	closeJob(slot, j)
	if j.done.Load() == j.n {
		return
	}
	start := time.Now()
	for j.done.Load() != j.n {
		if time.Since(start) > Spin {
			j.waiting.Store(true)
			if j.done.Load() != j.n {
				<-j.wake
			}
			return
		}
		yield()
	}
}
