package ops

import (
	"runtime"

	"github.com/gpzoo/gpzoo/ops/internal/parallel"
	"github.com/gpzoo/gpzoo/ops/internal/vmath"
	"gorgonia.org/tensor"
)

// The workspace of one CovMatrix op and the passes of its fused forward and backward (ops.Stationary).
//
// Parallel passes split rows (or columns) over goroutines, each writing only its own rows (columns). Sums across
// rows are never taken per goroutine: they are kept per fixed block of rows (covBlocks, a function of the shape
// alone) and combined in block order, or taken per column in row order, so that every result has the same bits
// for every GOMAXPROCS.

// covWork holds the buffers of one CovMatrix op, reused from run to run, and what its gradients share.
type covWork struct {
	runs uint64 // forward runs so far: what the backward pass reuses is keyed on it
	pair covPair
	// pairRuns, pairKey: the forward run and the x1, x2 and lengthscale data pair was last prepared for
	pairRuns uint64
	pairKey  [3]*float64
	ins      []CovInput
	shapes   []tensor.Shape // covRecheck's scratch
	extra    []float64
	r2       []float64 // r² of forward run r2Runs (kept when keepR2: an earlier backward pass needed it)
	r2Runs   uint64
	r2Key    [3]*float64 // x1, x2 and lengthscale data the kept r² belongs to
	keepR2   bool
	grad     covGrads
	unit     []float64 // the unit-variance matrix (variance gradient at tiny σ² only)
}

// covGrads holds what the gradients of one backward pass share (W = G ⊙ ∂K/∂r² and its sums), computed once per
// forward run and handed out to each gradient op of that run.
type covGrads struct {
	runs   uint64      // the forward run they belong to (0: none)
	served uint64      // bit wrt set: that gradient was handed out for this run (asked again, all is recomputed)
	key    [5]*float64 // x1, x2, lengthscales, K and G data they were computed from
	blocks int         // fixed row blocks of the column sums and the near pairs
	w      []float64   // W's rows, one per row block [blocks,m] (W is never kept whole)
	cs     []float64   // column sums of W [m]
	csPart []float64   // column sums per row block [blocks,m]
	wb     []float64   // [W·b, W·1] [n,d+1] (b = x2's centred, scaled rows; the last column: W's row sums)
	wat    []float64   // (Wᵀa)ᵀ [d,m], filled on demand (haveWat)
	wcol   []float64   // the column pass's tiles of W [m]
	vrow   []float64   // Σ_j G_ij K_ij per row [n]
	xrow   []float64   // per row, Σ_j G_ij ∂K_ij/∂θ_e for each extra hyperparameter e [n,len(Extra)]
	near   [][]covNear // the near pairs of each row block, in row order
	r2     []float64   // r² (nil unless the function needs it)
	extra  []float64   // the extra hyperparameters' values
	// w holds one row of W per row block (the row pass's scratch); haveWat: wat is this run's.
	haveWat bool
}

// covNear is a near pair (see covNearRel) whose weight is applied directly instead of through the expansion.
type covNear struct {
	i, j int
	w    float64
}

// covGrow returns s resized to n, reallocated only when its capacity is short (contents undefined).
func covGrow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func dataPtr(s []float64) *float64 {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// covBlocks returns the number of fixed row blocks of an n-row backward pass: a function of n alone (never of
// the number of goroutines), so that sums taken per block and then combined in block order have the same bits
// for every GOMAXPROCS.
func covBlocks(n int) int { return min(n, 16) }

// covBlock returns the rows [lo, hi) of block b of nb blocks over n rows.
func covBlock(b, nb, n int) (lo, hi int) { return b * n / nb, (b + 1) * n / nb }

// covParallel reports whether a pass over entries values is split over goroutines (GOMAXPROCS ≥ 2 and enough
// work: covParallelMin).
func covParallel(entries int) bool { return runtime.GOMAXPROCS(0) >= 2 && entries >= covParallelMin }

// covRun calls fn(u, u+1) for every unit u of [0, units) — on the caller alone unless par, else on the caller and
// the pooled workers of ops/internal/parallel, each unit claimed by whoever is free (so that a core slowed by
// other work takes fewer) — and returns when all have returned. Units must write disjoint outputs.
func covRun(par bool, units int, fn func(lo, hi int)) {
	if !par || units <= 1 {
		fn(0, units)
		return
	}
	parallel.Do(units, func(u int) { fn(u, u+1) })
}

// covGroupRows returns how many rows of length m a row-parallel pass treats at once (about 1024 entries, in the
// L1 cache).
func covGroupRows(m int) int { return max(1, 1024/max(m, 1)) }

// covColTile is the width of the column tiles of the column pass (d·covColTile accumulators in the L1 cache).
const covColTile = 256

// covColumnPass writes wat = (Wᵀa)ᵀ [d,m], wat[k·m + j] = Σ_i a_ik W_ij summed over i in order (one fused
// multiply-add per term), for W [n,m] and a row-major [n,d], W's tiles made by wTile(i, j0, j1, w) (row i,
// columns [j0, j1) into w): each column is summed on one goroutine, in tiles of covColTile columns, so its bits
// do not depend on the split. W is made tile by tile as the pass reaches it rather than kept whole from the
// row pass: an [n,m] buffer less (26 MB for K(Zα, X) of a full-batch deep-GP layer) for the same traffic. wbuf
// [m] is the tiles' scratch (tile t in its own columns).
func covColumnPass(wTile func(i, j0, j1 int, w []float64), a []float64, n, m, d int, wat, wbuf []float64) {
	tiles := (m + covColTile - 1) / covColTile
	covRun(covParallel(n*m), tiles, func(t0, t1 int) {
		for t := t0; t < t1; t++ {
			j0, j1 := t*covColTile, min(m, (t+1)*covColTile)
			for k := 0; k < d; k++ {
				clear(wat[k*m+j0 : k*m+j1])
			}
			w := wbuf[j0:j1]
			for i := 0; i < n; i++ {
				wTile(i, j0, j1, w)
				vmath.Axpys(wat[j0:], m, a[i*d:(i+1)*d], w)
			}
		}
	})
}

// preparePair fills ws.pair for x1, x2 and the lengthscales ell, unless it holds them already for this forward
// run (the backward pass reuses the forward pass's).
func (ws *covWork) preparePair(x1, x2 CovInput, ell []float64) {
	key := [3]*float64{dataPtr(x1.Data), dataPtr(x2.Data), dataPtr(ell)}
	if ws.runs != 0 && ws.pairRuns == ws.runs && ws.pairKey == key {
		return
	}
	ws.pair.prepare(x1, x2, ell)
	ws.pairRuns, ws.pairKey = ws.runs, key
}

// hypers returns the hyperparameter operands as CovInputs, in a slice reused from call to call.
func (ws *covWork) hypers(in []arg) []CovInput {
	ws.ins = ws.ins[:0]
	for _, a := range in {
		ws.ins = append(ws.ins, covIn(a))
	}
	return ws.ins
}

// extraOf returns the values of the hyperparameters after variance and lengthscales (a slice reused from call to
// call; nil when there are none).
func (ws *covWork) extraOf(h []CovInput) []float64 {
	if len(h) <= 2 {
		return nil
	}
	ws.extra = ws.extra[:0]
	for _, x := range h[2:] {
		ws.extra = append(ws.extra, x.Scalar())
	}
	return ws.extra
}
