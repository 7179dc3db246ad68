package ops

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Random row subsets, redrawn at every run: the unbiased minibatch estimates of sums over many basis points
// (e.g. the decoupled GP's aᵀK_α a, MATH.md §6).
//
// The design separates the draw from the gather, so that several tensors can be subsampled with ONE draw:
//
//   - SampleIndices(like, rng, m, b) is a node [b] holding b distinct row indices of [0, m) (as float64), drawn
//     without replacement from rng at every forward run. It is not differentiable (like only anchors it).
//   - TakeRows(x, idx) gathers the rows idx of x. It is differentiable with respect to x: the backward scatters
//     (adds) the output gradient into the selected rows. idx is an ordinary operand, so the backward sees exactly
//     the indices the forward used in the same run, and a fixed idx (a constant) makes TakeRows an ordinary
//     deterministic op that finite differences can check.
//   - SampleRows(x, rng, b) = TakeRows(x, SampleIndices(x, rng, rows(x), b)); SampleRowsPair(x, y, rng, b)
//     gathers the same random rows of x and y (one draw, two TakeRows).

// sampleSerial numbers every SampleIndices node; it enters the hash so that two nodes with the same generator,
// sizes and anchor are still two nodes drawing independently (gorgonia merges nodes with equal hashes).
var sampleSerial atomic.Uint64

// sampleIdxK draws b distinct indices of [0, m) at every forward pass by a partial Fisher–Yates shuffle of the
// identity permutation, undoing its b swaps afterwards (O(b) time per run, O(m) memory): each draw is a uniformly
// random ordered b-subset and a function of the generator's state alone, so a checkpointed run resumes bit for bit.
type sampleIdxK struct {
	rng    *rand.Rand
	m, b   int
	serial uint64
	perm   *[]int // scratch permutation of [0, m), lazily created; the identity between runs
	swaps  *[]int // scratch: the b swap partners of the current run
}

func (k sampleIdxK) name() string { return "SampleIndices" }
func (k sampleIdxK) params(w io.Writer) {
	fmt.Fprintf(w, "rng=%p,m=%d,b=%d,serial=%d", k.rng, k.m, k.b, k.serial)
}
func (sampleIdxK) arity() int   { return 1 }
func (sampleIdxK) diff() []bool { return []bool{false} }
func (k sampleIdxK) outShape([]tensor.Shape) (tensor.Shape, error) {
	return tensor.Shape{k.b}, nil
}

func (k sampleIdxK) forward(_ []arg, out []float64) error {
	p := *k.perm
	if p == nil {
		p = make([]int, k.m)
		for i := range p {
			p[i] = i
		}
		*k.perm = p
	}
	js := *k.swaps
	if js == nil {
		js = make([]int, k.b)
		*k.swaps = js
	}
	for i := 0; i < k.b; i++ {
		j := i + k.rng.IntN(k.m-i)
		p[i], p[j] = p[j], p[i]
		out[i] = float64(p[i])
		js[i] = j
	}
	// Undo the swaps so the permutation is the identity again: each run's draw is then a function of rng's
	// state alone, not of earlier runs (a checkpointed training run resumes bit for bit).
	for i := k.b - 1; i >= 0; i-- {
		p[i], p[js[i]] = p[js[i]], p[i]
	}
	return nil
}

func (k sampleIdxK) backward(int, []arg, arg, arg, []float64) error {
	return errors.New("ops: SampleIndices: indices are not differentiable") // unreachable: diff() is false
}

// SampleIndices returns a node [b] of b distinct row indices in [0, m), stored as float64 and redrawn uniformly
// without replacement from rng at every run of the graph. Feed it to TakeRows (as many times as needed: every
// TakeRows on the same node sees the same draw within a run).
//
// like is an anchor operand of any shape that places the op in like's graph; its value is ignored and it is not
// differentiated. Every call builds a distinct node, even for the same rng and sizes (the hash holds rng's
// address, m, b and a serial number). Draws are deterministic given rng's seed (graph's executor runs the ops drawing
// from one generator in a fixed order: ops.SharedState); rng must not be used concurrently elsewhere while the graph runs. Requires 1 ≤ b ≤ m.
func SampleIndices(like *G.Node, rng *rand.Rand, m, b int) (*G.Node, error) {
	if rng == nil {
		return nil, errors.New("ops: SampleIndices: nil *rand.Rand")
	}
	if m <= 0 || b <= 0 || b > m {
		return nil, &ShapeError{Op: "SampleIndices", Want: "1 ≤ b ≤ m", Got: fmt.Sprintf("m=%d, b=%d", m, b)}
	}
	return apply(sampleIdxK{rng: rng, m: m, b: b, serial: sampleSerial.Add(1), perm: new([]int), swaps: new([]int)}, like)
}

// takeRowsK gathers rows of x [m,d] (or entries of x [m]) at the indices idx [b].
type takeRowsK struct{}

func (takeRowsK) name() string     { return "TakeRows" }
func (takeRowsK) params(io.Writer) {}
func (takeRowsK) arity() int       { return 2 }
func (takeRowsK) diff() []bool     { return []bool{true, false} }
func (takeRowsK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	x, idx := in[0], in[1]
	if len(x) != 1 && len(x) != 2 {
		return nil, &ShapeError{Op: "TakeRows", Want: "x a vector or a matrix", Got: fmt.Sprint(x)}
	}
	if len(idx) != 1 {
		return nil, &ShapeError{Op: "TakeRows", Want: "indices a vector [b]", Got: fmt.Sprint(idx)}
	}
	out := x.Clone()
	out[0] = idx[0]
	return out, nil
}

// rowIndex validates one index operand entry.
func rowIndex(v float64, m int) (int, error) {
	if v != math.Trunc(v) || v < 0 || v >= float64(m) {
		return 0, &ShapeError{Op: "TakeRows", Want: fmt.Sprintf("integer row indices in [0,%d)", m), Got: fmt.Sprint(v)}
	}
	return int(v), nil
}

func (takeRowsK) forward(in []arg, out []float64) error {
	x, idx := in[0], in[1]
	m, d := x.rows(), x.cols()
	for r, v := range idx.data {
		i, err := rowIndex(v, m)
		if err != nil {
			return err
		}
		copy(out[r*d:(r+1)*d], x.data[i*d:(i+1)*d])
	}
	return nil
}

func (takeRowsK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	x, idx := in[0], in[1]
	m, d := x.rows(), x.cols()
	clear(dst)
	for r, v := range idx.data {
		i, err := rowIndex(v, m)
		if err != nil {
			return err
		}
		row := dst[i*d : (i+1)*d]
		for c, gv := range g.data[r*d : (r+1)*d] {
			row[c] += gv // += : repeated indices accumulate
		}
	}
	return nil
}

// TakeRows returns the rows idx of x: out[r] = x[idx[r]]. Shapes: x [m,d] → [b,d] or x [m] → [b], idx [b] of
// integer values in [0, m) (a run fails with a *ShapeError otherwise). Differentiable with respect to x (the
// gradient scatters into the selected rows, accumulating over repeated indices); idx is not differentiated.
func TakeRows(x, idx *G.Node) (*G.Node, error) { return apply(takeRowsK{}, x, idx) }

// SampleRows returns b rows of x [m,d] (or entries of x [m]) chosen uniformly without replacement, redrawn at
// every run from rng: TakeRows(x, SampleIndices(x, rng, m, b)). The gradient flows into the chosen rows of x.
func SampleRows(x *G.Node, rng *rand.Rand, b int) (*G.Node, error) {
	idx, err := sampleFor("SampleRows", x, rng, b)
	if err != nil {
		return nil, err
	}
	return TakeRows(x, idx)
}

// SampleRowsPair returns the same b random rows of x [m,·] and y [m,·] (one draw per run, shared by both
// gathers): e.g. the mean bases Z_I and their weights a_I. x and y must have the same number of rows.
func SampleRowsPair(x, y *G.Node, rng *rand.Rand, b int) (xs, ys *G.Node, err error) {
	if x == nil || y == nil {
		return nil, nil, &ShapeError{Op: "SampleRowsPair", Want: "two nodes", Got: "nil"}
	}
	sx, sy := x.Shape(), y.Shape()
	if len(sx) == 0 || len(sy) == 0 || sx[0] != sy[0] {
		return nil, nil, &ShapeError{Op: "SampleRowsPair", Want: "x and y with the same number of rows", Got: fmt.Sprintf("%v and %v", sx, sy)}
	}
	idx, err := sampleFor("SampleRowsPair", x, rng, b)
	if err != nil {
		return nil, nil, err
	}
	if xs, err = TakeRows(x, idx); err != nil {
		return nil, nil, err
	}
	if ys, err = TakeRows(y, idx); err != nil {
		return nil, nil, err
	}
	return xs, ys, nil
}

func sampleFor(op string, x *G.Node, rng *rand.Rand, b int) (*G.Node, error) {
	if x == nil {
		return nil, &ShapeError{Op: op, Want: "a node", Got: "nil"}
	}
	s := x.Shape()
	if len(s) != 1 && len(s) != 2 {
		return nil, &ShapeError{Op: op, Want: "a vector or a matrix", Got: fmt.Sprint(s)}
	}
	return SampleIndices(x, rng, s[0], b)
}

func (k sampleIdxK) source() *rand.Rand { return k.rng }
