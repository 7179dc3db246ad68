package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gpzoo/gpzoo/gp/modelfile"
	"gonum.org/v1/gonum/mat"
)

// batcher coalesces the rows of concurrent requests for one model into one prediction of up to maxRows rows,
// waiting at most maxDelay after a batch's first request. Only requests with the same options share a batch,
// and only options the model predicts row by row (modelfile.File.Batchable); each row keeps the Monte-Carlo key
// of its place in its own request, (seed, index), so that its result is the one it would get alone.
type batcher struct {
	predict  func(x *mat.Dense, o modelfile.PredictOptions) (*modelfile.Prediction, error)
	cols     int
	maxRows  int
	maxDelay time.Duration
	run      func(f func()) // runs a prediction (the server's concurrency limit)
	acquire  func()         // holds the model for a job until its rows are predicted
	release  func()
	observe  func(rows, requests int)

	mu   sync.Mutex
	open map[batchKey]*batch
}

// batchKey is what requests sharing a batch must agree on: every option but the seed, which goes into the
// rows' keys.
type batchKey struct {
	latent         bool
	draws, samples int
}

// batch is an open (or closing) batch: its jobs, in order, and their total rows.
type batch struct {
	key   batchKey
	jobs  []*job
	rows  int
	timer *time.Timer
}

// job is one request's rows in a batch and, once predicted, its result.
type job struct {
	x    *mat.Dense
	seed uint64
	keys []modelfile.RowKey // the rows' keys when the request gives them (a row offset), else (seed, i)
	ctx  context.Context
	done chan struct{}
	pred *modelfile.Prediction
	err  error
}

func keyOf(o modelfile.PredictOptions) batchKey {
	return batchKey{latent: o.Latent, draws: o.Draws, samples: o.Samples}
}

// submit predicts x with o (o.FullCov false; rows keyed o.Keys, else (o.Seed, i)) in a batch with other
// requests', and returns the rows of x's prediction. It returns ctx's error if ctx ends first (the batch still
// runs for the others).
func (b *batcher) submit(ctx context.Context, x *mat.Dense, o modelfile.PredictOptions) (*modelfile.Prediction, error) {
	n, _ := x.Dims()
	j := &job{x: x, seed: o.Seed, keys: o.Keys, ctx: ctx, done: make(chan struct{})}
	b.acquire()
	key := keyOf(o)
	var ready []*batch
	b.mu.Lock()
	bt := b.open[key]
	if bt != nil && bt.rows+n > b.maxRows {
		ready = append(ready, b.closeLocked(bt))
		bt = nil
	}
	if bt == nil {
		bt = &batch{key: key}
		b.open[key] = bt
		bt.timer = time.AfterFunc(b.maxDelay, func() { b.flush(bt) })
	}
	bt.jobs = append(bt.jobs, j)
	bt.rows += n
	if bt.rows >= b.maxRows {
		ready = append(ready, b.closeLocked(bt))
	}
	b.mu.Unlock()
	for _, r := range ready {
		go b.runBatch(r)
	}
	select {
	case <-j.done:
		return j.pred, j.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// closeLocked takes bt out of the open batches (b.mu held) and returns it; its timer no longer matters.
func (b *batcher) closeLocked(bt *batch) *batch {
	if b.open[bt.key] == bt {
		delete(b.open, bt.key)
	}
	bt.timer.Stop()
	return bt
}

// flush runs bt when its delay is over, unless it was closed (and run) already.
func (b *batcher) flush(bt *batch) {
	b.mu.Lock()
	if b.open[bt.key] != bt {
		b.mu.Unlock()
		return
	}
	delete(b.open, bt.key)
	b.mu.Unlock()
	b.runBatch(bt)
}

// runBatch predicts the rows of every job of bt in one call and hands each job its rows.
func (b *batcher) runBatch(bt *batch) {
	jobs := bt.jobs[:0:0]
	rows := 0
	for _, j := range bt.jobs {
		if j.ctx.Err() != nil { // its request is gone: no need to predict its rows
			close(j.done)
			b.release()
			continue
		}
		jobs = append(jobs, j)
		rows += j.x.RawMatrix().Rows
	}
	if len(jobs) == 0 {
		return
	}
	x := mat.NewDense(rows, b.cols, nil)
	keys := make([]modelfile.RowKey, 0, rows)
	r := 0
	for _, j := range jobs {
		n, _ := j.x.Dims()
		for i := range n {
			copy(x.RawRowView(r+i), j.x.RawRowView(i))
			if j.keys != nil {
				keys = append(keys, j.keys[i])
			} else {
				keys = append(keys, modelfile.RowKey{Seed: j.seed, Index: i})
			}
		}
		r += n
	}
	o := modelfile.PredictOptions{Latent: bt.key.latent, Draws: bt.key.draws, Samples: bt.key.samples, Keys: keys}
	var p *modelfile.Prediction
	var err error
	b.run(func() { p, err = b.predict(x, o) })
	if err == nil {
		err = checkPredRows(p, rows)
	}
	if b.observe != nil {
		b.observe(rows, len(jobs))
	}
	r = 0
	for _, j := range jobs {
		n, _ := j.x.Dims()
		if err != nil {
			j.err = err
		} else {
			j.pred = rowsOf(p, r, n)
		}
		r += n
		close(j.done)
		b.release()
	}
}

// rowsOf returns rows [lo, lo+n) of p's per-row parts (p has no joint parts: no Cov).
func rowsOf(p *modelfile.Prediction, lo, n int) *modelfile.Prediction {
	sub := func(a *mat.Dense) *mat.Dense {
		if a == nil {
			return nil
		}
		_, c := a.Dims()
		return a.Slice(lo, lo+n, 0, c).(*mat.Dense)
	}
	out := &modelfile.Prediction{Mean: sub(p.Mean), Var: sub(p.Var), Std: sub(p.Std), Probs: sub(p.Probs)}
	if p.Labels != nil {
		out.Labels = p.Labels[lo : lo+n]
	}
	for _, d := range p.Draws {
		out.Draws = append(out.Draws, sub(d))
	}
	return out
}

// checkPredRows returns an error unless every per-row part of p has n rows.
func checkPredRows(p *modelfile.Prediction, n int) error {
	parts := append([]*mat.Dense{p.Mean, p.Var, p.Std, p.Probs}, p.Draws...)
	for _, a := range parts {
		if a != nil && a.RawMatrix().Rows != n {
			return fmt.Errorf("serve: the model predicted %d rows for %d", a.RawMatrix().Rows, n)
		}
	}
	if p.Labels != nil && len(p.Labels) != n {
		return fmt.Errorf("serve: the model predicted %d labels for %d rows", len(p.Labels), n)
	}
	return nil
}
