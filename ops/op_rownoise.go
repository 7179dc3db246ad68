package ops

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Row-keyed reparameterisation noise: a counter-based generator (Salmon, Moraes, Dror & Shaw 2011, "Parallel
// random numbers: as easy as 1, 2, 3", SC'11 — a keyed function of a counter instead of a sequential state),
// so that a data row's numbers depend on (seed, stream, step, row) only, never on which other rows share its
// minibatch, where the row sits in it, or which process computes it. A sharded training step and a
// single-process step thus draw the same ε for the same row.
//
// Construction: row b's numbers are the ChaCha8 stream of math/rand/v2 (the C2SP chacha8rand specification,
// ChaCha with 8 rounds: Bernstein 2008, "ChaCha, a variant of Salsa20") keyed by the 32 bytes
// seed | stream | step | row (each a little-endian uint64), turned into N(0, 1) draws by rand.Rand.NormFloat64.
// The key is an injective function of the four counters, so no two (seed, stream, step, row) share a stream, and
// ChaCha8 is a pseudo-random function of its key: streams of distinct keys are computationally indistinguishable
// from independent uniform streams, which is more than a statistical test of independence could ask for (the
// argument of Salmon et al. for keyed block ciphers; no new mixing function is written here). Re-keying is
// rand.ChaCha8.Seed on one generator per worker, with no allocation per row.

// RowKey names one stream of row-keyed noise: the run's seed and a stream number (a deep GP's layer, for
// example), so that several RowNormal nodes of one run draw unrelated numbers for the same row and step.
type RowKey struct {
	Seed   uint64
	Stream uint64
}

// rowNoiseMinRows is the smallest number of rows a worker of a parallel RowNormal takes (re-keying ChaCha8 costs
// one block of output, so small batches run on one core).
const rowNoiseMinRows = 64

// maxExactIndex is 2⁵³: above it float64 no longer holds every integer, so an index there cannot be trusted.
const maxExactIndex = 1 << 53

// rowNormalK draws width·copies N(0, 1) numbers per row from the ChaCha8 stream keyed by (key, step, rows[b]).
// Its operands are the rows [B] (global data-row indices as float64 integers) and the step (a scalar integer);
// neither is differentiated. It has no state shared between runs or nodes (no SharedState): rows may be drawn
// concurrently.
type rowNormalK struct {
	key           RowKey
	width, copies int
}

func (k rowNormalK) name() string { return "RowNormal" }
func (k rowNormalK) params(w io.Writer) {
	fmt.Fprintf(w, "seed=%d,stream=%d,width=%d,copies=%d", k.key.Seed, k.key.Stream, k.width, k.copies)
}
func (rowNormalK) arity() int   { return 2 }
func (rowNormalK) diff() []bool { return []bool{false, false} }

func (k rowNormalK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 1 {
		return nil, &ShapeError{Op: "RowNormal", Want: "rows a vector [B]", Got: fmt.Sprint(in[0])}
	}
	if len(in[1]) != 0 {
		return nil, &ShapeError{Op: "RowNormal", Want: "step a scalar", Got: fmt.Sprint(in[1])}
	}
	return tensor.Shape{k.copies * in[0][0], k.width}, nil
}

// rowNoiseIndex returns v as a non-negative integer, or a *ShapeError naming what it is (what) when v is not one.
func rowNoiseIndex(what string, pos int, v float64) (uint64, error) {
	if v != math.Trunc(v) || v < 0 || v >= maxExactIndex { // NaN fails the first test, ±Inf the others
		where := what
		if pos >= 0 {
			where = fmt.Sprintf("%s[%d]", what, pos)
		}
		return 0, &ShapeError{Op: "RowNormal", Want: fmt.Sprintf("%s a non-negative integer below 2^53", what), Got: fmt.Sprintf("%s = %v", where, v)}
	}
	return uint64(v), nil
}

func (k rowNormalK) forward(in []arg, out []float64) error {
	step, err := rowNoiseIndex("step", -1, in[1].scalar())
	if err != nil {
		return err
	}
	rows := in[0].data
	ids := make([]uint64, len(rows))
	for b, v := range rows {
		if ids[b], err = rowNoiseIndex("rows", b, v); err != nil {
			return err
		}
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[0:], k.key.Seed)
	binary.LittleEndian.PutUint64(seed[8:], k.key.Stream)
	binary.LittleEndian.PutUint64(seed[16:], step)
	n, w := len(rows), k.width
	return ForRows(n, rowNoiseMinRows, func(lo, hi int) error {
		src := rand.NewChaCha8(seed)
		r := rand.New(src)
		key := seed
		for b := lo; b < hi; b++ {
			binary.LittleEndian.PutUint64(key[24:], ids[b])
			src.Seed(key)
			for c := range k.copies { // copy c of row b is output row c·B + b (sample-major)
				o := out[(c*n+b)*w : (c*n+b+1)*w]
				for j := range o {
					o[j] = r.NormFloat64()
				}
			}
		}
		return nil
	})
}

func (rowNormalK) backward(int, []arg, arg, arg, []float64) error {
	return errors.New("ops: RowNormal: noise is not differentiable") // unreachable: diff() is false
}

// RowNormal returns [copies·B, width] standard-normal draws for the B rows named by rows [B] (global data-row
// indices, float64 integers ≥ 0) at the training step step (a scalar integer ≥ 0), redrawn at every run from
// the rows' and step's current values: output row c·B + b holds numbers c·width … (c+1)·width − 1 of the
// stream keyed by (key.Seed, key.Stream, step, rows[b]) — the same numbers whatever the other rows, the
// position b, the batch size or the process computing them (copies lays out S samples per row sample-major, as
// a deep GP tiles its batch). A row index or step that is not a non-negative integer below 2⁵³ fails the run
// with a *ShapeError. Not differentiable (no gradient flows to rows or step); the op keeps no generator between
// runs, so nodes built with equal arguments are one node and draw equal numbers. See RowKey and the
// construction above (ChaCha8 keyed per row).
func RowNormal(rows, step *G.Node, key RowKey, width, copies int) (*G.Node, error) {
	if width <= 0 || copies <= 0 {
		return nil, &ShapeError{Op: "RowNormal", Want: "positive width and copies", Got: fmt.Sprintf("width %d, copies %d", width, copies)}
	}
	return apply(rowNormalK{key: key, width: width, copies: copies}, rows, step)
}
