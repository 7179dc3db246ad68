package parallel

import (
	"container/heap"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Sleeping DAG runners, and their wake-up by a newly published call of Do (whose pieces they may take).
var (
	dagSleepers atomic.Int32
	dagWake     = make(chan struct{}, 1)
)

// Calls of Do in progress, published so that a goroutine with nothing else to do (a DAG runner waiting for a
// ready task) can claim their pieces: a DAG task that splits its work with Do then gets the idle cores too.
var open [8]atomic.Pointer[job]

// openJob publishes j in a free slot and returns the slot (−1: none free; j then runs on the cores Do posted it
// to only).
func openJob(j *job) int {
	for i := range open {
		if open[i].Load() == nil && open[i].CompareAndSwap(nil, j) {
			if dagSleepers.Load() > 0 {
				select {
				case dagWake <- struct{}{}:
				default:
				}
			}
			return i
		}
	}
	return -1
}

// closeJob withdraws j from its slot once every piece is claimed.
func closeJob(slot int, j *job) {
	if slot >= 0 {
		open[slot].CompareAndSwap(j, nil)
	}
}

// helpOpen runs unclaimed pieces of published calls of Do and reports whether it ran any.
func helpOpen() bool {
	ran := false
	for i := range open {
		if j := open[i].Load(); j != nil && j.next.Load() < j.n {
			j.run()
			ran = true
		}
	}
	return ran
}

// DAG is a set of tasks 0, …, n−1 with dependencies: Succ[i] lists the tasks that must wait for task i, Preds[i]
// is how many tasks task i waits for. Tasks are numbered in an order that respects the dependencies (every task
// after the tasks it waits for), and among ready tasks the lowest number runs first.
type DAG struct {
	Succ  [][]int32
	Preds []int32
}

// Check reports a dependency that does not go forward, or counts that do not match Succ.
func (d *DAG) Check() error {
	n := len(d.Preds)
	if len(d.Succ) != n {
		return fmt.Errorf("parallel: DAG: %d successor lists for %d tasks", len(d.Succ), n)
	}
	count := make([]int32, n)
	for i, ss := range d.Succ {
		for _, s := range ss {
			if int(s) <= i || int(s) >= n {
				return fmt.Errorf("parallel: DAG: task %d precedes task %d", i, s)
			}
			count[s]++
		}
	}
	for i := range count {
		if count[i] != d.Preds[i] {
			return fmt.Errorf("parallel: DAG: task %d waits for %d tasks, Preds says %d", i, count[i], d.Preds[i])
		}
	}
	return nil
}

// Run runs every task once with run, each after the tasks it waits for, on the calling goroutine and up to
// GOMAXPROCS−1 pooled workers; a goroutine that finds no ready task runs pieces of the tasks' own calls of Do
// meanwhile. With GOMAXPROCS = 1 the tasks run in their numbered order on the caller. After a task fails (an
// error, or a panic, returned as an error) no further task starts; Run returns the error of the lowest-numbered
// failed task once the running ones have returned. Tasks that run concurrently must not share mutable state:
// chain such tasks with dependencies.
func (d *DAG) Run(run func(i int) error) error {
	n := len(d.Preds)
	procs := runtime.GOMAXPROCS(0)
	if procs <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			if err := safeRun(run, i); err != nil {
				return err
			}
		}
		return nil
	}
	r := &dagRun{d: d, run: run, preds: make([]int32, n), failed: n, wake: make(chan struct{}, procs)}
	copy(r.preds, d.Preds)
	for i := 0; i < n; i++ {
		if r.preds[i] == 0 {
			r.ready = append(r.ready, int32(i))
		}
	}
	heap.Init(&r.ready)
	r.nready.Store(int64(len(r.ready)))
	r.left.Store(int64(n))
	// The workers join through Do: each piece is one runner's loop. A worker busy elsewhere simply does not join.
	// (not published: an idle runner must not start another runner's loop inside its own).
	do(procs, func(int) { r.loop() }, false)
	if r.failed < n {
		return r.err
	}
	return nil
}

type dagRun struct {
	d   *DAG
	run func(int) error
	mu  sync.Mutex
	// Under mu: the ready tasks, the predecessors each task still waits for, the lowest failed task (n: none)
	// and its error, and whether no task may start any more.
	ready   taskHeap
	preds   []int32
	failed  int
	err     error
	stopped bool
	left    atomic.Int64 // tasks not finished (the loops end at 0, or when stopped and nothing runs)
	running atomic.Int64
	nready  atomic.Int64 // len(ready), for polling without the lock
	over    atomic.Bool  // no task will start any more: every task finished, or one failed
	wake    chan struct{}
}

// loop runs ready tasks until none is left. Waiting, it helps published calls of Do, spins for Spin, then
// sleeps until a task becomes ready or the run ends.
func (r *dagRun) loop() {
	for {
		r.mu.Lock()
		if r.stopped && r.running.Load() == 0 || r.left.Load() == 0 {
			r.mu.Unlock()
			r.signal()
			return
		}
		if len(r.ready) > 0 && !r.stopped {
			i := int(heap.Pop(&r.ready).(int32))
			r.nready.Add(-1)
			r.running.Add(1)
			r.mu.Unlock()
			err := safeRun(r.run, i)
			r.finish(i, err)
			continue
		}
		r.mu.Unlock()
		r.idle()
	}
}

// finish records task i's end and releases the tasks waiting for it.
func (r *dagRun) finish(i int, err error) {
	r.mu.Lock()
	woke := false
	if err != nil {
		r.stopped = true
		if i < r.failed {
			r.failed, r.err = i, err
		}
	} else {
		for _, s := range r.d.Succ[i] {
			if r.preds[s]--; r.preds[s] == 0 {
				heap.Push(&r.ready, s)
				r.nready.Add(1)
				woke = true
			}
		}
	}
	r.left.Add(-1)
	r.running.Add(-1)
	done := r.left.Load() == 0 || r.stopped && r.running.Load() == 0
	if r.left.Load() == 0 || r.stopped {
		r.over.Store(true)
	}
	r.mu.Unlock()
	if woke || done {
		r.signal()
	}
}

// signal wakes sleeping runners.
func (r *dagRun) signal() {
	for {
		select {
		case r.wake <- struct{}{}:
		default:
			return
		}
	}
}

// DAGSpin is how long a DAG runner with no ready task keeps polling (and helping the running tasks' calls of
// Do) before it sleeps (woken by a ready task, the end of the run, or a newly published call of Do): a task graph is one training step, whose nodes take microseconds to milliseconds, and a
// runner woken from sleep for each would cost as much as the work it takes.
const DAGSpin = 2 * time.Millisecond

// idle waits for a ready task or the end of the run: helping published calls of Do and polling for DAGSpin,
// then sleeping until signalled.
func (r *dagRun) idle() {
	start := time.Now()
	for {
		if helpOpen() {
			start = time.Now()
		}
		if r.nready.Load() > 0 || r.over.Load() {
			return
		}
		if time.Since(start) > DAGSpin {
			break
		}
		yield()
	}
	dagSleepers.Add(1)
	select {
	case <-r.wake:
	case <-dagWake:
	case <-time.After(time.Millisecond):
	}
	dagSleepers.Add(-1)
}

// safeRun calls run(i), returning a panic as an error.
func safeRun(run func(int) error, i int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in task %d: %v", i, p)
		}
	}()
	return run(i)
}

// taskHeap is a min-heap of task numbers.
type taskHeap []int32

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(a, b int) bool { return h[a] < h[b] }
func (h taskHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *taskHeap) Push(x any)        { *h = append(*h, x.(int32)) }
func (h *taskHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
