package cluster

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"gonum.org/v1/gonum/mat"
)

// The exact GP's kernel products over several machines (issue 40, deliverable 4; Wang et al. 2019, §3, who
// partition them over GPUs): the server runs the CG solver (ops.CGSolver) with Products as its kernel operator,
// and each worker holds the training inputs and computes its row blocks of every product K·V, K(X_i, X)·V
// (cg.Blocks.MulRows), and of every gradient Σ (A·Bᵀ) ⊙ ∂K over its rows (cg.Blocks.BilinearGradRows): the O(N²)
// work. What is O(N·rank) stays on the server: the diagonal and the rows of the pivoted-Cholesky preconditioner
// and its gradient. Messages go over the run's NATS subjects, with the cluster's security (identities,
// permissions, TLS beyond loopback):
//
//	.cg.join     request/reply: worker i of k asks for the kernel's Spec, the inputs and its row blocks
//	.cg.task     server → workers: bind the hyperparameters, a product, a gradient, done
//	.cg.result   worker → server: its part of a task's answer
//	.cg.beat     worker → server: heartbeats, also while it computes
//	.cg.alive    server → workers: heartbeats, also while the server computes between tasks
//
// A worker silent for HeartbeatTimeout fails the task the server waits for at once (ErrProductWorker, naming
// it) instead of at the task's Timeout; a worker that hears nothing from the server for ServerTimeout leaves
// with ErrServerGone instead of waiting for tasks forever. A worker's heartbeat also says whether it is computing
// a task: a worker idle without having answered the task the server waits for lost the task or its answer in
// transit (NATS delivers at most once; a reconnect may drop messages), and
// the server sends the task again; the worker computes it, or sends the answer it keeps again.
//
// Sums over workers are added in worker order, so a run's numbers do not depend on the order results arrive; they
// differ from one process's (which sums each product over the upper triangle) by rounding only.

// Operations of a products task.
const (
	opBind byte = iota + 1
	opMul
	opGrad
	opDone
)

// DefaultProductTimeout bounds how long the server waits for every worker's part of one task.
const DefaultProductTimeout = 10 * time.Minute

// ErrProductWorker is wrapped by the errors of a products run whose worker failed, vanished or timed out.
var ErrProductWorker = errors.New("cluster: a products worker failed")

// ErrServerGone is wrapped by the error of a products worker that heard nothing from its server for
// ProductWorkerConfig.ServerTimeout.
var ErrServerGone = errors.New("cluster: the products server is gone")

type productSubjects struct{ join, task, result, beat, alive string }

func productSubjectsOf(run string) productSubjects {
	p := RunSubjects(run) + ".cg"
	return productSubjects{join: p + ".join", task: p + ".task", result: p + ".result", beat: p + ".beat", alive: p + ".alive"}
}

// productSetup is what a joining worker gets: the kernel, the inputs, the block size and its rows, and the
// hyperparameters bound last (none before the first Bind), so that a worker replacing one that left computes
// with them at once.
type productSetup struct {
	Err     string
	Kernel  gp.Spec
	Block   int
	N, D    int
	X       []float64
	Lo, Hi  int // its rows, on block boundaries
	Workers int
	Beat    time.Duration // how often the worker sends heartbeats
	Hyper   []float64     // flattened, as a bind task carries them
}

type productJoin struct{ Index, Of int }

// ProductsConfig configures ServeProducts.
type ProductsConfig struct {
	// Conn is the server's NATS connection and Run the run's name (both required).
	Conn *nats.Conn
	Run  string
	// Workers is the number k of workers; worker i computes the row blocks [i·B/k, (i+1)·B/k) of the B blocks.
	Workers int
	// Kernel is the model's kernel (it must describe itself: workers rebuild it from its Spec); X the training
	// inputs [N,D]; Blocks the block size (and the server's own memory budget).
	Kernel gp.Kernel
	X      *mat.Dense
	Blocks cg.BlocksOptions
	// JoinTimeout bounds the wait for every worker to join (default DefaultJoinTimeout); Timeout the wait for
	// every worker's part of a task (default DefaultProductTimeout).
	JoinTimeout, Timeout time.Duration
	// HeartbeatEvery is how often the server and the workers send heartbeats (default DefaultHeartbeatEvery);
	// a worker silent for HeartbeatTimeout (default DefaultHeartbeatTimeout) plus RejoinWait fails the task in
	// progress.
	HeartbeatEvery, HeartbeatTimeout time.Duration
	// RejoinWait is how long a task waits, beyond HeartbeatTimeout, for a silent worker to come back: a worker
	// process started again with its index (by hand or by a supervisor) joins, receives the hyperparameters
	// bound last and the task in progress, and the run goes on (Rejoined counts them). 0: the task fails at
	// once.
	RejoinWait time.Duration
}

// Products is K(X, X) of a kernel over the workers of a run: an ops.KernelOperator (give it to cg.Config.Operator)
// whose products and gradients the workers compute by rows. Close tells the workers to leave.
type Products struct {
	c      ProductsConfig
	subj   productSubjects
	local  *cg.Blocks // the server's: diagonal, rows and the preconditioner's gradient
	x      []float64
	n, d   int
	ranges [][2]int // the workers' rows

	mu      sync.Mutex // one task at a time
	seq     uint64
	sub     *nats.Subscription
	results chan productResult
	joinSub *nats.Subscription
	beatSub *nats.Subscription
	peers   []productPeer
	resent  atomic.Int64
	rejoins atomic.Int64
	hyper   atomic.Pointer[[]float64] // the hyperparameters bound last, flattened (a joining worker's)
	quit    chan struct{}             // closed by Close: the server's heartbeats stop
}

// productPeer is what the server last heard of a worker: when (its heartbeat, result or join; Unix nanoseconds)
// and, by its heartbeat, whether it is computing a task.
type productPeer struct {
	heard atomic.Int64
	busy  atomic.Bool
}

func (q *productPeer) hear(busy bool) {
	q.busy.Store(busy)
	q.heard.Store(time.Now().UnixNano())
}

// silent returns how long the worker has been silent.
func (q *productPeer) silent() time.Duration { return time.Since(time.Unix(0, q.heard.Load())) }

type productResult struct {
	seq   uint64
	index int
	err   string
	data  []float64
}

// ServeProducts starts the server side of a products run: it answers the workers' joins and returns once all k
// have joined (JoinTimeout).
func ServeProducts(c ProductsConfig) (*Products, error) {
	if c.Conn == nil || c.Kernel == nil || c.X == nil || c.Workers < 1 {
		return nil, errors.New("cluster: ServeProducts needs a connection, a kernel, the inputs and at least one worker")
	}
	if err := CheckRunName(c.Run); err != nil {
		return nil, err
	}
	if c.JoinTimeout <= 0 {
		c.JoinTimeout = DefaultJoinTimeout
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultProductTimeout
	}
	if c.HeartbeatEvery <= 0 {
		c.HeartbeatEvery = DefaultHeartbeatEvery
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	desc, ok := c.Kernel.(gp.Describer)
	if !ok {
		return nil, fmt.Errorf("cluster: kernel %T cannot describe itself: the workers could not rebuild it", c.Kernel)
	}
	spec, err := desc.Spec()
	if err != nil {
		return nil, err
	}
	local, err := cg.NewBlocks(c.Kernel, c.Blocks)
	if err != nil {
		return nil, err
	}
	n, d := c.X.Dims()
	p := &Products{c: c, subj: productSubjectsOf(c.Run), local: local, x: mat.DenseCopyOf(c.X).RawMatrix().Data, n: n, d: d,
		results: make(chan productResult, 4*c.Workers), peers: make([]productPeer, c.Workers), quit: make(chan struct{})}
	block := cg.DefaultBlock
	if c.Blocks.Block > 0 {
		block = c.Blocks.Block
	}
	nb := (n + block - 1) / block
	if c.Workers > nb {
		return nil, fmt.Errorf("cluster: %d workers for %d row blocks of %d rows: use at most %d", c.Workers, nb, block, nb)
	}
	for i := range c.Workers {
		p.ranges = append(p.ranges, [2]int{i * nb / c.Workers * block, min(n, (i+1)*nb/c.Workers*block)})
	}
	if p.sub, err = c.Conn.Subscribe(p.subj.result, func(m *nats.Msg) {
		var r productResult
		if err := r.unmarshal(m.Data); err == nil {
			p.results <- r
		}
	}); err != nil {
		return nil, err
	}
	if p.beatSub, err = c.Conn.Subscribe(p.subj.beat, func(m *nats.Msg) {
		if i, busy, ok := parseBeat(m.Data); ok && i < uint64(c.Workers) {
			p.peers[i].hear(busy)
		}
	}); err != nil {
		p.sub.Unsubscribe()
		return nil, err
	}
	var (
		joinMu sync.Mutex
		seen   = map[int]bool{}
		all    = make(chan struct{}) // closed when every worker has joined
	)
	setup := productSetup{Kernel: spec, Block: block, N: n, D: d, X: p.x, Workers: c.Workers, Beat: c.HeartbeatEvery}
	if p.joinSub, err = c.Conn.Subscribe(p.subj.join, func(m *nats.Msg) {
		var j productJoin
		s := setup
		if err := json.Unmarshal(m.Data, &j); err != nil || j.Of != c.Workers || j.Index < 0 || j.Index >= c.Workers {
			s = productSetup{Err: fmt.Sprintf("a join as worker %d of %d; the run has %d workers", j.Index, j.Of, c.Workers)}
		} else {
			s.Lo, s.Hi = p.ranges[j.Index][0], p.ranges[j.Index][1]
			if h := p.hyper.Load(); h != nil {
				s.Hyper = *h
			}
		}
		b, err := json.Marshal(s)
		if err == nil && m.Respond(b) == nil && s.Err == "" {
			p.peers[j.Index].hear(false)
			joinMu.Lock()
			if !seen[j.Index] {
				seen[j.Index] = true
				if len(seen) == c.Workers {
					close(all)
				}
			} else {
				p.rejoins.Add(1) // a worker started again (or one whose join reply was lost)
			}
			joinMu.Unlock()
		}
	}); err != nil {
		p.sub.Unsubscribe()
		p.beatSub.Unsubscribe()
		return nil, err
	}
	go every(c.HeartbeatEvery, p.quit, func() { c.Conn.Publish(p.subj.alive, nil) }) // the server's heartbeats
	select {
	case <-all:
	case <-time.After(c.JoinTimeout):
		p.Close()
		joinMu.Lock()
		defer joinMu.Unlock()
		return nil, fmt.Errorf("%w: %d of %d workers joined within %v", ErrProductWorker, len(seen), c.Workers, c.JoinTimeout)
	}
	// A worker's first task must not overtake its subscription: the join reply is sent after it subscribed.
	return p, nil
}

// Close tells the workers to leave and stops serving.
func (p *Products) Close() {
	if p.sub == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	if b, err := taskBytes(p.seq, opDone, 0, nil); err == nil {
		p.c.Conn.Publish(p.subj.task, b)
		p.c.Conn.Flush()
	}
	p.sub.Unsubscribe()
	if p.joinSub != nil {
		p.joinSub.Unsubscribe()
	}
	p.beatSub.Unsubscribe()
	close(p.quit)
	p.sub = nil
}

// call sends a task and returns every worker's part, by worker index.
func (p *Products) call(op byte, c int, parts ...[]float64) ([][]float64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sub == nil {
		return nil, fmt.Errorf("%w: the products run is closed", ErrProductWorker)
	}
	p.seq++
	b, err := taskBytes(p.seq, op, c, parts)
	if err != nil {
		return nil, err
	}
	if err := publish(p.c.Conn, p.subj.task, b); err != nil {
		return nil, fmt.Errorf("cluster: publishing a products task: %w", err)
	}
	out := make([][]float64, p.c.Workers)
	got := 0
	timeout := time.After(p.c.Timeout)
	check := time.NewTicker(p.c.HeartbeatEvery)
	defer check.Stop()
	sent := time.Now()
	for got < p.c.Workers {
		select {
		case <-check.C:
			lost := false
			for i, o := range out {
				if o != nil {
					continue
				}
				q := &p.peers[i]
				silent := q.silent()
				if silent > p.c.HeartbeatTimeout+p.c.RejoinWait {
					return nil, fmt.Errorf("%w: worker %d has been silent for %v (no heartbeat; its process or its connection is gone, and no worker %d joined again) during task %d",
						ErrProductWorker, i, silent.Round(time.Millisecond), i, p.seq)
				}
				// Idle without this task's answer, by a heartbeat sent well after the task: it was lost.
				lost = lost || (!q.busy.Load() && time.Since(sent) > 4*p.c.HeartbeatEvery && time.Since(sent)-silent > 2*p.c.HeartbeatEvery)
			}
			if lost {
				if err := publish(p.c.Conn, p.subj.task, b); err != nil {
					return nil, fmt.Errorf("cluster: publishing a products task again: %w", err)
				}
				sent = time.Now()
				p.resent.Add(1)
			}
		case r := <-p.results:
			if r.seq != p.seq || r.index < 0 || r.index >= p.c.Workers || out[r.index] != nil {
				continue // a stale or repeated answer
			}
			p.peers[r.index].hear(false)
			if r.err != "" {
				return nil, fmt.Errorf("%w: worker %d: %s", ErrProductWorker, r.index, r.err)
			}
			out[r.index] = r.data
			if out[r.index] == nil {
				out[r.index] = []float64{}
			}
			got++
		case <-timeout:
			return nil, fmt.Errorf("%w: %d of %d workers answered task %d within %v", ErrProductWorker, got, p.c.Workers, p.seq, p.c.Timeout)
		}
	}
	return out, nil
}

// Resent returns the number of times a task was sent again because a worker lost it or its answer (or a
// worker joined again while it was in progress).
func (p *Products) Resent() int { return int(p.resent.Load()) }

// Rejoined returns the number of joins by a worker index that had joined before: workers started again.
func (p *Products) Rejoined() int { return int(p.rejoins.Load()) }

// String says where the products run (cg.GPR's Describe shows it).
func (p *Products) String() string {
	return fmt.Sprintf("kernel products by %d workers over NATS, each its row blocks recomputed at every product", p.c.Workers)
}

// HyperSizes returns the kernel's hyperparameter sizes.
func (p *Products) HyperSizes() []int { return p.local.HyperSizes() }

// Bind binds the hyperparameters on the server and on every worker; x must hold the inputs the run was served
// with.
func (p *Products) Bind(x []float64, n, d int, hyper [][]float64) error {
	if n != p.n || d != p.d || !slices.Equal(x, p.x) {
		return &ops.ShapeError{Op: "cluster.Products", Want: fmt.Sprintf("the %d×%d inputs the run was served with", p.n, p.d), Got: fmt.Sprintf("other inputs (%d×%d)", n, d)}
	}
	if err := p.local.Bind(p.x, n, d, hyper); err != nil {
		return err
	}
	var flat []float64
	for _, h := range hyper {
		flat = append(flat, h...)
	}
	p.hyper.Store(&flat) // before the task: a worker joining meanwhile binds them, then gets the task again
	_, err := p.call(opBind, 0, flat)
	return err
}

// Mul writes K·v into out: the workers' row blocks.
func (p *Products) Mul(v []float64, c int, out []float64) error {
	if c <= 0 || len(v) != p.n*c || len(out) != p.n*c {
		return &ops.ShapeError{Op: "cluster.Products.Mul", Want: fmt.Sprintf("blocks of %d×%d values", p.n, c), Got: fmt.Sprintf("%d and %d", len(v), len(out))}
	}
	parts, err := p.call(opMul, c, v)
	if err != nil {
		return err
	}
	for i, r := range p.ranges {
		if len(parts[i]) != (r[1]-r[0])*c {
			return fmt.Errorf("%w: worker %d answered %d values for rows [%d, %d)", ErrProductWorker, i, len(parts[i]), r[0], r[1])
		}
		copy(out[r[0]*c:r[1]*c], parts[i])
	}
	return nil
}

// Diag writes diag K into out (on the server).
func (p *Products) Diag(out []float64) error { return p.local.Diag(out) }

// Row writes row i of K into out (on the server).
func (p *Products) Row(i int, out []float64) error { return p.local.Row(i, out) }

// BilinearGrad adds Σ (A·Bᵀ) ⊙ ∂K to dst: the workers' rows, added in worker order.
func (p *Products) BilinearGrad(a, b []float64, c int, dst [][]float64) error {
	if c <= 0 || len(a) != p.n*c || len(b) != p.n*c {
		return &ops.ShapeError{Op: "cluster.Products.BilinearGrad", Want: fmt.Sprintf("blocks of %d×c values", p.n), Got: fmt.Sprintf("%d and %d (c = %d)", len(a), len(b), c)}
	}
	parts, err := p.call(opGrad, c, a, b)
	if err != nil {
		return err
	}
	for i, part := range parts {
		k := 0
		for j := range dst {
			if k+len(dst[j]) > len(part) {
				return fmt.Errorf("%w: worker %d answered a gradient of %d values", ErrProductWorker, i, len(part))
			}
			for e := range dst[j] {
				dst[j][e] += part[k]
				k++
			}
		}
	}
	return nil
}

// PivotGrad is computed on the server (O(N·rank)).
func (p *Products) PivotGrad(piv []int, u, w []float64, dst [][]float64) error {
	return p.local.PivotGrad(piv, u, w, dst)
}

var _ ops.KernelOperator = (*Products)(nil)

// ProductWorkerConfig configures WorkProducts.
type ProductWorkerConfig struct {
	// Conn is the worker's NATS connection and Run the run's name (both required); the worker is Index of Of.
	Conn        *nats.Conn
	Run         string
	Index, Of   int
	JoinTimeout time.Duration // default DefaultJoinTimeout
	// ServerTimeout ends the worker with ErrServerGone when it hears nothing from the server for longer
	// (default DefaultServerTimeout).
	ServerTimeout time.Duration
	// Stop, when closed, ends the worker (nil error) between tasks.
	Stop <-chan struct{}
	// lose, when set (tests), drops a task on arrival (what "task") or the answer to it ("result") when it
	// returns true: the messages NATS may lose in transit.
	lose func(what string, seq uint64) bool
}

// WorkProducts is a products worker: it joins, rebuilds the kernel from its Spec, and answers the server's tasks
// for its row blocks until the server's done (or an error).
func WorkProducts(c ProductWorkerConfig) error {
	if c.Conn == nil {
		return errors.New("cluster: WorkProducts needs a connection")
	}
	if err := CheckRunName(c.Run); err != nil {
		return err
	}
	if c.JoinTimeout <= 0 {
		c.JoinTimeout = DefaultJoinTimeout
	}
	if c.ServerTimeout <= 0 {
		c.ServerTimeout = DefaultServerTimeout
	}
	subj := productSubjectsOf(c.Run)
	tasks := make(chan *nats.Msg, 16)
	sub, err := c.Conn.ChanSubscribe(subj.task, tasks)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	var heard atomic.Int64 // the server's last heartbeat or task
	heard.Store(time.Now().UnixNano())
	alive, err := c.Conn.Subscribe(subj.alive, func(*nats.Msg) { heard.Store(time.Now().UnixNano()) })
	if err != nil {
		return err
	}
	defer alive.Unsubscribe()
	req, _ := json.Marshal(productJoin{Index: c.Index, Of: c.Of})
	var setup productSetup
	deadline := time.Now().Add(c.JoinTimeout)
	for {
		m, err := c.Conn.Request(subj.join, req, 2*time.Second)
		if err == nil {
			if err := json.Unmarshal(m.Data, &setup); err != nil {
				return fmt.Errorf("%w: a malformed setup: %v", ErrJoin, err)
			}
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: no products server answered within %v: %v", ErrJoin, c.JoinTimeout, err)
		}
		time.Sleep(200 * time.Millisecond) // no responders returns at once: do not spin
	}
	if setup.Err != "" {
		return fmt.Errorf("%w: %s", ErrJoin, setup.Err)
	}
	built, err := gp.BuildSpec(setup.Kernel, gp.BuildOptions{})
	if err != nil {
		return fmt.Errorf("%w: rebuilding the kernel: %w", ErrJoin, err)
	}
	kern, ok := built.(gp.Kernel)
	if !ok || setup.N <= 0 || setup.D <= 0 || len(setup.X) != setup.N*setup.D {
		return fmt.Errorf("%w: a setup of %T and %d values for %d×%d inputs", ErrJoin, built, len(setup.X), setup.N, setup.D)
	}
	b, err := cg.NewBlocks(kern, cg.BlocksOptions{Block: setup.Block, Memory: -1})
	if err != nil {
		return err
	}
	sizes := b.HyperSizes()
	bound := false
	if setup.Hyper != nil { // joining a run in progress: the hyperparameters bound last
		if err := bindFlat(b, setup, sizes, [][]float64{setup.Hyper}); err != nil {
			return fmt.Errorf("%w: binding the run's hyperparameters: %w", ErrJoin, err)
		}
		bound = true
	}
	beat := setup.Beat
	if beat <= 0 {
		beat = DefaultHeartbeatEvery
	}
	var (
		answered uint64      // the last task answered
		busy     atomic.Bool // computing a task (the heartbeats read it)
		last     []byte      // the last answer, sent again when its task comes again
	)
	stop := make(chan struct{})
	defer close(stop)
	go every(beat, stop, func() { // heartbeats, also while a task computes
		c.Conn.Publish(subj.beat, beatBytes(uint64(c.Index), busy.Load()))
	})
	lose := func(what string, seq uint64) bool { return c.lose != nil && c.lose(what, seq) }
	check := time.NewTicker(beat)
	defer check.Stop()
	for {
		var m *nats.Msg
		select {
		case <-c.Stop:
			return nil
		case m = <-tasks:
		case <-check.C:
			if silent := time.Since(time.Unix(0, heard.Load())); silent > c.ServerTimeout {
				return fmt.Errorf("%w: products worker %d heard nothing for %v", ErrServerGone, c.Index, silent.Round(time.Millisecond))
			}
			continue
		}
		heard.Store(time.Now().UnixNano())
		seq, op, cols, parts, err := parseTask(m.Data)
		if err != nil {
			return fmt.Errorf("cluster: products worker %d: %w", c.Index, err)
		}
		if op == opDone {
			return nil
		}
		if seq <= answered { // sent again: its answer was lost (or this is a late copy)
			if seq == answered && last != nil {
				if err := publish(c.Conn, subj.result, last); err != nil {
					return err
				}
			}
			continue
		}
		if lose("task", seq) {
			continue
		}
		busy.Store(true)
		var data []float64
		switch op {
		case opBind:
			err = bindFlat(b, setup, sizes, parts)
			bound = err == nil
		case opMul:
			switch {
			case !bound:
				err = errors.New("a product before the hyperparameters")
			case len(parts) != 1:
				err = errors.New("a product without its block")
			default:
				data = make([]float64, (setup.Hi-setup.Lo)*cols)
				err = b.MulRows(setup.Lo, setup.Hi, parts[0], cols, data)
			}
		case opGrad:
			switch {
			case !bound:
				err = errors.New("a gradient before the hyperparameters")
			case len(parts) != 2:
				err = errors.New("a gradient without its two blocks")
			default:
				g := make([][]float64, len(sizes))
				for j, s := range sizes {
					g[j] = make([]float64, s)
				}
				if err = b.BilinearGradRows(setup.Lo, setup.Hi, parts[0], parts[1], cols, g); err == nil {
					for _, s := range g {
						data = append(data, s...)
					}
				}
			}
		default:
			err = fmt.Errorf("unknown operation %d", op)
		}
		r := productResult{seq: seq, index: c.Index, data: data}
		if err != nil {
			r.err = err.Error()
		}
		last = r.marshal()
		answered = seq
		busy.Store(false)
		if lose("result", seq) {
			continue
		}
		if err := publish(c.Conn, subj.result, last); err != nil {
			return err
		}
	}
}

// beatBytes encodes a products worker's heartbeat: its index and whether it is computing a task.
func beatBytes(index uint64, busy bool) []byte {
	b := binary.LittleEndian.AppendUint64(nil, index)
	if busy {
		return append(b, 1)
	}
	return append(b, 0)
}

// parseBeat decodes beatBytes.
func parseBeat(data []byte) (index uint64, busy, ok bool) {
	if len(data) != 9 || data[8] > 1 {
		return 0, false, false
	}
	return binary.LittleEndian.Uint64(data), data[8] == 1, true
}

// bindFlat binds the worker's blocks to the setup's inputs and the flattened hyperparameters.
func bindFlat(b *cg.Blocks, s productSetup, sizes []int, parts [][]float64) error {
	if len(parts) != 1 {
		return errors.New("a binding without its hyperparameters")
	}
	flat := parts[0]
	hyper := make([][]float64, len(sizes))
	k := 0
	for j, n := range sizes {
		if k+n > len(flat) {
			return fmt.Errorf("%d hyperparameter values, the kernel has more", len(flat))
		}
		hyper[j] = flat[k : k+n]
		k += n
	}
	if k != len(flat) {
		return fmt.Errorf("%d hyperparameter values, the kernel has %d", len(flat), k)
	}
	return b.Bind(s.X, s.N, s.D, hyper)
}

// taskBytes encodes a task: sequence, operation, columns, then each part as length-prefixed float64s.
func taskBytes(seq uint64, op byte, c int, parts [][]float64) ([]byte, error) {
	size := 17
	for _, p := range parts {
		size += 8 + 8*len(p)
	}
	b := make([]byte, 0, size)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = append(b, op)
	b = binary.LittleEndian.AppendUint64(b, uint64(c))
	for _, p := range parts {
		b = putFloats(b, p)
	}
	return b, nil
}

// parseTask decodes taskBytes' encoding; a short or malformed task is an error.
func parseTask(data []byte) (seq uint64, op byte, c int, parts [][]float64, err error) {
	if len(data) < 17 {
		return 0, 0, 0, nil, errShortMessage
	}
	seq, op = binary.LittleEndian.Uint64(data), data[8]
	c = int(binary.LittleEndian.Uint64(data[9:]))
	if c < 0 || c > 1<<20 {
		return 0, 0, 0, nil, fmt.Errorf("cluster: a task of %d columns", c)
	}
	r := wireReader{b: data[17:]}
	for len(r.b) > 0 && r.err == nil {
		parts = append(parts, r.floats())
	}
	return seq, op, c, parts, r.end()
}

func (r productResult) marshal() []byte {
	b := binary.LittleEndian.AppendUint64(nil, r.seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.index))
	b = binary.LittleEndian.AppendUint16(b, uint16(min(len(r.err), math.MaxUint16)))
	b = append(b, r.err[:min(len(r.err), math.MaxUint16)]...)
	return putFloats(b, r.data)
}

func (r *productResult) unmarshal(data []byte) error {
	if len(data) < 18 {
		return errShortMessage
	}
	r.seq, r.index = binary.LittleEndian.Uint64(data), int(binary.LittleEndian.Uint64(data[8:]))
	n := int(binary.LittleEndian.Uint16(data[16:]))
	if len(data) < 18+n {
		return errShortMessage
	}
	r.err = string(data[18 : 18+n])
	w := wireReader{b: data[18+n:]}
	r.data = w.floats()
	return w.end()
}

// LocalProductsConfig configures LocalProducts.
type LocalProductsConfig struct {
	// Products configures the products server (its Conn is set by LocalProducts; Run "": a fresh name).
	Products ProductsConfig
	// URL, Security, Embedded, Identities and Spawn are as LocalConfig's: an external NATS server ("": an
	// embedded one on loopback), what the connections present, the run's identities and how the workers start
	// (nil: goroutines in this process).
	URL        string
	Security   Security
	Embedded   EmbeddedConfig
	Identities *Identities
	Spawn      Spawner
}

// LocalProducts starts a products run on one machine: the embedded NATS server (unless URL is set), the
// Products.Workers products workers (Spawn, with WorkerArgs.Products) and the products server, once every worker
// has joined. stop closes the run: it tells the workers to leave, waits for them (killing those still there
// after a grace period) and returns the first worker's error.
func LocalProducts(c LocalProductsConfig) (p *Products, stop func() error, err error) {
	pc := c.Products
	if pc.Run == "" {
		pc.Run = nuid.Next()
	}
	if err := CheckRunName(pc.Run); err != nil {
		return nil, nil, err
	}
	r, err := startLocal(pc.Run, pc.Workers, c.URL, c.Security, c.Embedded, c.Identities, "gpzoo-products-server")
	if err != nil {
		return nil, nil, err
	}
	spawn := c.Spawn
	if spawn == nil {
		spawn = InProcess(nil)
	}
	procs, err := r.spawnAll(spawn, true, nil)
	if err != nil {
		r.close()
		return nil, nil, err
	}
	pc.Conn = r.nc
	if p, err = ServeProducts(pc); err != nil {
		_ = stopAll(procs, 0)
		r.close()
		return nil, nil, err
	}
	return p, func() error {
		p.Close()
		err := stopAll(procs, 10*time.Second) // told "done", the workers leave on their own
		r.close()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrProductWorker, err)
		}
		return nil
	}, nil
}
