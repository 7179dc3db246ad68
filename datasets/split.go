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

// RandomSplitTrain draws a random train/test partition of 0..n-1 using rng that keeps ⌊n·trainPercent/100⌋
// rows for training (integer arithmetic, so no rounding of a float decides a row) and the rest for test:
// bayesian_benchmarks' and the Doubly-Stochastic-DGP notebooks' n_train = int(N·prop), e.g. 7372 of kin8nm's
// 8192 rows at 90%. It draws the same permutation as RandomSplit and takes its first n − n_train entries as the
// test rows, so where both give the same sizes (Boston at 90/10: 455/51) the splits are identical. Both slices
// are sorted. Errors: ErrInvalid when n < 2, trainPercent is not in 1..99, either part would be empty or rng is
// nil.
func RandomSplitTrain(n, trainPercent int, rng *rand.Rand) (train, test []int, err error) {
	if rng == nil {
		return nil, nil, fmt.Errorf("datasets: RandomSplitTrain: nil rng: %w", ErrInvalid)
	}
	if trainPercent < 1 || trainPercent > 99 {
		return nil, nil, fmt.Errorf("datasets: RandomSplitTrain: training share %d%% not in 1..99: %w", trainPercent, ErrInvalid)
	}
	ntr := n * trainPercent / 100
	if n < 2 || ntr < 1 || ntr >= n {
		return nil, nil, fmt.Errorf("datasets: RandomSplitTrain of n=%d points at %d%% leaves an empty part: %w", n, trainPercent, ErrInvalid)
	}
	perm := rng.Perm(n)
	test = slices.Clone(perm[:n-ntr])
	train = slices.Clone(perm[n-ntr:])
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
