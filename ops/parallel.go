package ops

import (
	"math/rand/v2"
	"runtime"

	"github.com/gpzoo/gpzoo/ops/internal/parallel"
	G "gorgonia.org/gorgonia"
)

// ForRows runs fn over [0, rows) split into at most GOMAXPROCS contiguous chunks of at least minRows rows each
// (one chunk, on the calling goroutine, when rows < 2·minRows), on the caller and the pooled workers of
// ops/internal/parallel, and returns the error of the lowest chunk that failed. fn must only write state owned by
// its rows.
func ForRows(rows, minRows int, fn func(lo, hi int) error) error {
	w := min(runtime.GOMAXPROCS(0), rows/max(minRows, 1))
	if w <= 1 {
		return fn(0, rows)
	}
	errs := make([]error, w)
	parallel.Do(w, func(c int) { errs[c] = fn(c*rows/w, (c+1)*rows/w) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TaskGraph is a set of tasks with dependencies that run on the cores' worker pool (see its Run): an executor
// runs a graph's independent nodes concurrently with it, while each node's own parallel calls use the cores its
// siblings leave idle.
type TaskGraph = parallel.DAG

// randomKernel is implemented by kernels that draw from an injected generator.
type randomKernel interface{ source() *rand.Rand }

// SharedState returns what op shares mutable state with, for an executor that runs a graph's nodes concurrently:
// nodes whose ops return the same non-nil key must run one at a time, in program order. Every gradient op of a
// forward op shares that op's kernel state (a covariance workspace, a joint backward's cache): its key is the
// forward op. An op drawing random numbers shares its generator with the others drawing from it: its key is the
// generator, so that they draw in program order. Other ops, gorgonia's built-ins included, keep no state
// beyond their own output buffer (nil).
func SharedState(op G.Op) any {
	switch o := op.(type) {
	case *gradOp:
		return o.fwd
	case *fusedOp:
		if r, ok := o.k.(randomKernel); ok {
			return r.source()
		}
	}
	return nil
}

// Parallel runs f(0), …, f(n−1), each exactly once, on the caller and the idle pooled workers of
// ops/internal/parallel (each piece claimed by whoever is free), and returns when all have returned: the worker pool
// for numerics outside ops (package gp/cg's kernel blocks). Pieces must write disjoint outputs; a result summed over
// pieces is deterministic when each piece keeps its own part and the parts are added in piece order.
func Parallel(n int, f func(i int)) { parallel.Do(n, f) }
