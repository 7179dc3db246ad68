package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// RandomSplit draws a random train/test partition of 0..n-1 using rng. The
// test set has round(testFrac*n) rows, clamped to [1, n-1]; both slices are
// sorted. Errors: ErrInvalid when n < 2, testFrac is not in (0, 1) or rng is
// nil.
func RandomSplit(n int, testFrac float64, rng *rand.Rand) (train, test []int, err error) {
	if rng == nil {
		return nil, nil, fmt.Errorf("datasets: RandomSplit: nil rng: %w", ErrInvalid)
	}
	if n < 2 {
		return nil, nil, fmt.Errorf("datasets: RandomSplit of n=%d points, need at least 2: %w", n, ErrInvalid)
	}
	if !(testFrac > 0 && testFrac < 1) {
		return nil, nil, fmt.Errorf("datasets: RandomSplit test fraction %v not in (0, 1): %w", testFrac, ErrInvalid)
	}
	nt := int(math.Round(testFrac * float64(n)))
	nt = min(max(nt, 1), n-1)
	perm := rng.Perm(n)
	test = slices.Clone(perm[:nt])
	train = slices.Clone(perm[nt:])
	slices.Sort(test)
	slices.Sort(train)
	return train, test, nil
}

// KFold partitions a random permutation of 0..n-1 (drawn with rng) into k
// folds whose sizes differ by at most one, and returns each fold's test
// indices, sorted. Use Complement for the training indices. Errors:
// ErrInvalid when k < 2, k > n or rng is nil.
func KFold(n, k int, rng *rand.Rand) ([][]int, error) {
	if rng == nil {
		return nil, fmt.Errorf("datasets: KFold: nil rng: %w", ErrInvalid)
	}
	if k < 2 || k > n {
		return nil, fmt.Errorf("datasets: KFold with k=%d folds of n=%d points, need 2 <= k <= n: %w", k, n, ErrInvalid)
	}
	perm := rng.Perm(n)
	folds := make([][]int, k)
	start := 0
	for f := range folds {
		size := n / k
		if f < n%k {
			size++
		}
		folds[f] = slices.Clone(perm[start : start+size])
		slices.Sort(folds[f])
		start += size
	}
	return folds, nil
}
