package datasets

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRandomSplitTrain: the training part has ⌊n·p/100⌋ rows (bayesian_benchmarks' int(N·prop): kin8nm 7372 of
// 8192 at 90%, protein 36584 of 45730 at 80%), the parts are disjoint, cover 0..n−1, are sorted and seeded;
// where RandomSplit gives the same sizes (Boston 90/10) the split is RandomSplit's.
func TestRandomSplitTrain(t *testing.T) {
	for _, c := range []struct{ n, pct, train int }{
		{506, 90, 455}, {8192, 90, 7372}, {11934, 90, 10740}, {9568, 90, 8611}, {45730, 90, 41157}, {308, 90, 277},
		{8192, 80, 6553}, {45730, 80, 36584}, {3, 50, 1},
	} {
		tr, te, err := RandomSplitTrain(c.n, c.pct, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != c.train || len(te) != c.n-c.train {
			t.Fatalf("n=%d at %d%%: %d/%d rows, want %d/%d", c.n, c.pct, len(tr), len(te), c.train, c.n-c.train)
		}
		if !slices.IsSorted(tr) || !slices.IsSorted(te) {
			t.Fatalf("n=%d: parts not sorted", c.n)
		}
		all := slices.Concat(tr, te)
		slices.Sort(all)
		for i, v := range all {
			if v != i {
				t.Fatalf("n=%d: the parts do not partition 0..n−1 (position %d holds %d)", c.n, i, v)
			}
		}
		tr2, te2, _ := RandomSplitTrain(c.n, c.pct, rand.New(rand.NewPCG(1, 2)))
		if !slices.Equal(tr, tr2) || !slices.Equal(te, te2) {
			t.Fatalf("n=%d: not deterministic", c.n)
		}
		if c.n > 100 {
			tr3, _, _ := RandomSplitTrain(c.n, c.pct, rand.New(rand.NewPCG(2, 2)))
			if slices.Equal(tr, tr3) {
				t.Fatalf("n=%d: another seed gave the same split", c.n)
			}
		}
	}
	for k := range uint64(10) {
		a, b, _ := RandomSplitTrain(506, 90, rand.New(rand.NewPCG(k, 0xbb)))
		c, d, _ := RandomSplit(506, 0.1, rand.New(rand.NewPCG(k, 0xbb)))
		if !slices.Equal(a, c) || !slices.Equal(b, d) {
			t.Fatalf("Boston split %d differs from RandomSplit's", k)
		}
	}
	for _, bad := range []struct{ n, pct int }{{1, 50}, {10, 0}, {10, 100}, {10, -5}, {5, 10}} {
		if _, _, err := RandomSplitTrain(bad.n, bad.pct, rand.New(rand.NewPCG(1, 2))); !errors.Is(err, ErrInvalid) {
			t.Errorf("n=%d at %d%%: got %v, want ErrInvalid", bad.n, bad.pct, err)
		}
	}
	if _, _, err := RandomSplitTrain(10, 50, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil rng: %v", err)
	}
}
