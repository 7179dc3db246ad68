package datasets

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Sampler draws minibatches of a fixed size from 0..N-1 (graph engines with
// static shapes need every batch full). It walks an endless stream of
// permutations drawn from its rng: a batch that crosses an epoch boundary
// takes its first rows from the end of the current permutation and its last
// rows from the next one, so nothing is dropped and every index appears
// exactly once in each permutation. The same seed gives the same stream. A
// Sampler is not safe for concurrent use.
type Sampler struct {
	n, batch int
	rng      *rand.Rand
	perm     []int
	pos      int
	epoch    int
}

// NewSampler returns a sampler of batches of size batch over n points.
// Errors: ErrInvalid when rng is nil, n < 1 or batch is not in 1..n.
func NewSampler(n, batch int, rng *rand.Rand) (*Sampler, error) {
	if rng == nil {
		return nil, fmt.Errorf("datasets: NewSampler: nil rng: %w", ErrInvalid)
	}
	if n < 1 || batch < 1 || batch > n {
		return nil, fmt.Errorf("datasets: NewSampler: batch %d not in 1..n=%d: %w", batch, n, ErrInvalid)
	}
	return &Sampler{n: n, batch: batch, rng: rng, perm: rng.Perm(n)}, nil
}

// Next fills dst (reallocated if its capacity is below the batch size) with
// the next batch of indices and returns dst[:batch].
func (s *Sampler) Next(dst []int) []int {
	if cap(dst) < s.batch {
		dst = make([]int, s.batch)
	}
	dst = dst[:s.batch]
	for i := range dst {
		if s.pos == s.n {
			s.rng.Shuffle(s.n, func(a, b int) { s.perm[a], s.perm[b] = s.perm[b], s.perm[a] })
			s.pos = 0
		}
		dst[i] = s.perm[s.pos]
		s.pos++
		if s.pos == s.n {
			s.epoch++
		}
	}
	return dst
}

// Epoch returns the number of complete passes (permutations fully consumed)
// so far.
func (s *Sampler) Epoch() int { return s.epoch }

// Batch returns the batch size.
func (s *Sampler) Batch() int { return s.batch }

// N returns the number of points sampled from.
func (s *Sampler) N() int { return s.n }

// GatherRows copies rows idx of src into the rows of dst, which must be
// [len(idx), cols of src]; it does not allocate. Being a hot-loop helper for
// indices produced by a Sampler, it panics, like gonum's mat, when the shapes
// disagree or an index is out of range (a programming error); use CheckGather
// to validate untrusted arguments first.
func GatherRows(dst, src *mat.Dense, idx []int) {
	if err := CheckGather(dst, src, idx); err != nil {
		panic(err.Error())
	}
	for i, r := range idx {
		copy(dst.RawRowView(i), src.RawRowView(r))
	}
}

// CheckGather reports whether GatherRows(dst, src, idx) would succeed.
// Errors: ErrEmpty for nil or empty matrices, ErrShape when dst is not
// [len(idx), cols of src], *IndexError for an index outside src's rows.
func CheckGather(dst, src *mat.Dense, idx []int) error {
	if dst == nil || src == nil || dst.IsEmpty() || src.IsEmpty() {
		return fmt.Errorf("datasets: GatherRows: nil or empty matrix: %w", ErrEmpty)
	}
	dr, dc := dst.Dims()
	sr, sc := src.Dims()
	if dr != len(idx) || dc != sc {
		return fmt.Errorf("datasets: GatherRows: dst is [%d, %d], want [%d, %d]: %w", dr, dc, len(idx), sc, ErrShape)
	}
	for _, r := range idx {
		if r < 0 || r >= sr {
			return &IndexError{Index: r, Len: sr}
		}
	}
	return nil
}
