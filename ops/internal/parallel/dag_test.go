package parallel

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// randomDAG returns a DAG of n tasks where each task waits for up to 3 random earlier ones.
func randomDAG(rng *rand.Rand, n int) *DAG {
	d := &DAG{Succ: make([][]int32, n), Preds: make([]int32, n)}
	for t := 1; t < n; t++ {
		seen := map[int]bool{}
		for range rng.IntN(4) {
			p := rng.IntN(t)
			if !seen[p] {
				seen[p] = true
				d.Succ[p] = append(d.Succ[p], int32(t))
				d.Preds[t]++
			}
		}
	}
	return d
}

// Every task runs exactly once, after every task it waits for, for every GOMAXPROCS; tasks that split their own
// work with Do complete too (their pieces claimed by idle runners).
func TestDAGRunsEveryTaskAfterItsPredecessors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, procs := range []int{1, 2, 3, 8} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for _, n := range []int{0, 1, 2, 5, 50, 400} {
				d := randomDAG(rng, n)
				if err := d.Check(); err != nil {
					t.Fatal(err)
				}
				var clock atomic.Int64
				start := make([]int64, n)
				end := make([]int64, n)
				runs := make([]atomic.Int32, n)
				err := d.Run(func(i int) error {
					runs[i].Add(1)
					start[i] = clock.Add(1)
					if i%7 == 0 { // a task with its own parallel pieces
						var pieces atomic.Int32
						Do(5, func(int) { pieces.Add(1) })
						if pieces.Load() != 5 {
							return errors.New("nested pieces lost")
						}
					}
					end[i] = clock.Add(1)
					return nil
				})
				if err != nil {
					t.Fatalf("GOMAXPROCS %d, n %d: %v", procs, n, err)
				}
				for i := range n {
					if c := runs[i].Load(); c != 1 {
						t.Fatalf("GOMAXPROCS %d, n %d: task %d ran %d times", procs, n, i, c)
					}
					for _, s := range d.Succ[i] {
						if start[s] < end[i] {
							t.Fatalf("GOMAXPROCS %d: task %d started before its predecessor %d ended", procs, s, i)
						}
					}
				}
			}
		}()
	}
}

// After a failure no new task starts, and Run returns the lowest-numbered failure; a panic is an error.
func TestDAGStopsAtTheFirstFailure(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			n := 100
			d := &DAG{Succ: make([][]int32, n), Preds: make([]int32, n)}
			for i := 0; i+1 < n; i++ { // a chain: nothing after the failed task may run
				d.Succ[i] = []int32{int32(i + 1)}
				d.Preds[i+1] = 1
			}
			var ran atomic.Int32
			err := d.Run(func(i int) error {
				ran.Add(1)
				if i == 40 {
					return errors.New("boom 40")
				}
				return nil
			})
			if err == nil || err.Error() != "boom 40" || ran.Load() != 41 {
				t.Fatalf("GOMAXPROCS %d: err %v after %d tasks, want boom 40 after 41", procs, err, ran.Load())
			}
			err = d.Run(func(i int) error {
				if i == 7 {
					panic("bad input")
				}
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), "panic in task 7: bad input") {
				t.Fatalf("GOMAXPROCS %d: panic returned as %v", procs, err)
			}
		}()
	}
	// Independent tasks: of several failures, the lowest-numbered one is reported.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	d := &DAG{Succ: make([][]int32, 64), Preds: make([]int32, 64)}
	for range 20 {
		err := d.Run(func(i int) error {
			if i == 3 || i == 30 {
				return errors.New("fail " + string(rune('0'+i%10)))
			}
			return nil
		})
		if err == nil || err.Error() != "fail 3" {
			t.Fatalf("independent failures: got %v, want fail 3", err)
		}
	}
}

// Check refuses backward edges and inconsistent counts.
func TestDAGCheck(t *testing.T) {
	bad := []*DAG{
		{Succ: [][]int32{{0}}, Preds: []int32{1}},
		{Succ: [][]int32{nil, {0}}, Preds: []int32{1, 0}},
		{Succ: [][]int32{{1}, nil}, Preds: []int32{0, 2}},
		{Succ: [][]int32{{1}}, Preds: []int32{0, 1}},
	}
	for i, d := range bad {
		if d.Check() == nil {
			t.Errorf("DAG %d: Check accepted %+v", i, d)
		}
	}
}
