package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/internal/datatest"
	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
)

// Issue 33's test across hosts on one machine: the parameter server (`gpzoo advgp serve`, its embedded NATS
// server listening on its namespace's veth address, beyond loopback) in one network namespace, a lossy proxy
// (20 ms per chunk and direction, 1 % of connections cut, and one cut of every connection mid-run) in a
// second, and two workers (`gpzoo advgp work`) in a third and a fourth, each reaching the server only through
// the proxy. Training completes through latency and cuts, through the SIGKILL of a worker (dropped, restarted,
// rejoined) and of the server (restarted with --resume from its checkpoint); clients without the token, and one
// pushing garbage to the run's gradient subject, are refused and counted.
const (
	netnsLatency = 20 * time.Millisecond
	netnsCuts    = 0.01
	netnsPort    = "4222"
)

// netnsResult is the part of `gpzoo run`'s JSON result the test reads (package zoo imports cluster, so its
// Result type cannot be imported here).
type netnsResult struct {
	Iters    int      `json:"iters"`
	TestRMSE *float64 `json:"test_rmse"`
	ADVGP    *struct {
		Workers  int   `json:"workers"`
		Updates  int   `json:"updates"`
		Stale    int   `json:"stale"`
		Dropped  int   `json:"dropped"`
		Rejoins  int   `json:"rejoins"`
		PerShard []int `json:"gradients_per_shard"`
	} `json:"advgp"`
	ModelFile string `json:"model_file"`
}

// netnsCluster is the lab of TestNetnsCluster: namespaces, addresses, the proxy and the command lines.
type netnsCluster struct {
	t         *testing.T
	lab       *netLab
	ctx       context.Context
	bin, data string
	tokenFile string
	token     string
	srvNS     string
	workerNS  [2]string
	listen    string    // the server's HOST:PORT, in srvNS
	workerURL [2]string // the proxy's address as each worker namespace reaches it
	proxy     *lossyProxy
}

func TestNetnsCluster(t *testing.T) {
	lab := newNetLab(t)
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := &netnsCluster{t: t, lab: lab, ctx: ctx, bin: buildGpzoo(t), data: datatest.Fake(t, "protein")}
	t.Logf("built gpzoo in %.1fs", time.Since(t0).Seconds())

	c.srvNS = lab.addNS("srv")
	proxyNS := lab.addNS("proxy")
	c.workerNS = [2]string{lab.addNS("wb"), lab.addNS("wc")}
	srvAddr, _ := lab.link(c.srvNS, proxyNS)
	for i, ns := range c.workerNS {
		p, _ := lab.link(proxyNS, ns)
		c.workerURL[i] = "nats://" + net.JoinHostPort(p, netnsPort)
	}
	c.listen = net.JoinHostPort(srvAddr, netnsPort)
	c.token = fmt.Sprintf("netns-%d-%x", os.Getpid(), rand.Uint64())
	c.tokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(c.tokenFile, []byte(c.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	upstream := nsDialer{lab: lab, ns: proxyNS}
	c.proxy = newLossyProxy(lab.listen(proxyNS, ":"+netnsPort), func() (net.Conn, error) { return upstream.Dial("tcp", c.listen) },
		netnsLatency, netnsCuts, 3*time.Second, 33)
	t.Cleanup(func() { c.proxy.Close() })
	t.Logf("lab ready in %.1fs: server %s in %s, proxy in %s, workers in %s and %s", time.Since(t0).Seconds(), c.listen, c.srvNS,
		proxyNS, c.workerNS[0], c.workerNS[1])

	// The workers cannot reach the server but through the proxy.
	if conn, err := (nsDialer{lab: lab, ns: c.workerNS[0]}).Dial("tcp", c.listen); err == nil {
		conn.Close()
		t.Fatalf("a worker namespace reaches the server at %s directly", c.listen)
	}

	t.Run("latency-and-cuts", c.testLatencyAndCuts)
	t.Run("kills", c.testKills)
	t.Logf("proxy: %d connections, %d cut, %d upstream dials refused; whole test %.1fs", c.proxy.accepted.Load(),
		c.proxy.cut.Load(), c.proxy.dialFailed.Load(), time.Since(t0).Seconds())
}

// serve starts `gpzoo advgp serve` for run in the server namespace.
func (c *netnsCluster) serve(run string, iters int, dir string, extra ...string) *nsProc {
	args := append([]string{"advgp", "serve", "protein/advgp", "--run", run, "--listen", c.listen, "--token-file", c.tokenFile,
		"--workers", "2", "--tau", "4", "--iters", strconv.Itoa(iters), "--inducing", "8", "--batch", "40", "--data", c.data,
		"--out", filepath.Join(dir, "result.json"), "--save", filepath.Join(dir, "model.gpz"),
		"--checkpoint", filepath.Join(dir, "ckpt"), "--checkpoint-every", "10", "--eval-every", "5"}, extra...)
	p := c.lab.start(c.ctx, c.srvNS, "server "+run, []string{"GOMAXPROCS=1"}, c.bin, args...)
	// Workers start once the server listens: `gpzoo advgp work` gives up when its first connection fails.
	if !p.await(time.Minute, func(s string) bool { return strings.Contains(s, "advgp server ready") }) {
		c.t.Fatalf("the server did not start\n%s", p.output(20))
	}
	return p
}

// work starts `gpzoo advgp work` for shard i/2 of run in worker namespace i, through the proxy.
func (c *netnsCluster) work(run string, i int) *nsProc {
	return c.lab.start(c.ctx, c.workerNS[i], fmt.Sprintf("worker %d of %s", i, run), []string{"GOMAXPROCS=1"}, c.bin,
		"advgp", "work", "--url", c.workerURL[i], "--run", run, "--shard", fmt.Sprintf("%d/2", i), "--token-file", c.tokenFile,
		"--data", c.data, "--quiet=false")
}

// finish waits for the server and the workers to end successfully and returns the run's JSON result, checked
// for a complete run: every update done, the model file written and loadable, counters consistent.
func (c *netnsCluster) finish(dir string, iters int, srv *nsProc, workers ...*nsProc) *netnsResult {
	t := c.t
	t.Helper()
	if err := srv.wait(2 * time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, srv.output(30))
	}
	for _, w := range workers {
		if err := w.wait(30 * time.Second); err != nil {
			t.Errorf("%v\n%s", err, w.output(20))
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r netnsResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	a := r.ADVGP
	if a == nil || a.Updates != iters || r.Iters != iters || a.Workers != 2 || len(a.PerShard) != 2 {
		t.Fatalf("result: iters %d, advgp %+v; want %d updates of 2 workers", r.Iters, a, iters)
	}
	grads := a.PerShard[0] + a.PerShard[1]
	// Each accepted gradient allows at most one update; a drop (or the start) may allow one more on the
	// gradients already in.
	if a.PerShard[0] == 0 || a.PerShard[1] == 0 || a.Updates > grads+a.Dropped+1 {
		t.Errorf("gradients per shard %v for %d updates (dropped %d)", a.PerShard, a.Updates, a.Dropped)
	}
	if r.TestRMSE == nil || math.IsNaN(*r.TestRMSE) || math.IsInf(*r.TestRMSE, 0) {
		t.Errorf("test RMSE %v", r.TestRMSE)
	}
	f, err := modelfile.LoadFile(filepath.Join(dir, "model.gpz"), gp.BuildOptions{})
	if err != nil {
		t.Fatalf("the model file: %v", err)
	}
	x := mat.NewDense(3, len(f.InputNames()), nil)
	p, err := f.Predict(x, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if m := p.Mean.At(i, 0); math.IsNaN(m) || math.IsInf(m, 0) {
			t.Errorf("the saved model predicts %v at row %d", m, i)
		}
	}
	return &r
}

var refusedRe = regexp.MustCompile(`advgp gradient refused`)

// Latency on every chunk, 1 % of connections cut at random and every connection cut once mid-run; meanwhile
// clients without the token are refused by the NATS server, and one with it pushing garbage to the run's
// gradient subject has every message refused and counted (the server logs each).
func (c *netnsCluster) testLatencyAndCuts(t *testing.T) {
	const iters = 150
	run, dir := "netns-cuts", t.TempDir()
	t0 := time.Now()
	srv := c.serve(run, iters, dir)
	w0, w1 := c.work(run, 0), c.work(run, 1)
	if !srv.await(time.Minute, func(s string) bool { return strings.Contains(s, "advgp training started") }) {
		t.Fatalf("training did not start\n%s\n%s\n%s", srv.output(20), w0.output(10), w1.output(10))
	}
	t.Logf("started after %.1fs", time.Since(t0).Seconds())

	// Clients without the token, or with a wrong one, through the proxy from a worker's namespace.
	dialer := nats.SetCustomDialer(nsDialer{lab: c.lab, ns: c.workerNS[0]})
	for _, tok := range []string{"", "not-" + c.token} {
		opts := []nats.Option{dialer, nats.MaxReconnects(0), nats.Timeout(5 * time.Second)}
		if tok != "" {
			opts = append(opts, nats.Token(tok))
		}
		nc, err := nats.Connect(c.workerURL[0], opts...)
		if err == nil {
			nc.Close()
			t.Errorf("a client with token %q was let in", tok)
		} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("a client with token %q: %v, want an authorization violation", tok, err)
		}
	}

	// A client with the token pushing garbage: undecodable bytes, a gradient of the wrong size, one of the right
	// size with a NaN. Each is refused and counted (the server's log line per refusal).
	nc, err := nats.Connect(c.workerURL[0], dialer, nats.Token(c.token), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subj := subjectsOf(run)
	sub, err := nc.SubscribeSync(subj.params)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for size == 0 {
		m, err := sub.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("no parameters published: %v", err)
		}
		var pm paramsMsg
		if decode(m.Data, &pm) == nil && !pm.Done {
			size = len(pm.Raw)
		}
	}
	_ = sub.Unsubscribe()
	rng := rand.New(rand.NewPCG(33, 1))
	var garbage [][]byte
	for range 3 {
		b := make([]byte, 1+rng.IntN(512))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		garbage = append(garbage, b)
	}
	nan := make([]float64, size)
	nan[rng.IntN(size)] = math.NaN()
	for _, g := range []gradMsg{
		{ID: "intruder", Shard: 0, Points: 40, ShardN: 100, Grad: make([]float64, size+1)},
		{ID: "intruder", Shard: 1, Points: 40, ShardN: 100, Grad: nan},
	} {
		b, err := encode(g)
		if err != nil {
			t.Fatal(err)
		}
		garbage = append(garbage, b)
	}
	for _, b := range garbage {
		if err := nc.Publish(subj.grad, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	refused := 0
	if !srv.await(30*time.Second, func(s string) bool {
		if refusedRe.MatchString(s) {
			refused++
		}
		return refused >= len(garbage)
	}) {
		t.Errorf("%d of %d garbage messages refused in the server's log", refused, len(garbage))
	}

	// Every connection cut at once, a third of the way in.
	if !srv.await(time.Minute, atUpdate(iters/3)) {
		t.Fatalf("no update %d\n%s", iters/3, srv.output(20))
	}
	cut := c.proxy.cutAll()
	tc := time.Now()
	if cut < 2 {
		t.Errorf("cut %d connections, want the workers' 2 at least", cut)
	}
	r := c.finish(dir, iters, srv, w0, w1)
	if got := srv.count(refusedRe); got != len(garbage) {
		t.Errorf("the server refused %d gradients, want the %d garbage ones", got, len(garbage))
	}
	t.Logf("%d updates in %.1fs (%.1fs after cutting %d connections); gradients per shard %v, stale %d, dropped %d, rejoins %d",
		r.ADVGP.Updates, time.Since(t0).Seconds(), time.Since(tc).Seconds(), cut, r.ADVGP.PerShard, r.ADVGP.Stale, r.ADVGP.Dropped, r.ADVGP.Rejoins)
}

var (
	droppedRe = regexp.MustCompile(`advgp worker dropped.*shard=1`)
	resumedRe = regexp.MustCompile(`advgp server resumed.*version=(\d+)`)
)

// SIGKILL of a worker (dropped after the heartbeat timeout, restarted, rejoins) and of the server (restarted
// with --resume: it continues from its last checkpoint, and the workers, still running, join it again).
func (c *netnsCluster) testKills(t *testing.T) {
	const iters = 200
	run, dir := "netns-kills", t.TempDir()
	t0 := time.Now()
	srv := c.serve(run, iters, dir)
	w0, w1 := c.work(run, 0), c.work(run, 1)
	if !srv.await(time.Minute, atUpdate(30)) {
		t.Fatalf("no update 30\n%s\n%s\n%s", srv.output(20), w0.output(10), w1.output(10))
	}
	w1.kill()
	if !srv.await(30*time.Second, droppedRe.MatchString) {
		t.Fatalf("the killed worker was not dropped\n%s", srv.output(20))
	}
	t.Logf("worker 1 killed and dropped after %.1fs", time.Since(t0).Seconds())
	w1 = c.work(run, 1)

	if !srv.await(time.Minute, atUpdate(100)) {
		t.Fatalf("no update 100 after the worker's restart\n%s\n%s", srv.output(20), w1.output(10))
	}
	srv.kill()
	if _, err := os.Stat(filepath.Join(dir, "ckpt", CheckpointFile)); err != nil {
		t.Fatalf("no server checkpoint after update 100: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err == nil {
		t.Fatal("the killed server wrote its result")
	}
	t.Logf("server killed after %.1fs", time.Since(t0).Seconds())
	srv = c.serve(run, iters, dir, "--resume")
	var from int
	if !srv.await(time.Minute, func(s string) bool {
		m := resumedRe.FindStringSubmatch(s)
		if m != nil {
			from, _ = strconv.Atoi(m[1])
		}
		return m != nil
	}) {
		t.Fatalf("the restarted server did not resume\n%s", srv.output(20))
	}
	if from < 90 || from%10 != 0 {
		t.Errorf("resumed from update %d, want the last checkpoint (every 10) at or after update 90", from)
	}
	r := c.finish(dir, iters, srv, w0, w1)
	if r.ADVGP.Dropped < 1 || r.ADVGP.Rejoins < 1 {
		t.Errorf("dropped %d, rejoins %d: want the killed worker's drop and rejoin counted", r.ADVGP.Dropped, r.ADVGP.Rejoins)
	}
	t.Logf("%d updates in %.1fs (resumed from %d); gradients per shard %v, stale %d, dropped %d, rejoins %d",
		r.ADVGP.Updates, time.Since(t0).Seconds(), from, r.ADVGP.PerShard, r.ADVGP.Stale, r.ADVGP.Dropped, r.ADVGP.Rejoins)
}
