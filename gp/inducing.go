package gp

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Inducing-input initialisation: plain Go on *mat.Dense, no graph.

// DefaultKMeansIters is the iteration bound of KMeans when maxIter is 0. Lloyd's algorithm from k-means++
// seeds usually stops earlier (no assignment changes); for inducing inputs an approximate clustering is enough.
const DefaultKMeansIters = 100

// kmeansBlockElems bounds the distance block [rows, k] computed by one Gemm in KMeans (2²⁰ float64 = 8 MiB),
// so memory stays bounded for any N.
const kmeansBlockElems = 1 << 20

// KMeans returns k cluster centres [k,D] of the rows of x [N,D], by Lloyd's algorithm from k-means++ seeds
// (Arthur & Vassilvitskii 2007, "k-means++: the advantages of careful seeding") drawn from rng. It runs at most
// maxIter iterations (0 means DefaultKMeansIters) and stops as soon as no point changes cluster. A cluster that
// becomes empty is re-seeded at the point farthest from its own centre (taken from a cluster with at least two
// points). The result is deterministic for a given rng state. Centres appear in seeding order.
//
// Squared distances use ‖x‖² + ‖c‖² − 2x·c (clamped at 0), with x·c for a block of rows computed by one BLAS
// Gemm, so an iteration costs 2·N·D·k flops and O(N + k·D + kmeansBlockElems) memory; seeding costs N·D·k
// flops more.
//
// Errors (wrapping ErrConfig): x nil or empty, k < 1 or k > N, maxIter < 0, rng nil. A NaN or ±Inf in x gives
// an *ops.NonFiniteError naming its row and column.
func KMeans(x *mat.Dense, k, maxIter int, rng *rand.Rand) (*mat.Dense, error) {
	data, n, d, err := rowsOf("KMeans", x)
	if err != nil {
		return nil, err
	}
	if k < 1 || k > n {
		return nil, configErr("KMeans: k = %d outside 1..N = %d", k, n)
	}
	if maxIter < 0 {
		return nil, configErr("KMeans: maxIter = %d is negative", maxIter)
	}
	if maxIter == 0 {
		maxIter = DefaultKMeansIters
	}
	if rng == nil {
		return nil, configErr("KMeans: nil rng")
	}
	if err := ops.CheckFinite("KMeans x", data, d); err != nil {
		return nil, err
	}
	xn := make([]float64, n) // ‖x_i‖²
	for i := range xn {
		xn[i] = blas64.Dot(vec(data[i*d:(i+1)*d]), vec(data[i*d:(i+1)*d]))
	}
	c := kmeansPlusPlus(data, xn, n, d, k, rng)

	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	dist := make([]float64, n) // squared distance of each point to its centre
	cn := make([]float64, k)
	counts := make([]int, k)
	block := max(1, min(n, kmeansBlockElems/k))
	gbuf := make([]float64, block*k)
	for it := 0; it < maxIter; it++ {
		for j := 0; j < k; j++ {
			cn[j] = blas64.Dot(vec(c[j*d:(j+1)*d]), vec(c[j*d:(j+1)*d]))
		}
		changed := 0
		for i0 := 0; i0 < n; i0 += block {
			rows := min(block, n-i0)
			g := blas64.General{Rows: rows, Cols: k, Stride: k, Data: gbuf[:rows*k]}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1,
				blas64.General{Rows: rows, Cols: d, Stride: d, Data: data[i0*d : (i0+rows)*d]},
				blas64.General{Rows: k, Cols: d, Stride: d, Data: c}, 0, g)
			for r := 0; r < rows; r++ {
				i := i0 + r
				best, bj := math.Inf(1), 0
				for j, dot := range g.Data[r*k : (r+1)*k] {
					if v := xn[i] + cn[j] - 2*dot; v < best {
						best, bj = v, j
					}
				}
				if assign[i] != bj {
					assign[i] = bj
					changed++
				}
				dist[i] = max(best, 0)
			}
		}
		if changed == 0 {
			break
		}
		// Update: each centre is the mean of its points.
		clear(c)
		clear(counts)
		for i, j := range assign {
			counts[j]++
			blas64.Axpy(1, vec(data[i*d:(i+1)*d]), vec(c[j*d:(j+1)*d]))
		}
		for j := 0; j < k; j++ {
			if counts[j] > 0 {
				blas64.Scal(1/float64(counts[j]), vec(c[j*d:(j+1)*d]))
			}
		}
		// Re-seed empty clusters at the farthest points (from clusters that keep at least one point).
		for j := 0; j < k; j++ {
			if counts[j] > 0 {
				continue
			}
			far, fd := -1, -1.0
			for i, v := range dist {
				if v > fd && counts[assign[i]] > 1 {
					far, fd = i, v
				}
			}
			if far < 0 { // cannot happen while k ≤ N; keep the centre at the origin rather than panic
				continue
			}
			copy(c[j*d:(j+1)*d], data[far*d:(far+1)*d])
			counts[assign[far]]--
			counts[j] = 1
			dist[far] = -1 // not chosen twice
		}
	}
	return mat.NewDense(k, d, c), nil
}

// kmeansPlusPlus returns k seeds [k*d]: the first a uniformly chosen row, each next one a row drawn with
// probability proportional to its squared distance to the nearest seed so far.
func kmeansPlusPlus(data, xn []float64, n, d, k int, rng *rand.Rand) []float64 {
	c := make([]float64, k*d)
	d2 := make([]float64, n)
	for i := range d2 {
		d2[i] = math.Inf(1)
	}
	pick := rng.IntN(n)
	for j := 0; ; j++ {
		copy(c[j*d:(j+1)*d], data[pick*d:(pick+1)*d])
		if j == k-1 {
			return c
		}
		updateMinDist(d2, data, xn, n, d, c[j*d:(j+1)*d])
		d2[pick] = 0
		total := 0.0
		for _, v := range d2 {
			total += v
		}
		if !(total > 0) || math.IsInf(total, 1) {
			// Every point coincides with a seed (duplicates): fall back to a uniform choice.
			pick = rng.IntN(n)
			continue
		}
		r := rng.Float64() * total
		pick = -1
		for i, v := range d2 {
			if v > 0 {
				pick = i
				if r -= v; r < 0 {
					break
				}
			}
		}
	}
}

// updateMinDist sets d2[i] = min(d2[i], ‖x_i − cj‖²) for every row, with one Gemv per goroutine's share of rows.
func updateMinDist(d2, data, xn []float64, n, d int, cj []float64) {
	cn := blas64.Dot(vec(cj), vec(cj))
	workers := max(1, min(runtime.GOMAXPROCS(0), n/4096))
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min(n, (w+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dots := make([]float64, hi-lo)
			blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: hi - lo, Cols: d, Stride: d, Data: data[lo*d : hi*d]},
				vec(cj), 0, vec(dots))
			for r, dot := range dots {
				i := lo + r
				if v := max(xn[i]+cn-2*dot, 0); v < d2[i] {
					d2[i] = v
				}
			}
		}()
	}
	wg.Wait()
}

// RandomSubset returns k distinct rows of x [N,D], chosen uniformly without replacement by rng (in the order
// drawn), as a new [k,D] matrix.
//
// Errors (wrapping ErrConfig): x nil or empty, k < 1 or k > N, rng nil. A NaN or ±Inf in a chosen row gives an
// *ops.NonFiniteError naming its row (of x) and column.
func RandomSubset(x *mat.Dense, k int, rng *rand.Rand) (*mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, configErr("RandomSubset: nil or empty x")
	}
	n, d := x.Dims()
	if k < 1 || k > n {
		return nil, configErr("RandomSubset: k = %d outside 1..N = %d", k, n)
	}
	if rng == nil {
		return nil, configErr("RandomSubset: nil rng")
	}
	// Partial Fisher–Yates shuffle of the row indices.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	out := mat.NewDense(k, d, nil)
	for j := 0; j < k; j++ {
		s := j + rng.IntN(n-j)
		idx[j], idx[s] = idx[s], idx[j]
		row := x.RawRowView(idx[j])
		for c, v := range row {
			if v-v != 0 {
				return nil, &ops.NonFiniteError{Where: "RandomSubset x", Row: idx[j], Col: c, Value: v}
			}
		}
		out.SetRow(j, row)
	}
	return out, nil
}

// rowsOf returns x's entries as one contiguous row-major slice (x's own storage when it has no row padding,
// else a copy) and its dimensions.
func rowsOf(fn string, x *mat.Dense) ([]float64, int, int, error) {
	if x == nil || x.IsEmpty() {
		return nil, 0, 0, configErr("%s: nil or empty x", fn)
	}
	raw := x.RawMatrix()
	n, d := raw.Rows, raw.Cols
	if raw.Stride == d {
		return raw.Data[:n*d], n, d, nil
	}
	data := make([]float64, n*d)
	for i := 0; i < n; i++ {
		copy(data[i*d:(i+1)*d], raw.Data[i*raw.Stride:i*raw.Stride+d])
	}
	return data, n, d, nil
}

func vec(v []float64) blas64.Vector { return blas64.Vector{N: len(v), Inc: 1, Data: v} }
