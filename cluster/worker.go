package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"gonum.org/v1/gonum/mat"
)

// Defaults of WorkerConfig.
const (
	DefaultJoinTimeout   = 2 * time.Minute
	DefaultServerTimeout = 20 * time.Second
)

// ErrJoin is wrapped by the errors of a worker that could not join its run.
var ErrJoin = errors.New("cluster: cannot join the run")

// WorkerConfig configures Work. Zero values mean the documented defaults.
type WorkerConfig struct {
	// Conn is the NATS connection (required); Run the run's name ("" = "default").
	Conn *nats.Conn
	Run  string
	// Shard is this worker's shard i of Of (k).
	Shard, Of int
	// ID identifies the worker (default: a fresh NUID, so a restarted worker is a new one).
	ID string
	// Loader resolves the job's data (not needed for synthetic data or a row file).
	Loader Loader
	// DataFile, if set, is this host's copy of the job's row file (Job.Data.File): it replaces the path the
	// server named.
	DataFile string
	// Delay is an artificial pause before every gradient (the slow workers of the delay study).
	Delay time.Duration
	// JoinTimeout bounds how long the worker keeps asking to join (the server may start later; default
	// DefaultJoinTimeout). ServerTimeout is how long it waits for a new version before it asks again
	// (a restarted server; default DefaultServerTimeout).
	JoinTimeout, ServerTimeout time.Duration
	// Logger receives structured progress (nil: none).
	Logger *slog.Logger
	// Stop, when closed, ends the worker after its current gradient.
	Stop <-chan struct{}
	// lose, when set (tests), drops the gradient computed at a version when it returns true: a message NATS
	// may lose in transit.
	lose func(version int) bool
}

// WorkerResult summarises a worker's run.
type WorkerResult struct {
	Gradients int     // gradients pushed
	Points    int64   // training points they covered
	Joins     int     // joins, the first included
	Seconds   float64 // computing time (waits excluded)
}

// worker is Work's state.
type worker struct {
	cfg    WorkerConfig
	subj   subjects
	params chan *nats.Msg
	ctl    chan *nats.Msg
	res    WorkerResult
	job    *Job
	model  gp.RowSum
	ps     []*graph.Param
	prog   *graph.Program
	x, y   *mat.Dense // the shard, standardised
	xb, yb *mat.Dense // the program's batch inputs
	smp    *datasets.Sampler
	idx    []int
	rows   []int        // the shard's rows' global indices
	waitAt atomic.Int64 // the version of the gradient pushed while waiting for a newer one (−1: computing)
	waitT0 atomic.Int64 // when the wait began (Unix nanoseconds)
	// in are the program's gp.RowsInput and gp.StepInput, filled with the batch's global rows (grows) and the
	// version, so that a shard draws the Monte-Carlo noise a single process would.
	in    train.BatchInputs
	grows []int
}

// Work runs one worker until the server says it is done (nil error), Stop is closed or an error occurs:
// join, then repeat — compute the shard's gradient at the newest parameters, push it, wait for a newer
// version (Algorithm 1, worker side). Heartbeats go out every Job.HeartbeatEvery meanwhile. When the server
// drops it, or no new version arrives for ServerTimeout, it joins again.
func Work(cfg WorkerConfig) (*WorkerResult, error) {
	if cfg.Conn == nil {
		return nil, errors.New("cluster: Work needs a NATS connection")
	}
	if cfg.Of < 1 || cfg.Shard < 0 || cfg.Shard >= cfg.Of {
		return nil, fmt.Errorf("cluster: shard %d/%d: want 0 ≤ i < k", cfg.Shard, cfg.Of)
	}
	if cfg.Run == "" {
		cfg.Run = "default"
	}
	if err := CheckRunName(cfg.Run); err != nil {
		return nil, err
	}
	if cfg.ID == "" {
		cfg.ID = nuid.Next()
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = DefaultJoinTimeout
	}
	if cfg.ServerTimeout <= 0 {
		cfg.ServerTimeout = DefaultServerTimeout
	}
	w := &worker{cfg: cfg, subj: subjectsOf(cfg.Run), params: make(chan *nats.Msg, 64), ctl: make(chan *nats.Msg, 8)}
	for subj, ch := range map[string]chan *nats.Msg{w.subj.params: w.params, w.subj.ctl + cfg.ID: w.ctl} {
		sub, err := cfg.Conn.ChanSubscribe(subj, ch)
		if err != nil {
			return nil, fmt.Errorf("cluster: subscribing to %s: %w", subj, err)
		}
		_ = sub.SetPendingLimits(-1, -1)
		defer sub.Unsubscribe()
	}
	cur, err := w.join()
	if err != nil || w.job == nil { // an error, or Stop before the first join
		return &w.res, err
	}
	defer func() {
		if w.prog != nil {
			w.prog.Close()
		}
	}()
	stopHB := make(chan struct{})
	defer close(stopHB)
	w.waitAt.Store(-1)
	go w.heartbeats(stopHB)
	for {
		if cur.Done {
			w.bye()
			return &w.res, nil
		}
		if w.cfg.Delay > 0 && sleep(w.cfg.Delay, w.cfg.Stop) {
			return &w.res, nil
		}
		if err := w.push(cur); err != nil {
			return &w.res, err
		}
		w.waitT0.Store(time.Now().UnixNano())
		w.waitAt.Store(int64(cur.Version))
		next, err := w.await(cur.Version)
		w.waitAt.Store(-1)
		if err != nil || next == nil {
			return &w.res, err
		}
		cur = next
	}
}

func sleep(d time.Duration, stop <-chan struct{}) (stopped bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-stop:
		return true
	}
}

func (w *worker) logf(msg string, args ...any) {
	if w.cfg.Logger != nil {
		w.cfg.Logger.Info(msg, append([]any{"shard", w.cfg.Shard}, args...)...)
	}
}

// join asks the server for the job (first time only: then it builds the model and the program and loads the
// shard) and for a slot and the current parameters, until it answers or JoinTimeout passes.
func (w *worker) join() (*paramsMsg, error) {
	if w.doneSeen() { // told to join again just as the server finished
		return &paramsMsg{Done: true}, nil
	}
	deadline := time.Now().Add(w.cfg.JoinTimeout)
	for w.job == nil {
		rep, done, err := w.ask(false, deadline)
		if err != nil || done {
			return &paramsMsg{Done: true}, err
		}
		if err := w.setup(&rep.Job); err != nil {
			return nil, err
		}
	}
	rep, done, err := w.ask(true, deadline)
	if err != nil || done {
		return &paramsMsg{Done: true}, err
	}
	w.res.Joins++
	w.logf("cluster worker joined", "version", rep.Params.Version)
	return &rep.Params, nil
}

// ask sends one join request, retrying until deadline; done reports Stop or the server's "done".
func (w *worker) ask(register bool, deadline time.Time) (rep *joinReply, done bool, err error) {
	req, err := encode(joinRequest{ID: w.cfg.ID, Shard: w.cfg.Shard, Of: w.cfg.Of, Register: register})
	if err != nil {
		return nil, false, err
	}
	for {
		m, err := w.cfg.Conn.Request(w.subj.join, req, 2*time.Second)
		if err == nil {
			rep = &joinReply{}
			if err := decode(m.Data, rep); err != nil {
				return nil, false, fmt.Errorf("%w: %v", ErrJoin, err)
			}
			if rep.Err != "" {
				return nil, false, fmt.Errorf("%w: the server says: %s", ErrJoin, rep.Err)
			}
			return rep, false, nil
		}
		if w.doneSeen() {
			return nil, true, nil
		}
		if time.Now().After(deadline) {
			return nil, false, fmt.Errorf("%w %q within %v: %v", ErrJoin, w.cfg.Run, w.cfg.JoinTimeout, err)
		}
		select {
		case <-w.cfg.Stop:
			return nil, true, nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// doneSeen reports whether the server's "done" is among the queued parameter messages (it drains them: a
// caller about to join again wants the parameters of the join reply).
func (w *worker) doneSeen() bool {
	for {
		select {
		case m := <-w.params:
			var p paramsMsg
			if decode(m.Data, &p) == nil && p.Done {
				return true
			}
		default:
			return false
		}
	}
}

// setup builds the model from the job, loads the shard and compiles the shard's program.
func (w *worker) setup(job *Job) error {
	var spec gp.Spec
	if err := json.Unmarshal(job.Model, &spec); err != nil {
		return fmt.Errorf("cluster: the job's model: %w", err)
	}
	built, err := gp.BuildSpec(spec, gp.BuildOptions{})
	if err != nil {
		return fmt.Errorf("cluster: the job's model: %w", err)
	}
	model, ok := built.(gp.RowSum)
	if !ok {
		return fmt.Errorf("cluster: the job's model, a %T, is not a sum over rows (gp.RowSum)", built)
	}
	if ns, ok := model.(noiseSeeded); ok {
		ns.SetNoiseSeed(job.NoiseSeed)
	}
	w.model = model
	w.ps = model.Params()
	names := make([]string, len(w.ps))
	for i, p := range w.ps {
		names[i] = p.Name()
	}
	if !slices.Equal(names, job.Names) {
		return fmt.Errorf("cluster: the rebuilt model's parameters %v differ from the server's %v", names, job.Names)
	}
	if f := job.Data.File; f != nil && w.cfg.DataFile != "" {
		local := *f
		local.Source.Path = w.cfg.DataFile
		job.Data.File = &local
	}
	x, y, rows, err := loadShard(job, w.cfg.Loader, w.cfg.Shard, w.cfg.Of)
	if err != nil {
		return err
	}
	w.x, w.y, w.rows = x, y, rows
	n, d := x.Dims()
	batch := job.Batch
	if batch <= 0 || batch > n {
		batch = n
	}
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(w.model.DataLoss(g.Input("x", batch, d), g.Input("y", batch, p)), nil)
	if err != nil {
		return fmt.Errorf("cluster: building the shard's program: %w", err)
	}
	w.prog = prog
	w.xb, w.yb = mat.NewDense(batch, d, prog.InputData("x")), mat.NewDense(batch, p, prog.InputData("y"))
	if w.in, err = train.BatchInputsOf(prog, batch); err != nil {
		return err
	}
	w.grows = make([]int, batch)
	w.idx = make([]int, batch)
	if batch < n {
		rng := rand.New(rand.NewPCG(job.Seed, uint64(w.cfg.Shard)+0xad76))
		if w.smp, err = datasets.NewSampler(n, batch, rng); err != nil {
			return err
		}
	} else { // the whole shard, in its order, every step: the gradient depends on the parameters alone
		for i := range w.idx {
			w.idx[i] = i
		}
		w.xb.Copy(x)
		w.yb.Copy(y)
	}
	w.job = job
	return nil
}

// push computes the shard's gradient at p and publishes it.
func (w *worker) push(p *paramsMsg) error {
	t0 := time.Now()
	off := 0
	for _, q := range w.ps {
		if off+q.Size() > len(p.Raw) {
			return fmt.Errorf("cluster: version %d carries %d values, the model needs more", p.Version, len(p.Raw))
		}
		if err := q.SetRaw(p.Raw[off : off+q.Size()]); err != nil {
			return err
		}
		off += q.Size()
	}
	if w.smp != nil {
		w.idx = w.smp.Next(w.idx)
		datasets.GatherRows(w.xb, w.x, w.idx)
		datasets.GatherRows(w.yb, w.y, w.idx)
	}
	for i, r := range w.idx {
		w.grows[i] = w.rows[r]
	}
	w.in.Set(p.Version, w.grows)
	if err := w.prog.Run(); err != nil {
		return fmt.Errorf("cluster: shard %d at version %d: %w", w.cfg.Shard, p.Version, err)
	}
	// G_k, the shard's data term, estimated from the batch: (N_k/B)·Σ_b ℓ_b (exactly Σ_b ℓ_b for the whole shard).
	n, _ := w.x.Dims()
	scale := float64(n) / float64(len(w.idx))
	grad := make([]float64, 0, off)
	for _, q := range w.ps {
		if g := w.prog.Grad(q); g != nil {
			grad = append(grad, g...)
		} else {
			grad = append(grad, make([]float64, q.Size())...)
		}
	}
	loss := w.prog.Loss()
	if scale != 1 {
		for i := range grad {
			grad[i] *= scale
		}
		loss *= scale
	}
	data, err := encode(gradMsg{ID: w.cfg.ID, Shard: w.cfg.Shard, Version: p.Version, Loss: loss,
		Points: len(w.idx), ShardN: n, Grad: grad})
	if err != nil {
		return err
	}
	// A gradient lost in transit (or in a write that failed while the connection reconnects) leaves the
	// worker waiting at p.Version: its heartbeats say so, and the server tells it to join again (book.lost).
	if w.cfg.lose == nil || !w.cfg.lose(p.Version) {
		if err := publish(w.cfg.Conn, w.subj.grad, data); err != nil {
			return fmt.Errorf("cluster: pushing a gradient: %w", err)
		}
	}
	w.res.Gradients++
	w.res.Points += int64(len(w.idx))
	w.res.Seconds += time.Since(t0).Seconds()
	return nil
}

// await blocks until a version newer than v arrives (returning the newest queued one), the server says
// done, or it must join again; nil without error means Stop.
func (w *worker) await(v int) (*paramsMsg, error) {
	timeout := time.NewTimer(w.cfg.ServerTimeout)
	defer timeout.Stop()
	var best *paramsMsg
	for {
		select {
		case <-w.cfg.Stop:
			return nil, nil
		case m := <-w.params:
			var p paramsMsg
			if err := decode(m.Data, &p); err != nil {
				return nil, err
			}
			if p.Done {
				return &p, nil
			}
			if p.Version > v && (best == nil || p.Version > best.Version) {
				best = &p
			}
			if best != nil && len(w.params) == 0 {
				return best, nil
			}
		case <-w.ctl:
			w.logf("cluster worker told to join again")
			return w.join()
		case <-timeout.C:
			w.logf("cluster worker: no new version, joining again", "after", w.cfg.ServerTimeout)
			return w.join()
		}
	}
}

// heartbeats publishes a heartbeat every Job.HeartbeatEvery until stop is closed.
func (w *worker) heartbeats(stop <-chan struct{}) {
	every(w.job.HeartbeatEvery, stop, func() {
		hb := heartbeat{ID: w.cfg.ID, Shard: w.cfg.Shard}
		if v := w.waitAt.Load(); v >= 0 {
			hb.Waiting, hb.Pushed, hb.Waited = true, int(v), time.Since(time.Unix(0, w.waitT0.Load()))
		}
		if data, err := encode(hb); err == nil {
			_ = w.cfg.Conn.Publish(w.subj.hb, data)
		}
	})
}

// bye tells the server the worker saw its "done" (a heartbeat with Bye), so that it stops republishing it.
func (w *worker) bye() {
	if data, err := encode(heartbeat{ID: w.cfg.ID, Shard: w.cfg.Shard, Bye: true}); err == nil {
		_ = w.cfg.Conn.Publish(w.subj.hb, data)
		_ = w.cfg.Conn.FlushTimeout(time.Second)
	}
}
