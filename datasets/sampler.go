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

// SamplerState is a Sampler's position in its stream: what a training
// checkpoint stores to resume the same minibatches. It does not include the
// rng, whose state the caller saves and restores itself (the next reshuffle
// draws from it).
type SamplerState struct {
	// Perm is the current permutation of 0..N-1 (the next reshuffle permutes
	// it in place, so it is part of the state).
	Perm []int
	// Pos is the next position in Perm, in 0..N; N means the next draw
	// reshuffles first.
	Pos int
	// Epoch is the number of complete passes so far.
	Epoch int
}

// State returns a copy of the sampler's position in its stream.
func (s *Sampler) State() SamplerState {
	return SamplerState{Perm: append([]int(nil), s.perm...), Pos: s.pos, Epoch: s.epoch}
}

// SetState moves the sampler to st (copied), as returned by State of a
// sampler over the same N. Together with the rng's own state restored, the
// sampler then yields exactly the batches the saved one would have.
// Errors: ErrInvalid when Perm is not a permutation of 0..N-1, Pos is outside
// 0..N or Epoch is negative; the sampler is unchanged then.
func (s *Sampler) SetState(st SamplerState) error {
	if len(st.Perm) != s.n {
		return fmt.Errorf("datasets: Sampler.SetState: permutation of %d indices, want n=%d: %w", len(st.Perm), s.n, ErrInvalid)
	}
	seen := make([]bool, s.n)
	for i, v := range st.Perm {
		if v < 0 || v >= s.n || seen[v] {
			return fmt.Errorf("datasets: Sampler.SetState: entry %d (%d) makes the permutation invalid: %w", i, v, ErrInvalid)
		}
		seen[v] = true
	}
	if st.Pos < 0 || st.Pos > s.n || st.Epoch < 0 {
		return fmt.Errorf("datasets: Sampler.SetState: position %d not in 0..%d or epoch %d negative: %w", st.Pos, s.n, st.Epoch, ErrInvalid)
	}
	copy(s.perm, st.Perm)
	s.pos, s.epoch = st.Pos, st.Epoch
	return nil
}

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
