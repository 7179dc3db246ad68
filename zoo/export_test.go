package zoo

import (
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/datasets"
	"gonum.org/v1/gonum/mat"
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

// TaskDataForTest has an input x and a task column t ∈ {0, …, tasks−1} (tasks share a sine shape with
// task-specific offsets and scales), row i of task i mod tasks.
func TaskDataForTest(n, tasks int) *datasets.Dataset {
	rng := rand.New(rand.NewPCG(4, 4))
	x, y := mat.NewDense(n, 2, nil), mat.NewDense(n, 1, nil)
	for i := range n {
		a, task := 6*rng.Float64()-3, i%tasks
		x.Set(i, 0, 50+10*a)
		x.Set(i, 1, float64(task))
		y.Set(i, 0, float64(task)+(1+0.5*float64(task))*math.Sin(a)+0.05*rng.NormFloat64())
	}
	return &datasets.Dataset{Name: "tasks", X: x, Y: y, FeatureNames: []string{"x", "task"}}
}
