package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every piece runs exactly once, for every GOMAXPROCS and number of pieces, with the workers awake or asleep.
func TestDoRunsEveryPieceOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 8} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
				for _, pause := range []time.Duration{0, 3 * Spin} { // workers spinning, then asleep
					time.Sleep(pause)
					counts := make([]atomic.Int32, n)
					Do(n, func(i int) { counts[i].Add(1) })
					for i := range counts {
						if c := counts[i].Load(); c != 1 {
							t.Fatalf("GOMAXPROCS %d, n %d: piece %d ran %d times", procs, n, i, c)
						}
					}
				}
			}
		}()
	}
}

// Do returns only after every piece has returned, including pieces still running on workers.
func TestDoWaitsForSlowPieces(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var finished atomic.Int32
	Do(4, func(i int) {
		if i != 0 {
			time.Sleep(time.Duration(i) * 2 * Spin)
		}
		finished.Add(1)
	})
	if f := finished.Load(); f != 4 {
		t.Fatalf("Do returned with %d of 4 pieces finished", f)
	}
}

// Calls from inside pieces and from several goroutines at once complete (the busy pool is bypassed, not waited
// for).
func TestDoNestedAndConcurrent(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var wg sync.WaitGroup
	var total atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 200; r++ {
				Do(3, func(int) {
					Do(5, func(int) { total.Add(1) })
				})
			}
		}()
	}
	wg.Wait()
	if got, want := total.Load(), int64(4*200*3*5); got != want {
		t.Fatalf("%d pieces ran, want %d", got, want)
	}
}

// BenchmarkDo times a call of two 10 µs pieces, the size of a training step's small parallel calls: the pooled
// workers against a goroutine started per call.
func BenchmarkDo(b *testing.B) {
	work := func() {
		s := 0.0
		for i := 0; i < 10000; i++ {
			s += float64(i)
		}
		sink.Add(int64(s))
	}
	b.Run("pool", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Do(2, func(int) { work() })
		}
	})
	b.Run("go", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); work() }()
			work()
			wg.Wait()
		}
	})
	b.Run("serial", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			work()
			work()
		}
	})
}

var sink atomic.Int64
