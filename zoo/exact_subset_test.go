package zoo

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The subset start's rows: distinct inputs first, in the permutation's order, then the repeats it passed over;
// where every input is distinct, exactly the permutation's prefix (so fits on such data start as before).
func TestDistinctFirst(t *testing.T) {
	// 12 rows of 2 inputs holding 5 distinct inputs: row i is input i%5.
	x := mat.NewDense(12, 2, nil)
	for i := range 12 {
		x.Set(i, 0, float64(i%5))
		x.Set(i, 1, -1)
	}
	perm := rand.New(rand.NewPCG(3, 4)).Perm(12)
	for _, k := range []int{1, 3, 5, 7, 12} {
		idx := distinctFirst(x, perm, k)
		if len(idx) != k {
			t.Fatalf("k %d: %d rows", k, len(idx))
		}
		seen := map[float64]bool{}
		for j, i := range idx {
			v := x.At(i, 0)
			if j < min(k, 5) && seen[v] {
				t.Errorf("k %d: row %d (input %v) repeats an input among the first %d", k, i, v, min(k, 5))
			}
			seen[v] = true
		}
		if len(seen) != min(k, 5) {
			t.Errorf("k %d: %d distinct inputs, want %d", k, len(seen), min(k, 5))
		}
		s := slices.Clone(idx)
		slices.Sort(s)
		if len(slices.Compact(s)) != k {
			t.Errorf("k %d: a row drawn twice: %v", k, idx)
		}
		// The distinct inputs come in the order perm first visits them.
		var want []int
		firsts := map[float64]bool{}
		for _, i := range perm {
			if !firsts[x.At(i, 0)] {
				firsts[x.At(i, 0)] = true
				want = append(want, i)
			}
		}
		if !slices.Equal(idx[:min(k, 5)], want[:min(k, 5)]) {
			t.Errorf("k %d: distinct rows %v, want %v", k, idx[:min(k, 5)], want[:min(k, 5)])
		}
	}
	// All inputs distinct: the prefix of perm.
	y := mat.NewDense(9, 1, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8})
	p := rand.New(rand.NewPCG(5, 6)).Perm(9)
	if got := distinctFirst(y, p, 6); !slices.Equal(got, p[:6]) {
		t.Errorf("distinct data: %v, want the prefix %v", got, p[:6])
	}
}
