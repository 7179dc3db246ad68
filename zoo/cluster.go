package zoo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// ClusterConfig trains a family whose objective is a sum over the rows plus global terms (svgp and its layer
// families, dgp: gp.RowSum) with a parameter server and Workers workers over NATS (package cluster) instead
// of in this process: worker i owns shard i of the training rows and pushes the gradients of its data term for
// minibatches of BatchSize rows of its shard (the whole shard when that is smaller), as data-parallel training
// takes a batch per process; the server adds the KL terms and applies the optimiser and hooks a single-process
// fit applies (Adam; natural gradients with NatGrad), with the delay bound Tau and the same stopping rule, each
// update aggregating the gradients that arrived since the last one (cluster.ServerConfig.ReuseGradients off).
// GPR and SGPR (not sums over rows) and L-BFGS stay single-process and refuse it.
type ClusterConfig struct {
	// Workers is k ≥ 1; Tau the delay bound τ ≥ 0 (0: synchronous).
	Workers, Tau int
	// URL is an external NATS server ("": an embedded one, Embedded); Security what the server's and the
	// workers' connections present; Identities the run's per-worker identities (cluster.IssueIdentities).
	URL        string
	Security   cluster.Security
	Embedded   cluster.EmbeddedConfig
	Identities *cluster.Identities
	// Spawn starts the workers (nil: goroutines in this process); Run names the run ("": a fresh name).
	Spawn cluster.Spawner
	Run   string
	// Data is where spawned workers find the standardised training rows: a zoo data set (Name, Dir, Split:
	// ClusterLoader) or a row file (File); zero: goroutine workers read the server's rows, spawned workers a
	// row file the server writes in DataDir (default: a temporary folder, removed afterwards).
	Data    cluster.DataRef
	DataDir string
	// OnData, if set, is told the row file the workers read, before training: the one written for them, or
	// TrainRows' file (the CLI prints the workers' command).
	OnData func(path string)
	// RejoinWait is how long gpr's products run waits, beyond the heartbeat timeout, for a silent worker to be
	// started again with its index (cluster.ProductsConfig.RejoinWait; 0: the run fails at once). The row-sum
	// models' workers may rejoin at any time.
	RejoinWait time.Duration
}

// ClusterFamily reports whether family trains as a sum over rows (ClusterConfig): the workers push their shards'
// gradients.
func ClusterFamily(family string) bool { return family != "gpr" && family != "sgpr" }

// ClusterProducts reports whether family trains on a cluster by its kernel products: gpr, by conjugate gradients
// on the server, the workers computing each product's row blocks (cluster.Products; products workers, `gpzoo
// cluster work --products`).
func ClusterProducts(family string) bool { return family == "gpr" }

// Clusterable reports whether family trains on a cluster at all (ClusterConfig), one way or the other.
func Clusterable(family string) bool { return ClusterFamily(family) || ClusterProducts(family) }

// ErrNotRowSum is returned for a cluster run of a family that is not a sum over rows.
var ErrNotRowSum = errors.New("zoo: only the families whose objective is a sum over rows (svgp, decoupled, hybrid, orth, orthnat, dgp) train on a cluster, and gpr by conjugate gradients, its workers computing the kernel products; sgpr takes the whole data set in one process")

// ClusterLoader is the cluster.Loader of zoo data sets: the standardised training part of ref's data set and
// split, as a configured entry or an ADVGP entry trains on it (what `gpzoo cluster work --data DIR` loads).
func ClusterLoader(ref cluster.DataRef) (x, y *mat.Dense, err error) {
	spl, err := loadSplit(ref.Name, ref.Dir, ref.Split)
	if err != nil {
		return nil, nil, err
	}
	tr, _, _, err := spl.standardised(false)
	if err != nil {
		return nil, nil, err
	}
	return tr.X, tr.Y, nil
}

// ClusterStats are the numbers of a cluster run (Result.Cluster; ADVGP's in Result.ADVGP): the workers, τ, the
// updates, the training points per second the workers' gradients covered, the messages refused (stale: a
// gradient older than τ; invalid: undecodable, of the wrong size or not finite; unknown: a gradient from a
// client that holds no slot in the run), the workers dropped and rejoined, those told to join again after a
// message was lost in transit (recovered), each shard's accepted gradients and the gradients' mean staleness (t − the
// version a gradient was computed at, averaged over every update; 0 when synchronous).
type ClusterStats struct {
	Workers         int     `json:"workers"`
	Tau             int     `json:"tau"`
	Updates         int     `json:"updates"`
	PointsPerSecond float64 `json:"points_per_second"`
	Stale           int     `json:"stale"`
	Invalid         int     `json:"invalid"`
	Unknown         int     `json:"unknown"`
	Recovered       int     `json:"recovered"`
	Dropped         int     `json:"dropped"`
	Rejoins         int     `json:"rejoins"`
	PerShard        []int   `json:"gradients_per_shard"`
	MeanStaleness   float64 `json:"mean_staleness"`
}

func newClusterStats(r *cluster.Result, workers, tau int) ClusterStats {
	st := ClusterStats{Workers: workers, Tau: tau, Updates: r.Updates, PointsPerSecond: r.PointsPerSecond, Stale: r.Stale,
		Invalid: r.Invalid, Unknown: r.Unknown, Recovered: r.Recovered, Dropped: r.Dropped(), Rejoins: r.Rejoins, PerShard: r.PerShard}
	for _, l := range r.Staleness {
		st.MeanStaleness += l / float64(len(r.Staleness))
	}
	return st
}

// trainCluster trains model with the configuration single-process training would use (cfg) on a cluster.
func trainCluster(model gp.Model, x, y *mat.Dense, c CustomConfig, cfg train.Config, out *Result) (*train.Result, error) {
	cc := c.Cluster
	rs, ok := model.(gp.RowSum)
	if !ok || !ClusterFamily(c.Family) {
		return nil, fmt.Errorf("%w (family %s)", ErrNotRowSum, c.Family)
	}
	if cc.Workers < 1 || cc.Tau < 0 {
		return nil, fmt.Errorf("%w: %d workers and τ = %d: want k ≥ 1, τ ≥ 0", ErrBadCustom, cc.Workers, cc.Tau)
	}
	n := c.rows
	if n == 0 {
		n, _ = x.Dims()
	}
	if n < cc.Workers {
		return nil, fmt.Errorf("%w: %d training rows for %d workers", ErrBadCustom, n, cc.Workers)
	}
	batch := 0 // the whole shard
	if c.BatchSize > 0 && c.BatchSize < n/cc.Workers {
		batch = c.BatchSize // each worker's, as data-parallel training takes a batch per process
	}
	data, load := cc.Data, cluster.Loader(nil)
	switch {
	case data != (cluster.DataRef{}):
		load = ClusterLoader
	case cc.Spawn == nil:
		data = cluster.DataRef{Name: "in-process"}
		load = func(cluster.DataRef) (*mat.Dense, *mat.Dense, error) { return x, y, nil }
	default:
		path, cleanup, err := writeRows(cc.DataDir, x, y)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		if cc.OnData != nil {
			cc.OnData(path)
		}
		data = cluster.DataRef{File: &cluster.FileData{Source: datasets.RowSource{Path: path}, Rows: n, Train: n}}
	}
	sc := cluster.ServerConfig{Job: cluster.Job{Run: cc.Run, Data: data, NumData: n, Workers: cc.Workers, Batch: batch, Seed: c.Seed, Tau: cc.Tau},
		Iters: cfg.Iters, Converge: cfg.Converge, Optimizer: cfg.Optimizer, Hooks: cfg.Hooks, EvalEvery: cfg.EvalEvery, Eval: cfg.Eval,
		Logger: cfg.Logger, Progress: cfg.Progress, Stop: cfg.Stop}
	if ck := cfg.Checkpoint; ck != nil {
		sc.CheckpointDir, sc.CheckpointEvery, sc.Resume = ck.Dir, ck.Every, ck.Resume
	}
	res, err := cluster.Local(rs, cluster.LocalConfig{Server: sc, URL: cc.URL, Security: cc.Security, Embedded: cc.Embedded,
		Identities: cc.Identities, Spawn: cc.Spawn, Loader: load})
	if res == nil {
		return nil, err
	}
	t := &train.Result{Steps: res.Updates, Times: res.Times, Seconds: res.Seconds, Evals: res.Evals, StopReason: res.StopReason}
	for _, l := range res.Losses { // train's losses are on the whole data set's scale
		t.Losses = append(t.Losses, l*float64(n))
	}
	if res.Updates > 0 {
		t.SecondsPerIter = res.Seconds / float64(res.Updates)
	}
	st := newClusterStats(res, cc.Workers, cc.Tau)
	out.Cluster = &st
	return t, err
}

// writeRows writes the training rows (x, y) to a row file in dir ("": a fresh temporary folder) for spawned
// workers, and returns its path and the function that removes what it created.
func writeRows(dir string, x, y *mat.Dense) (path string, cleanup func(), err error) {
	cleanup = func() {}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "gpzoo-cluster-"); err != nil {
			return "", nil, err
		}
		tmp := dir
		cleanup = func() { os.RemoveAll(tmp) }
	}
	f, err := os.CreateTemp(dir, "train-*.gpzr")
	if err != nil {
		cleanup()
		return "", nil, err
	}
	path = f.Name()
	err = datasets.WriteRowFile(f, x, y, nil)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		cleanup()
		return "", nil, fmt.Errorf("zoo: writing the workers' rows to %s: %w", filepath.Dir(path), err)
	}
	rm := cleanup
	return path, func() { os.Remove(path); rm() }, nil
}
