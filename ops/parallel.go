package ops

import (
	"runtime"

	"github.com/gpzoo/gpzoo/ops/internal/parallel"
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
