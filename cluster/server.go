package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"github.com/nats-io/nats.go"
)

// Defaults of ServerConfig.
const (
	DefaultHeartbeatEvery   = 500 * time.Millisecond
	DefaultHeartbeatTimeout = 5 * time.Second
	DefaultStartTimeout     = 2 * time.Minute
)

// ErrInterrupted is returned (wrapped) by Serve when Stop was closed before the last update.
var ErrInterrupted = errors.New("cluster: training interrupted")

// ServerConfig configures Serve. Zero values mean the documented defaults.
type ServerConfig struct {
	// Conn is the NATS connection (required).
	Conn *nats.Conn
	// Job is what workers are sent; Serve fills in Model and Names from the model. Job.Workers (k) and
	// Job.NumData are required; Job.Run names the subjects.
	Job Job
	// Iters is the number of updates (required): exactly Iters without Converge, at most Iters with it.
	Iters int
	// Converge, if set, stops when the objective has converged (train.ConvergeConfig, as single-process
	// training stops), capped by Iters.
	Converge *train.ConvergeConfig
	// Optimizer and Hooks update the Params from the assembled gradient of every update exactly as train.Train
	// updates them from a step's (train.Updater; nil Optimizer: Adam with its defaults): the natural-gradient
	// hook of ORTHNAT and of a deep GP's last layer, ADVGP's proximal step (ADVGPUpdate), Adam for the rest.
	Optimizer train.Optimizer
	Hooks     []train.Hook
	// DataGradOnly gives the Optimizer and Hooks the gradient of the data term alone: the global term (the KL)
	// is then applied by them in closed form, as ADVGP's proximal step applies h (eqs. 18–20). Its value still
	// counts in the recorded objective.
	DataGradOnly bool
	// ReuseGradients makes every update aggregate every live worker's newest gradient, used again until its
	// worker replaces it (ADVGP's Algorithm 1: every shard is in every update, some through a stale gradient).
	// Without it an update aggregates the gradients that arrived since the last update, scaled to the data
	// set by their shards' rows: with τ > 0 the faster workers' shards weigh more in an update, within the
	// bound τ on every worker's lag. With τ = 0 the two are the same.
	ReuseGradients bool
	// HeartbeatTimeout drops a worker silent for longer (default DefaultHeartbeatTimeout); StallTimeout drops a
	// worker without a gradient for longer (0: never); StartTimeout is how long the server waits for all k
	// workers before it starts with those that joined (default DefaultStartTimeout).
	HeartbeatTimeout, StallTimeout, StartTimeout time.Duration
	// CheckpointDir, if set, receives a checkpoint of the parameters and optimiser state every CheckpointEvery
	// updates (0: only at the end and on Stop); Resume starts from it.
	CheckpointDir   string
	CheckpointEvery int
	Resume          bool
	// EvalEvery > 0 calls Eval after every EvalEvery updates and after the last (the model holds the current
	// parameters). Evaluation time counts as training time: the workers keep computing while the server
	// evaluates, so leaving it out would credit their work to no time at all.
	EvalEvery int
	Eval      func(version int) (map[string]float64, error)
	// OnUpdate, if set, is called after every update (tests use it to inject faults).
	OnUpdate func(version int)
	// Logger receives structured progress (nil: none); Progress a redrawn progress line.
	Logger   *slog.Logger
	Progress io.Writer
	// Stop, when closed, makes Serve checkpoint (if configured), tell the workers to stop and return ErrInterrupted.
	Stop <-chan struct{}
	// lose, when set (tests), drops the publication of a version when it returns true: a message NATS may lose
	// in transit.
	lose func(version int) bool
}

// Result summarises a Serve run.
type Result struct {
	Updates int
	// Seconds is the training wall time from the start (all workers joined, or StartTimeout) to the last update,
	// evaluations included; a resumed run continues the interrupted run's clock.
	Seconds float64
	// Points is the number of training points the workers' accepted and refused gradients covered;
	// PointsPerSecond = Points/Seconds (this run's part when resumed).
	Points          int64
	PointsPerSecond float64
	// Stale and Unknown count refused gradients (older than t − τ; from a worker without a slot); Joins and
	// Rejoins the joins (a rejoin takes over a shard that was served before).
	Stale, Unknown, Joins, Rejoins int
	// Invalid counts refused messages that could not be used: undecodable, of the wrong size, non-finite.
	Invalid int
	// Recovered counts the workers told to join again because their gradient or a version was lost in transit.
	Recovered int
	// Losses are the objective per training point at every update, ((n/P)·Σ_k G_k + global)/n from the
	// gradients it used (G_k: shard k's data term over its P_k points, P = Σ_k P_k); Times the training seconds
	// at every update; Staleness the staleness of the gradients every update used (t − their versions,
	// averaged over their shards' rows; 0 when synchronous).
	Losses, Times, Staleness []float64
	Evals                    []train.Eval
	// StopReason says why training ended (train's reasons: iterations, converged, iteration cap, interrupted).
	StopReason train.StopReason
	// PerShard counts each shard's accepted gradients; DroppedShards lists the shard of every drop, in order.
	PerShard      []int
	DroppedShards []int
}

// Gradients returns the number of gradients accepted.
func (r *Result) Gradients() int {
	n := 0
	for _, g := range r.PerShard {
		n += g
	}
	return n
}

// Dropped returns the number of times a worker was dropped.
func (r *Result) Dropped() int { return len(r.DroppedShards) }

// server is Serve's state.
type server struct {
	cfg     ServerConfig
	model   gp.RowSum
	subj    subjects
	params  []*graph.Param
	offsets []int
	size    int
	global  *graph.Program // the model's GlobalLoss
	// globalAt is the version of the parameters global last ran at (−1: none): the server runs it as soon as
	// it publishes a version, while the workers compute their gradients at it.
	globalAt int
	up       *train.Updater
	conv     *train.Convergence
	grads    train.GradMap // views of sum, the assembled gradient
	sum      []float64
	book     *book
	res      *Result
	started  bool
	done     bool      // the convergence criterion is met
	start    time.Time // training clock start (shifted by evaluations and by a resumed run's clock)
	first    time.Time // the first join
	shift    float64   // the interrupted run's training seconds, when resumed
	points0  int64
}

// Serve runs the parameter server until Iters updates are done (or Converge stops it): it answers joins,
// collects the workers' data-term gradients, applies the bounded-delay rule, assembles the objective's
// gradient (the shards' sum scaled to the data set, plus the global term's) and applies the Optimizer and Hooks
// to it, publishes each new version, drops dead or stalled workers and checkpoints. The model holds the final
// parameters when it returns. model must describe itself (gp.Describer): the workers rebuild it from its Spec.
func Serve(model gp.RowSum, cfg ServerConfig) (*Result, error) {
	s, err := newServer(model, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.run()
}

func newServer(model gp.RowSum, cfg ServerConfig) (*server, error) {
	if model == nil || cfg.Conn == nil {
		return nil, errors.New("cluster: Serve needs a model and a NATS connection")
	}
	if cfg.Iters <= 0 || cfg.Job.Workers < 1 || cfg.Job.NumData < cfg.Job.Workers || cfg.Job.Tau < 0 {
		return nil, fmt.Errorf("cluster: Serve: Iters %d, Workers %d, NumData %d, Tau %d: want Iters > 0, 1 ≤ k ≤ n, τ ≥ 0",
			cfg.Iters, cfg.Job.Workers, cfg.Job.NumData, cfg.Job.Tau)
	}
	if n := model.DataSize(); n != cfg.Job.NumData {
		return nil, fmt.Errorf("cluster: Serve: the model is scaled to %d training rows, the job has %d", n, cfg.Job.NumData)
	}
	if cfg.Job.Run == "" {
		cfg.Job.Run = "default"
	}
	if err := CheckRunName(cfg.Job.Run); err != nil {
		return nil, err
	}
	d, ok := model.(gp.Describer)
	if !ok {
		return nil, fmt.Errorf("cluster: Serve: a %T does not describe itself (gp.Describer): workers could not rebuild it", model)
	}
	spec, err := gp.Describe(d) // with the Params' priors, which the global term below adds
	if err != nil {
		return nil, err
	}
	if cfg.Job.Model, err = json.Marshal(spec); err != nil {
		return nil, err
	}
	if ns, ok := model.(noiseSeeded); ok {
		cfg.Job.NoiseSeed = ns.NoiseSeed()
	}
	if cfg.Job.HeartbeatEvery <= 0 {
		cfg.Job.HeartbeatEvery = DefaultHeartbeatEvery
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	s := &server{cfg: cfg, model: model, subj: subjectsOf(cfg.Job.Run), params: model.Params(), book: newBook(cfg.Job.Tau, cfg.ReuseGradients),
		res: &Result{PerShard: make([]int, cfg.Job.Workers)}, grads: train.GradMap{}, globalAt: -1}
	if cfg.Converge != nil {
		if s.conv, err = train.NewConvergence(*cfg.Converge, cfg.Job.NumData); err != nil {
			return nil, err
		}
	}
	s.cfg.Job.Names = nil
	var trained []*graph.Param
	for _, p := range s.params {
		s.cfg.Job.Names = append(s.cfg.Job.Names, p.Name())
		s.offsets = append(s.offsets, s.size)
		s.size += p.Size()
		if p.Trainable() {
			trained = append(trained, p)
		}
	}
	s.sum = make([]float64, s.size)
	for i, p := range s.params {
		if p.Trainable() {
			s.grads[p] = s.sum[s.offsets[i] : s.offsets[i]+p.Size()]
		}
	}
	if cfg.DataGradOnly && hasPriors(s.params) {
		return nil, errors.New("cluster: Serve: priors on the Params need the global term's gradient, which DataGradOnly (ADVGP's proximal step) leaves out")
	}
	if err := graph.CheckPriorSupport(s.params); err != nil {
		return nil, fmt.Errorf("cluster: Serve: %w", err)
	}
	g := graph.New(graph.Options{})
	// The global term carries −log p(θ) of the Params with priors (a MAP fit), as train.Loss does.
	if s.global, err = g.Compile(gp.WithLogPrior(model.GlobalLoss(g), s.params), nil); err != nil {
		return nil, fmt.Errorf("cluster: building the model's global term: %w", err)
	}
	s.up = train.NewUpdater(trained, cfg.Optimizer, cfg.Hooks)
	if max := cfg.Conn.MaxPayload(); int64(8*s.size+1024) > max {
		s.close()
		return nil, fmt.Errorf("cluster: parameters take %d bytes, more than the NATS server's max_payload %d: raise it (the embedded server allows %d)", 8*s.size, max, EmbeddedMaxPayload)
	}
	return s, nil
}

func (s *server) close() { s.global.Close() }

func (s *server) logf(msg string, args ...any) {
	if s.cfg.Logger != nil {
		s.cfg.Logger.Info(msg, args...)
	}
}

func (s *server) run() (*Result, error) {
	if s.cfg.Resume {
		if err := s.restore(); err != nil {
			return nil, err
		}
	}
	nc := s.cfg.Conn
	joins, grads, beats := make(chan *nats.Msg, 256), make(chan *nats.Msg, 4096), make(chan *nats.Msg, 4096)
	for subj, ch := range map[string]chan *nats.Msg{s.subj.join: joins, s.subj.grad: grads, s.subj.hb: beats} {
		sub, err := nc.ChanSubscribe(subj, ch)
		if err != nil {
			return nil, fmt.Errorf("cluster: subscribing to %s: %w", subj, err)
		}
		_ = sub.SetPendingLimits(-1, -1)
		defer sub.Unsubscribe()
	}
	if err := nc.Flush(); err != nil {
		return nil, fmt.Errorf("cluster: NATS: %w", err)
	}
	period := s.cfg.HeartbeatTimeout
	if st := s.cfg.StallTimeout; st > 0 && st < period {
		period = st
	}
	tick := time.NewTicker(max(period/4, 5*time.Millisecond))
	defer tick.Stop()
	s.logf("cluster server ready", "run", s.cfg.Job.Run, "workers", s.cfg.Job.Workers, "tau", s.cfg.Job.Tau, "version", s.book.version)
	for s.book.version < s.cfg.Iters && !s.done {
		var err error
		select {
		case <-s.cfg.Stop:
			s.finishClock()
			if s.cfg.CheckpointDir != "" {
				if err := s.save(); err != nil {
					return s.res, err
				}
			}
			s.publishDone(beats)
			s.res.StopReason = train.StopInterrupted
			return s.res, fmt.Errorf("%w after %d updates", ErrInterrupted, s.book.version)
		case m := <-joins:
			err = s.onJoin(m)
		case m := <-grads:
			err = s.onGrad(m)
		case m := <-beats:
			s.onBeat(m)
		case now := <-tick.C:
			shards, ids := s.book.expire(now, s.cfg.HeartbeatTimeout, s.cfg.StallTimeout)
			for i, k := range shards {
				s.res.DroppedShards = append(s.res.DroppedShards, k)
				s.logf("cluster worker dropped", "shard", k, "id", ids[i], "version", s.book.version)
				s.rejoin(ids[i])
			}
			startNow := !s.started && len(s.book.slots) > 0 && now.Sub(s.first) > s.cfg.StartTimeout
			if startNow {
				s.startClock()
			}
			// Only a drop or the start can unblock an update here: the tick must not re-apply the newest
			// gradients by itself (each arriving gradient triggers at most one update).
			if len(shards) > 0 || startNow {
				err = s.maybeUpdate()
			}
		}
		if err != nil {
			return s.res, err
		}
	}
	s.finishClock()
	switch {
	case s.done:
		s.res.StopReason = train.StopConverged
	case s.conv != nil:
		s.res.StopReason = train.StopIterationCap
	default:
		s.res.StopReason = train.StopIterations
	}
	if s.cfg.CheckpointDir != "" {
		if err := s.save(); err != nil {
			return s.res, err
		}
	}
	s.publishDone(beats)
	return s.res, nil
}

func (s *server) startClock() {
	s.started = true
	s.shift = 0
	if n := len(s.res.Times); n > 0 {
		s.shift = s.res.Times[n-1]
	}
	s.start = time.Now().Add(-time.Duration(s.shift * float64(time.Second)))
	s.points0 = s.res.Points
	s.logf("cluster training started", "workers", len(s.book.slots))
}

func (s *server) clock() float64 { return time.Since(s.start).Seconds() }

func (s *server) finishClock() {
	s.copyCounters()
	if !s.started {
		return
	}
	if n := len(s.res.Times); n > 0 {
		s.res.Seconds = s.res.Times[n-1]
	}
	if run := s.res.Seconds - s.shift; run > 0 {
		s.res.PointsPerSecond = float64(s.res.Points-s.points0) / run
	}
}

func (s *server) copyCounters() {
	b := s.book
	s.res.Updates = b.version
	s.res.Stale, s.res.Unknown, s.res.Joins, s.res.Rejoins = b.stale, b.unknown, b.joins, b.rejoins
}

func (s *server) onJoin(m *nats.Msg) error {
	// A reply goes to the asker's inbox only: a reply subject among gpzoo's (another run's, or this run's
	// parameters) would let a client make the server publish there.
	if m.Reply == "" || (strings.HasPrefix(m.Reply, SubjectPrefix) && !strings.HasPrefix(m.Reply, InboxPrefix(s.cfg.Job.Run)+".")) {
		s.res.Invalid++
		s.logf("cluster join refused: reply subject outside the asker's inbox", "reply", m.Reply)
		return nil
	}
	var req joinRequest
	reply := joinReply{Job: s.cfg.Job}
	if err := decode(m.Data, &req); err != nil {
		reply.Err = err.Error()
	} else if req.Of != s.cfg.Job.Workers || req.Shard < 0 || req.Shard >= req.Of {
		reply.Err = fmt.Sprintf("shard %d/%d does not fit this run's %d workers", req.Shard, req.Of, s.cfg.Job.Workers)
	} else if req.Register {
		now := time.Now()
		if s.first.IsZero() {
			s.first = now
		}
		if s.book.join(req.Shard, req.ID, s.shardRows(req.Shard, req.Of), now) {
			s.logf("cluster worker rejoined", "shard", req.Shard, "id", req.ID, "version", s.book.version)
		}
		reply.Params = s.paramsMsg()
		if !s.started && len(s.book.slots) == s.cfg.Job.Workers {
			s.startClock()
		}
	}
	data, err := encode(reply)
	if err != nil {
		return err
	}
	if err := m.Respond(data); err != nil {
		s.logf("cluster join reply failed", "err", err)
	}
	return nil
}

// shardRows is the number of training rows of shard i of k: a row file's shards are ranges of its rows
// less the test rows among them.
func (s *server) shardRows(i, k int) int {
	if f := s.cfg.Job.Data.File; f != nil {
		if n, err := f.ShardTrainRows(i, k); err == nil {
			return n
		}
	}
	lo, hi, _ := ShardRange(s.cfg.Job.NumData, i, k)
	return hi - lo
}

func (s *server) onGrad(m *nats.Msg) error {
	var g gradMsg
	if err := decode(m.Data, &g); err != nil || len(g.Grad) != s.size || !finite(g.Grad) || !finite([]float64{g.Loss}) {
		s.res.Invalid++
		s.logf("cluster gradient refused: undecodable, of the wrong size or not finite", "shard", g.Shard, "values", len(g.Grad), "want", s.size)
		return nil
	}
	s.res.Points += int64(g.Points)
	ok, known := s.book.accept(&g, time.Now())
	if !known {
		s.rejoin(g.ID)
		return nil
	}
	if !ok {
		return nil
	}
	s.res.PerShard[g.Shard]++
	return s.maybeUpdate()
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func (s *server) rejoin(id string) {
	if data, err := encode(control{Rejoin: true}); err == nil {
		_ = s.cfg.Conn.Publish(s.subj.ctl+id, data)
	}
}

func (s *server) paramsMsg() paramsMsg {
	raw := make([]float64, 0, s.size)
	for _, p := range s.params {
		raw = append(raw, p.Raw()...)
	}
	return paramsMsg{Version: s.book.version, Raw: raw}
}

// onBeat records a heartbeat: a worker without a slot is told to join; one that has waited too long for a
// gradient or a version lost in transit (book.lost) too, which brings it the current version.
func (s *server) onBeat(m *nats.Msg) {
	var hb heartbeat
	if decode(m.Data, &hb) != nil || hb.Bye {
		return
	}
	now := time.Now()
	if !s.book.beat(hb.Shard, hb.ID, now) {
		s.rejoin(hb.ID)
		return
	}
	if s.book.lost(hb.Shard, hb.ID, hb.Waiting, hb.Pushed, hb.Waited, now, max(2*s.cfg.Job.HeartbeatEvery, 500*time.Millisecond)) {
		s.res.Recovered++
		s.logf("cluster worker waits for a message lost in transit: told to join again", "shard", hb.Shard, "pushed", hb.Pushed, "version", s.book.version)
		s.rejoin(hb.ID)
	}
}

// publishDone tells the workers training is over: it publishes "done" until every worker holding a slot has
// said goodbye (a heartbeat with Bye), republishing it every 200 ms for up to 2 s, so that a worker whose
// connection was cut at the end still hears it once reconnected.
func (s *server) publishDone(beats <-chan *nats.Msg) {
	data, err := encode(paramsMsg{Version: s.book.version, Done: true})
	if err != nil {
		return
	}
	left := map[string]bool{}
	for _, sl := range s.book.slots {
		left[sl.id] = true
	}
	deadline := time.After(2 * time.Second)
	for {
		_ = s.cfg.Conn.Publish(s.subj.params, data)
		_ = s.cfg.Conn.Flush()
		again := time.After(200 * time.Millisecond)
		for len(left) > 0 {
			select {
			case m := <-beats:
				var hb heartbeat
				if decode(m.Data, &hb) == nil && hb.Bye {
					delete(left, hb.ID)
				}
				continue
			case <-again:
			case <-deadline:
				return
			}
			break
		}
		if len(left) == 0 {
			return
		}
	}
}

// maybeUpdate applies update t if the bounded-delay rule allows it.
func (s *server) maybeUpdate() error {
	if !s.started || s.book.version >= s.cfg.Iters || s.done || !s.book.ready() {
		return nil
	}
	if err := s.update(); err != nil {
		return err
	}
	t := s.book.version
	busy := time.Now()
	// Heartbeats and gradients wait while the server checkpoints, evaluates or runs OnUpdate: that pause must
	// not count against the workers.
	defer func() {
		if time.Since(busy) > 20*time.Millisecond {
			s.book.touch(time.Now())
		}
	}()
	if s.cfg.CheckpointDir != "" && s.cfg.CheckpointEvery > 0 && t%s.cfg.CheckpointEvery == 0 {
		if err := s.save(); err != nil {
			return err
		}
	}
	if s.cfg.EvalEvery > 0 && s.cfg.Eval != nil && (t%s.cfg.EvalEvery == 0 || t == s.cfg.Iters || s.done) {
		met, err := s.cfg.Eval(t)
		if err != nil {
			return fmt.Errorf("cluster: evaluation at update %d: %w", t, err)
		}
		s.res.Evals = append(s.res.Evals, train.Eval{Step: t, Seconds: s.res.Times[len(s.res.Times)-1], Metrics: met})
		s.logf("cluster evaluation", "update", t, "metrics", met)
	}
	if s.cfg.OnUpdate != nil {
		s.cfg.OnUpdate(t)
	}
	return nil
}

// globalTerm runs the model's global term (its loss and gradients) at the current parameters, version t,
// unless it already ran at t.
func (s *server) globalTerm(t int) error {
	if s.globalAt == t {
		return nil
	}
	if err := s.global.Run(); err != nil {
		return fmt.Errorf("cluster: version %d: the global term: %w", t, err)
	}
	s.globalAt = t
	return nil
}

// update performs update t (Algorithm 1, server side): the objective's gradient from the newest gradients'
// sum, (n/P)·Σ_k ∇G_k plus the global term's, the Hooks' and the Optimizer's step on it as train.Train's step;
// then it publishes version t+1.
func (s *server) update() error {
	t := s.book.version
	loss, points, lag := s.book.aggregate(s.sum)
	n := float64(s.cfg.Job.NumData)
	scale := n / float64(points)
	if err := s.globalTerm(t); err != nil {
		return err
	}
	for i := range s.sum {
		s.sum[i] *= scale
	}
	if !s.cfg.DataGradOnly {
		for p, g := range s.grads {
			if gg := s.global.Grad(p); gg != nil {
				for j, v := range gg {
					g[j] += v
				}
			}
		}
	}
	total := scale*loss + s.global.Loss()
	if err := s.up.Apply(&train.Step{Index: t, Loss: total, Grads: s.grads}); err != nil {
		return fmt.Errorf("cluster: update %d: %w", t, err)
	}
	for _, p := range s.params {
		for _, v := range p.Raw() {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("cluster: update %d made %s non-finite (lower the step sizes)", t, p.Name())
			}
		}
	}
	s.book.version++
	s.done = s.conv != nil && s.conv.Add(total)
	s.res.Losses = append(s.res.Losses, total/n)
	s.res.Times = append(s.res.Times, s.clock())
	s.res.Staleness = append(s.res.Staleness, lag)
	s.copyCounters()
	data, err := encode(s.paramsMsg())
	if err != nil {
		return err
	}
	// A version lost in transit leaves its workers waiting: their heartbeats say so, and book.lost brings
	// them the current one.
	if s.cfg.lose == nil || !s.cfg.lose(s.book.version) {
		if err := publish(s.cfg.Conn, s.subj.params, data); err != nil {
			return fmt.Errorf("cluster: publishing version %d: %w", s.book.version, err)
		}
	}
	if !s.done && s.book.version < s.cfg.Iters {
		// The client's flusher sends the version at once; the workers compute at it while this runs.
		if err := s.globalTerm(s.book.version); err != nil {
			return err
		}
	}
	if w := s.cfg.Progress; w != nil && (s.book.version%10 == 0 || s.book.version == s.cfg.Iters) {
		fmt.Fprintf(w, "\rupdate %d/%d  objective/n %.5g  %.1fs  workers %d  stale %d  dropped %d ", s.book.version, s.cfg.Iters,
			s.res.Losses[len(s.res.Losses)-1], s.res.Times[len(s.res.Times)-1], len(s.book.slots), s.book.stale, s.res.Dropped())
	}
	return nil
}

// hasPriors reports whether any of ps has a prior.
func hasPriors(ps []*graph.Param) bool {
	for _, p := range ps {
		if p.Prior() != nil {
			return true
		}
	}
	return false
}
