package zoo

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/datasets"
)

// SplitForTest returns the test rows of e's data set under o's split, in original units.
func SplitForTest(e *Entry, o Options) (*datasets.Dataset, error) {
	s, err := loadSplit(e.Dataset, o.DataDir, o.Split)
	if err != nil {
		return nil, err
	}
	return s.test, nil
}

// RandForTest returns the generator the deep-GP entries score their test rows with.
func RandForTest(o Options) *rand.Rand { return rand.New(rand.NewPCG(o.Seed, uint64(o.Split)+0x7e57)) }

// MarkTiesForTest is markTies.
func MarkTiesForTest(r []VBKSKernel) { markTies(r) }
