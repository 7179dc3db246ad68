package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
)

// Issue 33's test across hosts on one machine: the parameter server (`gpzoo cluster serve`, its embedded NATS
// server listening on its namespace's veth address, beyond loopback, so with TLS and client authentication) in
// one network namespace, a lossy proxy (20 ms per chunk and direction, 1 % of connections cut, and one cut of
// every connection mid-run) in a second, and two workers (`gpzoo cluster work`) in a third and a fourth, each
// reaching the server only through the proxy (TLS runs end to end through it). An ADVGP entry trains through
// latency and cuts with per-worker NKey identities; an SVGP entry, with a token, through the SIGKILL of a worker
// (dropped, restarted, rejoined) and of the server (restarted with --resume from its checkpoint). Clients
// without credentials, without TLS or with another run's identity are refused by the NATS server; a worker's
// identity cannot reach another run's subjects; garbage pushed to the run's gradient subject is refused and
// counted. The embedded server refuses to listen beyond loopback without TLS and credentials.
const (
	netnsLatency = 20 * time.Millisecond
	netnsCuts    = 0.01
	netnsPort    = "4222"
)

// netnsResult is the part of `gpzoo run`'s JSON result the test reads (package zoo imports cluster, so its
// Result type cannot be imported here): the cluster run's numbers are under "cluster", an ADVGP entry's under
// "advgp".
type netnsResult struct {
	Iters    int           `json:"iters"`
	TestRMSE *float64      `json:"test_rmse"`
	ADVGP    *netnsCounter `json:"advgp"`
	Cluster  *netnsCounter `json:"cluster"`
}

type netnsCounter struct {
	Workers  int   `json:"workers"`
	Updates  int   `json:"updates"`
	Stale    int   `json:"stale"`
	Invalid  *int  `json:"invalid"`
	Dropped  int   `json:"dropped"`
	Rejoins  int   `json:"rejoins"`
	PerShard []int `json:"gradients_per_shard"`
}

// stats returns the cluster run's numbers.
func (r *netnsResult) stats() *netnsCounter {
	if r.Cluster != nil {
		return r.Cluster
	}
	return r.ADVGP
}

// netnsJob is what a run trains: the entry and its flags on the server, and the data flag of its workers.
type netnsJob struct {
	serve []string
	data  string
}

// netnsCluster is the lab of TestNetnsCluster: namespaces, addresses, the proxy and the command lines.
type netnsCluster struct {
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
	pki       netnsPKI
	proxyNS   string
}

func TestNetnsCluster(t *testing.T) {
	lab := newNetLab(t)
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := &netnsCluster{lab: lab, ctx: ctx, bin: buildGpzoo(t), data: datatest.Fake(t, "protein")}
	t.Logf("built gpzoo in %.1fs", time.Since(t0).Seconds())

	c.srvNS = lab.addNS("srv")
	proxyNS := lab.addNS("proxy")
	c.proxyNS = proxyNS
	c.workerNS = [2]string{lab.addNS("wb"), lab.addNS("wc")}
	srvAddr, _ := lab.link(c.srvNS, proxyNS)
	ips := []string{srvAddr}
	for i, ns := range c.workerNS {
		p, _ := lab.link(proxyNS, ns)
		c.workerURL[i] = "nats://" + net.JoinHostPort(p, netnsPort)
		ips = append(ips, p)
	}
	c.pki = newNetnsPKI(t, ips...)
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

	t.Run("listen-refused", c.testListenRefused)
	t.Run("latency-and-cuts", c.testLatencyAndCuts)
	t.Run("kills", c.testKills)
	t.Run("products", c.testProducts)
	t.Logf("proxy: %d connections, %d cut, %d upstream dials refused; whole test %.1fs", c.proxy.accepted.Load(),
		c.proxy.cut.Load(), c.proxy.dialFailed.Load(), time.Since(t0).Seconds())
}

// netnsAuth is how a run's clients authenticate: per-worker NKey identities the server issues into a folder
// (--identities), or the shared token (--token-file).
type netnsAuth struct{ identities string }

// serve starts `gpzoo cluster serve` for run in the server namespace, with TLS (the test CA's certificate) and
// auth, and waits until it listens.
func (c *netnsCluster) serve(t *testing.T, run string, job netnsJob, iters int, dir string, auth netnsAuth, extra ...string) *nsProc {
	args := append(append([]string{"cluster", "serve"}, job.serve...), "--run", run, "--listen", c.listen,
		"--tls-cert", c.pki.Cert, "--tls-key", c.pki.Key, "--tls-ca", c.pki.CA,
		"--workers", "2", "--tau", "4", "--iters", strconv.Itoa(iters), "--data", job.data,
		"--out", filepath.Join(dir, "result.json"), "--save", filepath.Join(dir, "model.gpz"),
		"--checkpoint", filepath.Join(dir, "ckpt"), "--checkpoint-every", "10", "--eval-every", "5")
	if auth.identities != "" {
		args = append(args, "--identities", auth.identities)
	} else {
		args = append(args, "--token-file", c.tokenFile)
	}
	p := c.lab.start(c.ctx, c.srvNS, "server "+run, []string{"GOMAXPROCS=1", EnvToken + "="}, c.bin, append(args, extra...)...)
	// Workers start once the server listens: `gpzoo cluster work` gives up when its first connection fails.
	if !p.await(time.Minute, func(s string) bool { return strings.Contains(s, "server ready") }) {
		t.Fatalf("the server did not start\n%s", p.output(20))
	}
	return p
}

// work starts `gpzoo cluster work` for shard i/2 of run in worker namespace i, through the proxy.
func (c *netnsCluster) work(run string, job netnsJob, i int, auth netnsAuth) *nsProc {
	args := []string{"cluster", "work", "--url", c.workerURL[i], "--run", run, "--shard", fmt.Sprintf("%d/2", i),
		"--tls-ca", c.pki.CA, "--data", job.data, "--quiet=false"}
	if auth.identities != "" {
		args = append(args, "--nkey", c.workerSeed(auth, run, i))
	} else {
		args = append(args, "--token-file", c.tokenFile)
	}
	return c.lab.start(c.ctx, c.workerNS[i], fmt.Sprintf("worker %d of %s", i, run), []string{"GOMAXPROCS=1", EnvToken + "="}, c.bin, args...)
}

// workerSeed is the NKey seed file serve --identities wrote for worker i of run.
func (c *netnsCluster) workerSeed(auth netnsAuth, run string, i int) string {
	return filepath.Join(auth.identities, fmt.Sprintf("%s-worker-%d.nk", run, i))
}

// The embedded server refuses to listen on the namespace's veth address (beyond loopback) without TLS, with
// or without credentials, and without credentials with TLS only when it cannot make a token; it exits non-zero
// saying why, and nothing listens.
func (c *netnsCluster) testListenRefused(t *testing.T) {
	addr := strings.Replace(c.listen, ":"+netnsPort, ":4223", 1)
	idDir := filepath.Join(t.TempDir(), "ids")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"nothing", nil},
		{"a token only", []string{"--token-file", c.tokenFile}},
		{"identities only", []string{"--identities", idDir}},
	} {
		args := append([]string{"cluster", "serve", "protein/advgp", "--run", "refused", "--listen", addr, "--workers", "2",
			"--iters", "5", "--data", c.data, "--quiet"}, tc.args...)
		p := c.lab.start(c.ctx, c.srvNS, "server without TLS, "+tc.name, []string{EnvToken + "="}, c.bin, args...)
		err := p.wait(time.Minute)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("serve --listen %s with %s: %v, want a non-zero exit\n%s", addr, tc.name, err, p.output(5))
			continue
		}
		if got := p.output(5); !strings.Contains(got, "needs TLS and client authentication") || !strings.Contains(got, "--tls-cert") {
			t.Errorf("serve --listen %s with %s: the message does not say TLS is needed:\n%s", addr, tc.name, got)
		} else {
			p.mu.Lock()
			t.Logf("with %s: %s", tc.name, strings.Join(p.lines, " | "))
			p.mu.Unlock()
		}
	}
	if left, _ := os.ReadDir(idDir); len(left) > 0 {
		t.Errorf("the refused server left identity files in %s: %d", idDir, len(left))
	}
	if conn, err := (nsDialer{lab: c.lab, ns: c.proxyNS}).Dial("tcp", addr); err == nil {
		conn.Close()
		t.Errorf("something listens on %s after the refusals", addr)
	}
}

// finish waits for the server and the workers to end successfully and returns the run's JSON result, checked
// for a complete run: every update done, the model file written and loadable, counters consistent.
func (c *netnsCluster) finish(t *testing.T, dir string, iters int, srv *nsProc, workers ...*nsProc) *netnsResult {
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
	a := r.stats()
	if a == nil || a.Updates != iters || r.Iters != iters || a.Workers != 2 || len(a.PerShard) != 2 || a.Invalid == nil {
		t.Fatalf("result: iters %d, cluster %+v; want %d updates of 2 workers, invalid counted", r.Iters, a, iters)
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

var serverTimeoutRe = regexp.MustCompile(`no new version, joining again`)

var refusedRe = regexp.MustCompile(`msg="[a-z]* ?gradient refused`)

// Latency on every chunk, 1 % of connections cut at random and every connection cut once mid-run, each worker
// with its own NKey identity; meanwhile clients without credentials, with a wrong token, with another run's
// identity, not trusting the server's CA or talking in clear are refused by the NATS server; a worker's identity
// cannot publish or subscribe beyond its run (nor read the other workers' gradients); and that identity pushing
// garbage to the run's gradient subject has every message refused and counted (the server logs each).
func (c *netnsCluster) testLatencyAndCuts(t *testing.T) {
	const iters = 150
	run, dir := "netns-cuts", t.TempDir()
	auth := netnsAuth{identities: filepath.Join(dir, "identities")}
	t0 := time.Now()
	// An ADVGP entry (the proximal step on q(w)) on generated protein-format data: the workers load their split.
	job := netnsJob{serve: []string{"protein/advgp", "--inducing", "8", "--batch", "40"}, data: c.data}
	srv := c.serve(t, run, job, iters, dir, auth)
	w0, w1 := c.work(run, job, 0, auth), c.work(run, job, 1, auth)
	if !srv.await(time.Minute, func(s string) bool { return strings.Contains(s, "training started") }) {
		t.Fatalf("training did not start\n%s\n%s\n%s", srv.output(20), w0.output(10), w1.output(10))
	}
	t.Logf("started after %.1fs", time.Since(t0).Seconds())

	// Refused clients, through the proxy from a worker's namespace.
	dialer := nats.SetCustomDialer(nsDialer{lab: c.lab, ns: c.workerNS[0]})
	secure := nats.Secure(c.pki.tlsConfig(t))
	other, err := IssueIdentities("netns-other", 1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := nats.NkeyOptionFromSeed(other.Workers[0].SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	ownKey, err := nats.NkeyOptionFromSeed(c.workerSeed(auth, run, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []nats.Option
		want string
	}{
		{"no credentials", []nats.Option{secure}, "authorization violation"},
		{"a wrong token", []nats.Option{secure, nats.Token("not-" + c.token)}, "authorization violation"},
		{"another run's identity", []nats.Option{secure, otherKey}, "authorization violation"},
		{"a worker's identity without the CA", []nats.Option{ownKey}, "certificate"},
	} {
		nc, err := nats.Connect(c.workerURL[0], append(tc.opts, dialer, nats.MaxReconnects(0), nats.Timeout(5*time.Second))...)
		if err == nil {
			nc.Close()
			t.Errorf("a client with %s was let in", tc.name)
		} else if !strings.Contains(strings.ToLower(err.Error()), tc.want) {
			t.Errorf("a client with %s: %v, want %q", tc.name, err, tc.want)
		}
	}
	c.plaintextRefused(t, run)

	// A worker's identity (a compromised worker) is confined to its run, and pushes garbage: undecodable bytes,
	// a gradient of the wrong size, one of the right size with a NaN. Each is refused and counted.
	violations := make(chan error, 16)
	nc, err := nats.Connect(c.workerURL[0], dialer, secure, ownKey, nats.MaxReconnects(-1),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subj, elsewhere := subjectsOf(run), subjectsOf("netns-other")
	if err := nc.Publish(elsewhere.grad, []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{elsewhere.params, subj.grad, "gpzoo.>"} {
		if _, err := nc.SubscribeSync(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"publish to \"" + elsewhere.grad, "subscription to \"" + elsewhere.params, "subscription to \"" + subj.grad, "subscription to \"gpzoo.>"} {
		select {
		case err := <-violations:
			if !strings.Contains(strings.ToLower(err.Error()), "permissions violation for "+want) {
				t.Errorf("a worker's identity beyond its run: %v, want a permissions violation for %s", err, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("a worker's identity beyond its run: no permissions violation for %s", want)
		}
	}
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
	select {
	case err := <-violations:
		t.Errorf("pushing to the run's gradient subject with a worker's identity: %v", err)
	default:
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
	r := c.finish(t, dir, iters, srv, w0, w1)
	if got := srv.count(refusedRe); got != len(garbage) || *r.stats().Invalid != len(garbage) {
		t.Errorf("the server refused %d gradients (result: %d invalid), want the %d garbage ones", got, *r.stats().Invalid, len(garbage))
	}
	// A worker whose gradient or parameters were lost in the cut waits for its ServerTimeout before it joins again.
	waited := w0.count(serverTimeoutRe) + w1.count(serverTimeoutRe)
	t.Logf("%d updates in %.1fs (%.1fs after cutting %d connections; %d worker waits for the server timeout); gradients per shard %v, stale %d, invalid %d, dropped %d, rejoins %d",
		r.stats().Updates, time.Since(t0).Seconds(), time.Since(tc).Seconds(), cut, waited, r.stats().PerShard, r.stats().Stale, *r.stats().Invalid, r.stats().Dropped, r.stats().Rejoins)
}

var (
	droppedRe = regexp.MustCompile(`msg="[a-z]* ?worker dropped.*shard=1`)
	resumedRe = regexp.MustCompile(`msg="[a-z]* ?server resumed.*version=(\d+)`)
)

// SIGKILL of a worker (dropped after the heartbeat timeout, restarted, rejoins) and of the server (restarted
// with --resume: it continues from its last checkpoint, and the workers, still running, join it again).
func (c *netnsCluster) testKills(t *testing.T) {
	const iters = 200
	run, dir := "netns-kills", t.TempDir()
	t0 := time.Now()
	// An SVGP entry (Adam on every Param, as single-process training) on the embedded Boston data.
	job := netnsJob{serve: []string{"boston-bb/svgp", "--inducing", "10"}, data: ""}
	srv := c.serve(t, run, job, iters, dir, netnsAuth{})
	w0, w1 := c.work(run, job, 0, netnsAuth{}), c.work(run, job, 1, netnsAuth{})
	if !srv.await(time.Minute, atUpdate(30)) {
		t.Fatalf("no update 30\n%s\n%s\n%s", srv.output(20), w0.output(10), w1.output(10))
	}
	w1.kill()
	if !srv.await(30*time.Second, droppedRe.MatchString) {
		t.Fatalf("the killed worker was not dropped\n%s", srv.output(20))
	}
	t.Logf("worker 1 killed and dropped after %.1fs", time.Since(t0).Seconds())
	w1 = c.work(run, job, 1, netnsAuth{})

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
	srv = c.serve(t, run, job, iters, dir, netnsAuth{}, "--resume")
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
	r := c.finish(t, dir, iters, srv, w0, w1)
	if r.stats().Dropped < 1 || r.stats().Rejoins < 1 {
		t.Errorf("dropped %d, rejoins %d: want the killed worker's drop and rejoin counted", r.stats().Dropped, r.stats().Rejoins)
	}
	t.Logf("%d updates in %.1fs (resumed from %d); gradients per shard %v, stale %d, dropped %d, rejoins %d",
		r.stats().Updates, time.Since(t0).Seconds(), from, r.stats().PerShard, r.stats().Stale, r.stats().Dropped, r.stats().Rejoins)
}

// plaintextRefused talks NATS in clear to the server (through the proxy): it reads the server's INFO, sends
// CONNECT and a gradient without TLS, and expects the connection closed without an +OK or a PONG.
func (c *netnsCluster) plaintextRefused(t *testing.T, run string) {
	conn, err := (nsDialer{lab: c.lab, ns: c.workerNS[0]}).Dial("tcp", strings.TrimPrefix(c.workerURL[0], "nats://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	rd := bufio.NewReader(conn)
	info, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(info, "INFO ") || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("the server's greeting %q (%v): want INFO with tls_required", info, err)
	}
	fmt.Fprintf(conn, "CONNECT {\"verbose\":true,\"pedantic\":false,\"auth_token\":%q}\r\nPUB %s 3\r\nabc\r\nPING\r\n", c.token, subjectsOf(run).grad)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Error("a client talking in clear: the connection stayed open")
			}
			return // closed: refused
		}
		if strings.HasPrefix(line, "+OK") || strings.HasPrefix(line, "PONG") {
			t.Fatalf("a client talking in clear was answered %q", line)
		}
	}
}

// The exact GP's kernel products across hosts: gpzoo cluster serve --csv --model gpr prints the products
// workers' command; workers in the other namespaces, each with its own NKey identity, reach the server through
// the lossy proxy (latency; every connection cut once while the products run: a task or an answer lost in the
// cut is sent again) and the fit completes, its model file predicting. A second run, one of whose workers is SIGKILLed once the products have
// begun, ends with the typed error naming that worker within the heartbeat timeout, and its other worker leaves.
// A third, served with --rejoin-wait, survives that SIGKILL: the worker's command, started again after the
// heartbeat timeout, joins and takes over its rows, and the fit completes.
func (c *netnsCluster) testProducts(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "cg.csv")
	rng := rand.New(rand.NewPCG(5, 5))
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for range 1200 { // 1080 training rows: 3 row blocks for 2 workers
		x0, x1 := 4*rng.Float64()-2, 4*rng.Float64()-2
		fmt.Fprintf(&b, "%g,%g,%g\n", x0, x1, math.Sin(2*x0)+0.3*x1+0.1*rng.NormFloat64())
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"cut", "kill", "rejoin"} {
		run, iters, extra := "netns-cg", "20", []string(nil)
		switch mode {
		case "kill":
			run, iters = "netns-cg-kill", "200"
		case "rejoin":
			run, iters, extra = "netns-cg-rejoin", "30", []string{"--rejoin-wait", "1m"}
		}
		rdir := filepath.Join(dir, run)
		if err := os.Mkdir(rdir, 0o755); err != nil {
			t.Fatal(err)
		}
		auth := netnsAuth{identities: filepath.Join(rdir, "identities")}
		t0 := time.Now()
		args := append([]string{"cluster", "serve", "--csv", csv, "--target", "y", "--model", "gpr", "--run", run, "--listen", c.listen,
			"--tls-cert", c.pki.Cert, "--tls-key", c.pki.Key, "--tls-ca", c.pki.CA, "--identities", auth.identities,
			"--workers", "2", "--iters", iters, "--subset", "200", "--out", filepath.Join(rdir, "result.json"),
			"--save", filepath.Join(rdir, "model.gpz")}, extra...)
		srv := c.lab.start(c.ctx, c.srvNS, "products server "+run, []string{"GOMAXPROCS=1", EnvToken + "="}, c.bin, args...)
		// The workers' command goes to standard output; their identities exist once the server starts.
		for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
			if _, err := os.Stat(c.workerSeed(auth, run, 1)); err == nil {
				break
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("%s: no identities after a minute (%v)\n%s", run, srv.wait(time.Second), srv.output(20))
			}
		}
		worker := func(i int, name string) *nsProc {
			return c.lab.start(c.ctx, c.workerNS[i], fmt.Sprintf("products %s %d of %s", name, i, run), []string{"GOMAXPROCS=1", EnvToken + "="},
				c.bin, "cluster", "work", "--url", c.workerURL[i], "--run", run, "--shard", fmt.Sprintf("%d/2", i), "--products",
				"--tls-ca", c.pki.CA, "--nkey", c.workerSeed(auth, run, i))
		}
		var ws []*nsProc
		for i := range 2 {
			ws = append(ws, worker(i, "worker"))
		}
		if !srv.await(time.Minute, func(s string) bool { return strings.Contains(s, "L-BFGS done") }) {
			t.Fatalf("%s: no subset start\n%s", run, srv.output(20))
		}
		time.Sleep(time.Second) // the products have begun
		cut := 0
		switch mode {
		case "cut":
			cut = c.proxy.cutAll() // every connection at once, with whatever is in flight
		case "rejoin":
			ws[1].kill()
			time.Sleep(6 * time.Second) // past the heartbeat timeout: without --rejoin-wait the run would end
			ws[1] = worker(1, "worker started again")
		}
		if mode != "kill" {
			if err := srv.wait(2 * time.Minute); err != nil {
				t.Fatalf("%s: %v\n%s\n%s\n%s", run, err, srv.output(30), ws[0].output(10), ws[1].output(10))
			}
			srv.mu.Lock()
			printed := srv.stdout.String()
			srv.mu.Unlock()
			if !strings.Contains(printed, "--products") {
				t.Errorf("%s: the server printed no products workers' command:\n%s", run, printed)
			}
			for _, w := range ws {
				if err := w.wait(30 * time.Second); err != nil {
					t.Errorf("%v\n%s", err, w.output(10))
				}
			}
			raw, err := os.ReadFile(filepath.Join(rdir, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				TestRMSE *float64 `json:"test_rmse"`
				Exact    *struct {
					Products string `json:"products"`
					Resent   int    `json:"products_resent"`
					Rejoined int    `json:"products_rejoined"`
				} `json:"exact"`
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			if r.TestRMSE == nil || !(*r.TestRMSE < 1) || r.Exact == nil || !strings.Contains(r.Exact.Products, "2 workers") {
				t.Fatalf("%s: test RMSE %v, exact %+v: want a fit whose products 2 workers computed", run, r.TestRMSE, r.Exact)
			}
			if rejoined := r.Exact.Rejoined; (mode == "rejoin") != (rejoined > 0) {
				t.Errorf("%s: %d workers rejoined", run, rejoined)
			}
			f, err := modelfile.LoadFile(filepath.Join(rdir, "model.gpz"), gp.BuildOptions{})
			if err != nil {
				t.Fatalf("the model file: %v", err)
			}
			if p, err := f.Predict(mat.NewDense(2, 2, []float64{0, 0, 1, -1}), modelfile.PredictOptions{}); err != nil || math.IsNaN(p.Mean.At(1, 0)) {
				t.Errorf("the saved model predicts %v, %v", p, err)
			}
			t.Logf("%s: %s steps through the proxy in %.1fs, %d connections cut mid-run, %d tasks sent again, %d workers rejoined; test RMSE %.4f", run, iters,
				time.Since(t0).Seconds(), cut, r.Exact.Resent, r.Exact.Rejoined, *r.TestRMSE)
			continue
		}
		ws[1].kill()
		killed := time.Now()
		err := srv.wait(time.Minute)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(srv.output(5), "worker 1 has been silent") {
			t.Fatalf("%s: the server after worker 1's SIGKILL: %v, want a failure naming worker 1\n%s", run, err, srv.output(10))
		}
		if d := time.Since(killed); d > 30*time.Second {
			t.Errorf("%s: the server took %v to give up on worker 1", run, d)
		}
		if err := ws[0].wait(30 * time.Second); err != nil {
			t.Errorf("%s: worker 0 after the run failed: %v\n%s", run, err, ws[0].output(10))
		}
		t.Logf("%s: worker 1 killed; the server gave up after %.1fs", run, time.Since(killed).Seconds())
	}
}
