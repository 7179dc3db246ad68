// Command shardtrain trains an SVGP across worker processes on a data set larger than one machine's memory,
// through package cluster's Go API (the command line does the same with gpzoo train --rows FILE --workers K):
// each worker reads only its shard of a row file (.gpzr), streaming (cluster.DataRef.File), and reports its
// peak resident memory (VmHWM) when training ends. The standardisation and the test split come from one
// streaming pass over the file (cluster.NewFileData). Issue 33, deliverable 5:
//
//	gpzoo synth --rows 100000000 --inputs 8 --out big.gpzr
//	go run ./examples/shardtrain --rows big.gpzr --iters 2000 --workers 4
//
// Without --rows it trains on 200 000 generated rows in a temporary folder.
//
// The workers are processes of this program on one machine over an embedded NATS server (cluster.Local,
// cluster.Command); the test RMSE is computed on the held-out rows among the file's first 50 000.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/train"
)

func rss() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return -1
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "work" {
		fs := flag.NewFlagSet("work", flag.ExitOnError)
		get := cluster.WorkerFlags(fs)
		fs.Parse(os.Args[2:])
		a, err := get()
		if err != nil {
			die(err)
		}
		nc, err := cluster.Connect(a.URL, fmt.Sprintf("w%d", a.Shard), a.Security)
		if err != nil {
			die(err)
		}
		t0 := time.Now()
		res, err := cluster.Work(cluster.WorkerConfig{Conn: nc, Run: a.Run, Shard: a.Shard, Of: a.Of})
		if err != nil {
			die(err)
		}
		fmt.Fprintf(os.Stderr, "worker %d/%d: %d gradients, %d points, %.1f s computing, %.1f s in all, peak RSS %.1f MiB\n",
			a.Shard, a.Of, res.Gradients, res.Points, res.Seconds, time.Since(t0).Seconds(), rss())
		return
	}
	fs := flag.NewFlagSet("shardtrain", flag.ExitOnError)
	rowsPath := fs.String("rows", "", "the row file (.gpzr) to train on (default: 200 000 generated rows in a temporary folder)")
	iters := fs.Int("iters", 200, "updates")
	workers := fs.Int("workers", 4, "worker processes")
	batch := fs.Int("batch", 1024, "minibatch size per worker and step")
	tau := fs.Int("tau", 2, "delay bound")
	inducing := fs.Int("inducing", 64, "inducing points")
	fs.Parse(os.Args[1:])
	if *rowsPath == "" {
		dir, err := os.MkdirTemp("", "shardtrain-")
		if err != nil {
			die(err)
		}
		defer os.RemoveAll(dir)
		if *rowsPath, err = writeRows(dir, 200_000); err != nil {
			die(err)
		}
	}
	// The server's one streaming pass: the training rows' standardisation (a row is a test row by a hash of
	// its index) and the counts.
	f, _, err := cluster.NewFileData(datasets.RowSource{Path: *rowsPath}, datasets.RowSplit{Seed: 1, TestFrac: 0.1}, true)
	if err != nil {
		die(err)
	}
	// Z by k-means on about 20 000 training rows at the start of the file; test rows from the first 50 000.
	xz, _, _, err := datasets.ReadShard(f.Source, 0, min(22_300, f.Rows), func(r int) bool { return !f.Split.IsTest(r) })
	if err != nil {
		die(err)
	}
	tx, ty, _, err := datasets.ReadShard(f.Source, 0, min(50_000, f.Rows), f.Split.IsTest)
	if err != nil {
		die(err)
	}
	if err := f.Std.ApplyInPlace(xz, nil); err != nil {
		die(err)
	}
	if err := f.Std.ApplyInPlace(tx, ty); err != nil {
		die(err)
	}
	_, d := xz.Dims()
	ls := make([]float64, d)
	for j := range ls {
		ls[j] = 1
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 1, Lengthscales: ls})
	if err != nil {
		die(err)
	}
	z, err := gp.KMeans(xz, *inducing, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		die(err)
	}
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z})
	if err != nil {
		die(err)
	}
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.1})
	if err != nil {
		die(err)
	}
	m, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: f.Train})
	if err != nil {
		die(err)
	}
	self, _ := os.Executable()
	t0 := time.Now()
	res, err := cluster.Local(m, cluster.LocalConfig{
		Server: cluster.ServerConfig{Job: cluster.Job{Data: cluster.DataRef{File: f}, NumData: f.Train, Workers: *workers, Batch: *batch, Seed: 1, Tau: *tau},
			Iters: *iters, Optimizer: &train.Adam{LR: 0.02}, StartTimeout: 10 * time.Minute},
		Spawn: cluster.Command(self, "work")})
	if err != nil {
		die(err)
	}
	p, err := m.Predict(tx, gp.PredictOptions{})
	if err != nil {
		die(err)
	}
	n, _ := tx.Dims()
	se := 0.0
	for i := range n {
		e := (p.YMean.At(i, 0) - ty.At(i, 0)) * f.Std.YStd[0]
		se += e * e
	}
	fmt.Printf("server: %d updates in %.1f s (%.0f points/s), loss %.4f -> %.4f, per shard %v, stale %d; test RMSE (original units) on %d held-out rows %.4f; %.1f s in all; server peak RSS %.1f MiB\n",
		res.Updates, res.Seconds, res.PointsPerSecond, res.Losses[0], res.Losses[len(res.Losses)-1], res.PerShard, res.Stale, n, math.Sqrt(se/float64(n)), time.Since(t0).Seconds(), rss())
}

// writeRows writes n rows of gpzoo's seeded synthetic regression set (datasets.Synthetic, 4 inputs) as a row
// file in dir and returns its path.
func writeRows(dir string, n int) (string, error) {
	d, err := datasets.Synthetic(datasets.SynthConfig{Rows: n, Inputs: 4, Seed: 1})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "rows.gpzr")
	out, err := os.Create(path)
	if err != nil {
		return "", err
	}
	err = datasets.WriteRowFile(out, d.X, d.Y, nil)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return path, err
}
