package cluster

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
)

// cgStep returns the CG exact GP's loss and gradient (every Param's raw values, in order) on x, y at step 3 with
// CG tolerance tol, its kernel products computed by op (nil: its own blocks, in this process, by row strips when
// strips).
func cgStep(t *testing.T, x, y *mat.Dense, op ops.KernelOperator, k gp.Kernel, tol float64, strips bool) (float64, []float64) {
	t.Helper()
	m, err := cg.NewGPR(cg.Config{Kernel: k, NoiseVariance: 0.05, X: x, Y: y, Operator: op, Solver: ops.CGConfig{Seed: 9, Tol: tol},
		Blocks: cg.BlocksOptions{Strips: strips}})
	if err != nil {
		t.Fatal(err)
	}
	n, d := x.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(m.Loss(g.Input("x", n, d), g.Input("y", n, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(prog.InputData("x"), x.RawMatrix().Data)
	copy(prog.InputData("y"), y.RawMatrix().Data)
	prog.InputData(gp.StepInput)[0] = 3
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	var grad []float64
	for _, p := range m.Params() {
		grad = append(grad, prog.Grad(p)...)
	}
	st := m.Solver().Stats()
	t.Logf("loss %.12g, %d CG iterations, preconditioner rank %d", prog.Loss(), st.Iters, st.PrecondRank)
	return prog.Loss(), grad
}

// One step of the CG exact GP on N = 5000 rows from the same parameters and probes, its kernel products
// partitioned by rows over 2 worker processes (each with its own NKey identity and the run's worker
// permissions), gives the single process's loss and gradient within 1e-9 (relative), at GPyTorch's tolerance 1:
// the single process computing its products by row strips, the workers' summation order. Another order (the
// single process's default, the kernel matrix kept) changes products by rounding, which 20 CG iterations at
// tolerance 1 amplify to about 1e-7 in a gradient (1e-9 at a tolerance of 1e-8): that comparison is held to 1e-5.
func TestProductsMatchOneProcess(t *testing.T) {
	data := Synthetic{N: 5000, D: 4, Noise: 0.1, Seed: 5}
	x, y, err := data.Rows(0, data.N)
	if err != nil {
		t.Fatal(err)
	}
	kern := func() gp.Kernel {
		k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: data.D, Variance: 0.8, Lengthscales: []float64{0.7, 1.1, 1.4, 2}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	wantL, wantG := cgStep(t, x, y, nil, kern(), 0, true)
	keptL, keptG := cgStep(t, x, y, nil, kern(), 0, false)

	const run, k = "products", 2
	ids, err := IssueIdentities(run, k, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := StartEmbedded(EmbeddedConfig{Users: ids.NkeyUsers()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	nc, err := Connect(e.URL, "products-server", Security{NKeyFile: ids.Server.SeedFile, InboxPrefix: InboxPrefix(run)})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	t.Setenv(envProducts, "1")
	spawn := processes(t)
	var procs []Proc
	for i := range k {
		p, err := spawn(WorkerArgs{URL: e.URL, Run: run, Shard: i, Of: k, Security: Security{NKeyFile: ids.Workers[i].SeedFile}})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	defer stopAll(procs, 10*time.Second)
	kr := kern()
	prod, err := ServeProducts(ProductsConfig{Conn: nc, Run: run, Workers: k, Kernel: kr, X: x, HeartbeatEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The workers' heartbeats pass their permissions: after an idle 700 ms each was heard within the last 300 ms;
	// and they may hear the server's.
	time.Sleep(700 * time.Millisecond)
	for i := range k {
		if ago := prod.peers[i].silent(); ago > 300*time.Millisecond {
			t.Errorf("worker %d last heard %v ago", i, ago)
		}
	}
	if !slices.Contains(WorkerPermissions(run).Subscribe.Allow, productSubjectsOf(run).alive) {
		t.Error("workers may not subscribe to the server's heartbeats")
	}
	gotL, gotG := cgStep(t, x, y, prod, kr, 0, false)
	prod.Close()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("worker: %v", err)
		}
	}
	for _, c := range []struct {
		what        string
		gotL, wantL float64
		gotG, wantG []float64
		tol         float64
	}{{"one process by strips", gotL, wantL, gotG, wantG, 1e-9}, {"one process with K kept", gotL, keptL, gotG, keptG, 1e-5}} {
		worst := math.Abs(c.gotL-c.wantL) / math.Abs(c.wantL)
		if worst > c.tol {
			t.Errorf("%s: loss over 2 workers %.15g, one process %.15g (relative %.3g)", c.what, c.gotL, c.wantL, worst)
		}
		for i := range c.wantG {
			e := math.Abs(c.gotG[i]-c.wantG[i]) / math.Max(math.Abs(c.wantG[i]), 1e-300)
			if e > c.tol {
				t.Errorf("%s: gradient %d over 2 workers %.15g, one process %.15g (relative %.3g)", c.what, i, c.gotG[i], c.wantG[i], e)
			}
			worst = max(worst, e)
		}
		t.Logf("%s: 2 workers within %.2g", c.what, worst)
	}
	if _, err := prod.call(opMul, 1, make([]float64, data.N)); !errors.Is(err, ErrProductWorker) {
		t.Errorf("a task after Close: %v", err)
	}
}

// A run's tasks, results and setups survive their encoding, and a malformed task is refused.
func TestProductMessages(t *testing.T) {
	b, err := taskBytes(7, opGrad, 3, [][]float64{{1, 2, 3}, {4, 5, 6}})
	if err != nil {
		t.Fatal(err)
	}
	seq, op, c, parts, err := parseTask(b)
	if err != nil || seq != 7 || op != opGrad || c != 3 || len(parts) != 2 || parts[1][2] != 6 {
		t.Fatalf("task: %d %d %d %v %v", seq, op, c, parts, err)
	}
	if _, _, _, _, err := parseTask(b[:len(b)-3]); err == nil {
		t.Error("a truncated task was accepted")
	}
	r := productResult{seq: 4, index: 1, err: "boom", data: []float64{math.Pi}}
	var back productResult
	if err := back.unmarshal(r.marshal()); err != nil || back.seq != 4 || back.index != 1 || back.err != "boom" || back.data[0] != math.Pi {
		t.Fatalf("result: %+v %v", back, err)
	}
	if err := back.unmarshal(r.marshal()[:10]); err == nil {
		t.Error("a truncated result was accepted")
	}
	for _, busy := range []bool{false, true} {
		if i, bz, ok := parseBeat(beatBytes(3, busy)); !ok || i != 3 || bz != busy {
			t.Errorf("heartbeat (busy %v): %d %v %v", busy, i, bz, ok)
		}
	}
	bad := beatBytes(3, true)
	bad[8] = 7
	for _, m := range [][]byte{nil, beatBytes(1, false)[:8], bad, append(beatBytes(1, false), 0)} {
		if _, _, ok := parseBeat(m); ok {
			t.Errorf("a malformed heartbeat %v was accepted", m)
		}
	}
}

// A products run refuses what it cannot serve, with typed errors: too many workers for the row blocks, a join as
// another worker count, workers that never join, tasks before the hyperparameters (the workers' own error,
// passed on), inputs other than the run's, and a task after Close.
func TestProductsRefusals(t *testing.T) {
	data, x, k, conn := productsLab(t)
	server := conn("server")
	blocks := cg.BlocksOptions{Block: 256} // 3 row blocks
	if _, err := ServeProducts(ProductsConfig{Conn: server, Run: "r", Workers: 4, Kernel: k, X: x, Blocks: blocks}); err == nil || !strings.Contains(err.Error(), "at most 3") {
		t.Errorf("4 workers for 3 blocks: %v", err)
	}
	if _, err := ServeProducts(ProductsConfig{Conn: server, Run: "r.x", Workers: 1, Kernel: k, X: x}); err == nil {
		t.Error("a run name with a dot was accepted")
	}
	// A worker joining as 1 of 3 is refused (ErrJoin); the server, missing its second worker, gives up.
	wrong := make(chan error, 1)
	go func() {
		wrong <- WorkProducts(ProductWorkerConfig{Conn: conn("w-wrong"), Run: "r", Index: 1, Of: 3, JoinTimeout: 5 * time.Second})
	}()
	if _, err := ServeProducts(ProductsConfig{Conn: server, Run: "r", Workers: 2, Kernel: k, X: x, Blocks: blocks, JoinTimeout: 500 * time.Millisecond}); !errors.Is(err, ErrProductWorker) {
		t.Errorf("no worker joined: %v, want ErrProductWorker", err)
	}
	if err := <-wrong; !errors.Is(err, ErrJoin) {
		t.Errorf("a join as worker 1 of 3: %v, want ErrJoin", err)
	}

	done := make([]chan error, 2)
	for i := range done {
		done[i] = make(chan error, 1)
		nc := conn(fmt.Sprintf("w%d", i))
		go func() {
			done[i] <- WorkProducts(ProductWorkerConfig{Conn: nc, Run: "s", Index: i, Of: 2, JoinTimeout: 10 * time.Second})
		}()
	}
	p, err := ServeProducts(ProductsConfig{Conn: server, Run: "s", Workers: 2, Kernel: k, X: x, Blocks: blocks, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, data.N)
	if err := p.Mul(make([]float64, data.N), 1, out); !errors.Is(err, ErrProductWorker) || !strings.Contains(err.Error(), "before the hyperparameters") {
		t.Errorf("a product before Bind: %v", err)
	}
	hyper := make([][]float64, len(k.Params()))
	for i, q := range k.Params() {
		hyper[i] = q.Raw()
	}
	other := mat.DenseCopyOf(x)
	other.Set(5, 1, other.At(5, 1)+1)
	var se *ops.ShapeError
	if err := p.Bind(other.RawMatrix().Data, data.N, data.D, hyper); !errors.As(err, &se) {
		t.Errorf("Bind on other inputs: %v, want a ShapeError", err)
	}
	// Bound, the workers' product is K·v.
	if err := p.Bind(x.RawMatrix().Data, data.N, data.D, hyper); err != nil {
		t.Fatal(err)
	}
	v := make([]float64, data.N)
	for i := range v {
		v[i] = math.Sin(float64(i))
	}
	if err := p.Mul(v, 1, out); err != nil {
		t.Fatal(err)
	}
	local, err := cg.NewBlocks(k, blocks)
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Bind(x.RawMatrix().Data, data.N, data.D, hyper); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, data.N)
	if err := local.Mul(v, 1, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(out[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("row %d: workers' K·v %.15g, one process %.15g", i, out[i], want[i])
		}
	}
	if err := p.Mul(v, 1, out[:10]); !errors.As(err, &se) {
		t.Errorf("a product into a short slice: %v, want a ShapeError", err)
	}
	if err := p.BilinearGrad(v, v[:10], 1, nil); !errors.As(err, &se) {
		t.Errorf("a gradient of mismatched blocks: %v, want a ShapeError", err)
	}
	p.Close()
	for i, d := range done {
		if err := <-d; err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	if err := p.Mul(v, 1, out); !errors.Is(err, ErrProductWorker) {
		t.Errorf("a product after Close: %v", err)
	}
}

// Heartbeats both ways: a worker idle for longer than the heartbeat timeout is still alive (it sends heartbeats);
// a worker whose process or connection is gone fails the task in progress within about the heartbeat timeout,
// naming it (not after the task's 2-minute Timeout), and a worker that no longer hears its server leaves with
// ErrServerGone.
func TestProductsHeartbeats(t *testing.T) {
	data, x, k, conn := productsLab(t)
	server := conn("server")
	done := make([]chan error, 2)
	conns := make([]*nats.Conn, 2)
	for i := range done {
		done[i] = make(chan error, 1)
		conns[i] = conn(fmt.Sprintf("w%d", i))
		go func() {
			done[i] <- WorkProducts(ProductWorkerConfig{Conn: conns[i], Run: "hb", Index: i, Of: 2, JoinTimeout: 10 * time.Second,
				ServerTimeout: time.Second})
		}()
	}
	p, err := ServeProducts(ProductsConfig{Conn: server, Run: "hb", Workers: 2, Kernel: k, X: x, Blocks: cg.BlocksOptions{Block: 256},
		Timeout: 2 * time.Minute, HeartbeatEvery: 50 * time.Millisecond, HeartbeatTimeout: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hyper := make([][]float64, len(k.Params()))
	for i, q := range k.Params() {
		hyper[i] = q.Raw()
	}
	if err := p.Bind(x.RawMatrix().Data, data.N, data.D, hyper); err != nil {
		t.Fatal(err)
	}
	v, out := make([]float64, data.N), make([]float64, data.N)
	time.Sleep(time.Second) // idle for longer than the heartbeat timeout
	if err := p.Mul(v, 1, out); err != nil {
		t.Fatalf("a product after an idle second: %v", err)
	}
	conns[1].Close() // worker 1's connection is gone
	t0 := time.Now()
	err = p.Mul(v, 1, out)
	if !errors.Is(err, ErrProductWorker) || !strings.Contains(err.Error(), "worker 1 has been silent") {
		t.Errorf("a product with worker 1 gone: %v, want ErrProductWorker naming worker 1", err)
	}
	if el := time.Since(t0); el > 10*time.Second {
		t.Errorf("worker 1's loss took %v to notice", el)
	}
	if err := <-done[1]; !errors.Is(err, ErrServerGone) {
		t.Errorf("worker 1 without its connection: %v, want ErrServerGone", err)
	}
	server.Close() // the server is gone without saying goodbye
	select {
	case err := <-done[0]:
		if !errors.Is(err, ErrServerGone) {
			t.Errorf("worker 0 without its server: %v, want ErrServerGone", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("worker 0 still waits for a server gone 20 s ago")
	}
}

// A worker that leaves mid-run and is started again with its index takes over within RejoinWait: it joins,
// binds the hyperparameters bound last, receives the product in progress again, and the products stay the
// single process's.
func TestProductsWorkerRejoins(t *testing.T) {
	data, x, k, conn := productsLab(t)
	server := conn("server")
	work := func(i int, stop <-chan struct{}) chan error {
		done := make(chan error, 1)
		nc := conn(fmt.Sprintf("w%d-%d", i, time.Now().UnixNano()))
		go func() {
			done <- WorkProducts(ProductWorkerConfig{Conn: nc, Run: "rejoin", Index: i, Of: 2, JoinTimeout: 10 * time.Second, Stop: stop})
		}()
		return done
	}
	stop1 := make(chan struct{})
	done := []chan error{work(0, nil), work(1, stop1)}
	blocks := cg.BlocksOptions{Block: 256}
	p, err := ServeProducts(ProductsConfig{Conn: server, Run: "rejoin", Workers: 2, Kernel: k, X: x, Blocks: blocks,
		Timeout: time.Minute, HeartbeatEvery: 50 * time.Millisecond, HeartbeatTimeout: 300 * time.Millisecond, RejoinWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hyper, local := localBlocks(t, k, blocks)
	hyper[0][0] += 0.3 // not the kernel's defaults: the replacement must receive them
	for _, b := range []ops.KernelOperator{p, local} {
		if err := b.Bind(x.RawMatrix().Data, data.N, data.D, hyper); err != nil {
			t.Fatal(err)
		}
	}
	product := func(round int) {
		v := make([]float64, data.N)
		for i := range v {
			v[i] = math.Cos(float64(i * (round + 1)))
		}
		sameProduct(t, p, local, v, round)
	}
	product(0)
	close(stop1) // worker 1 leaves between tasks
	if err := <-done[1]; err != nil {
		t.Fatalf("worker 1 told to stop: %v", err)
	}
	replaced := make(chan chan error, 1)
	go func() {
		time.Sleep(time.Second) // well past the heartbeat timeout: without RejoinWait the product would fail
		replaced <- work(1, nil)
	}()
	t0 := time.Now()
	product(1)
	if el := time.Since(t0); el < time.Second {
		t.Errorf("the product took %v: it cannot have waited for the replacement", el)
	}
	if r := p.Rejoined(); r != 1 {
		t.Errorf("%d rejoins, want 1", r)
	}
	product(2)
	done[1] = <-replaced
	p.Close()
	for i, d := range done {
		if err := <-d; err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
}

// LocalProducts starts the NATS server, the workers and the products server on one machine; its products are the
// single process's, and stop ends the workers cleanly.
func TestLocalProducts(t *testing.T) {
	data := Synthetic{N: 700, D: 3, Noise: 0.1, Seed: 4}
	x, _, err := data.Rows(0, data.N)
	if err != nil {
		t.Fatal(err)
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: data.D})
	if err != nil {
		t.Fatal(err)
	}
	blocks := cg.BlocksOptions{Block: 256}
	p, stop, err := LocalProducts(LocalProductsConfig{Products: ProductsConfig{Workers: 2, Kernel: k, X: x, Blocks: blocks}})
	if err != nil {
		t.Fatal(err)
	}
	hyper, local := localBlocks(t, k, blocks)
	v, got, want := make([]float64, 2*data.N), make([]float64, 2*data.N), make([]float64, 2*data.N)
	for i := range v {
		v[i] = math.Cos(float64(i))
	}
	for _, b := range []ops.KernelOperator{p, local} {
		if err := b.Bind(x.RawMatrix().Data, data.N, data.D, hyper); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Mul(v, 2, got); err != nil {
		t.Fatal(err)
	}
	if err := local.Mul(v, 2, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("entry %d: the workers' K·V %.15g, one process %.15g", i, got[i], want[i])
		}
	}
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := p.Mul(v, 2, got); !errors.Is(err, ErrProductWorker) {
		t.Errorf("a product after stop: %v, want ErrProductWorker", err)
	}
}

// A task or an answer lost in transit is sent again: worker 0 drops the first product task on arrival, worker 1
// the answer to the second; each product still completes with the right values, the server having sent each
// task again once (it notices from the workers' heartbeats: idle, without the task's answer).
func TestProductsLostMessages(t *testing.T) {
	data, x, k, conn := productsLab(t)
	server := conn("server")
	// Task 1 binds; tasks 2 and 3 are the products. Each is lost once.
	var lost [2]atomic.Bool
	lose := []func(string, uint64) bool{
		func(what string, seq uint64) bool { return what == "task" && seq == 2 && !lost[0].Swap(true) },
		func(what string, seq uint64) bool { return what == "result" && seq == 3 && !lost[1].Swap(true) },
	}
	done := make([]chan error, 2)
	for i := range done {
		done[i] = make(chan error, 1)
		nc := conn(fmt.Sprintf("w%d", i))
		go func() {
			done[i] <- WorkProducts(ProductWorkerConfig{Conn: nc, Run: "lost", Index: i, Of: 2, JoinTimeout: 10 * time.Second, lose: lose[i]})
		}()
	}
	blocks := cg.BlocksOptions{Block: 256}
	p, err := ServeProducts(ProductsConfig{Conn: server, Run: "lost", Workers: 2, Kernel: k, X: x, Blocks: blocks,
		Timeout: time.Minute, HeartbeatEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hyper, local := localBlocks(t, k, blocks)
	for _, b := range []ops.KernelOperator{p, local} {
		if err := b.Bind(x.RawMatrix().Data, data.N, data.D, hyper); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 {
		v := make([]float64, data.N)
		for i := range v {
			v[i] = math.Sin(float64(i + round))
		}
		sameProduct(t, p, local, v, round)
	}
	if r := p.Resent(); r != 2 {
		t.Errorf("tasks sent again %d times, want 2", r)
	}
	p.Close()
	for i, d := range done {
		if err := <-d; err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
}

// sameProduct checks that a products run's K·v (product round) equals one process's, local's, to 1e-12 relative.
func sameProduct(t *testing.T, p, local ops.KernelOperator, v []float64, round int) {
	t.Helper()
	got, want := make([]float64, len(v)), make([]float64, len(v))
	if err := p.Mul(v, 1, got); err != nil {
		t.Fatalf("product %d: %v", round, err)
	}
	if err := local.Mul(v, 1, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("product %d, row %d: %.15g, want %.15g", round, i, got[i], want[i])
		}
	}
}

// productsLab is the setup of the products tests: 600 synthetic rows of 2 inputs, an SE kernel, an embedded
// NATS server (shut down with the test) and conn, a connection to it (closed with the test).
func productsLab(t *testing.T) (data Synthetic, x *mat.Dense, k gp.Kernel, conn func(name string) *nats.Conn) {
	t.Helper()
	data = Synthetic{N: 600, D: 2, Noise: 0.1, Seed: 3}
	x, _, err := data.Rows(0, data.N)
	if err != nil {
		t.Fatal(err)
	}
	if k, err = gp.NewSquaredExp(gp.KernelConfig{InputDim: data.D}); err != nil {
		t.Fatal(err)
	}
	e, err := StartEmbedded(EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	return data, x, k, func(name string) *nats.Conn {
		nc, err := Connect(e.URL, name, Security{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
}

// localBlocks returns k's raw hyperparameters and one process's blocks of k: what a products run's answers are
// checked against.
func localBlocks(t *testing.T, k gp.Kernel, o cg.BlocksOptions) ([][]float64, *cg.Blocks) {
	t.Helper()
	hyper := make([][]float64, len(k.Params()))
	for i, q := range k.Params() {
		hyper[i] = q.Raw()
	}
	b, err := cg.NewBlocks(k, o)
	if err != nil {
		t.Fatal(err)
	}
	return hyper, b
}
