package graph_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
)

// TestProgramCache: a key's Program is compiled once and reused (it reads its Params at every run, so a changed
// Param shows), concurrent users get distinct Programs, at most maxIdle are kept, a failed use discards its
// Program, Close ends the cache, and the nil cache compiles for every use.
func TestProgramCache(t *testing.T) {
	p := mustParam(t, "p", []float64{1, 2, 3, 4}, nil, 2, 2)
	var builds atomic.Int32
	build := func() (*graph.Program, any, error) {
		builds.Add(1)
		g := graph.New(graph.Options{})
		prog, err := g.CompileForward(map[string]*graph.Node{"s": g.Sum(g.Add(g.Param(p), g.Input("x", 2, 2)))})
		return prog, "aux", err
	}
	sum := func(c *graph.ProgramCache, x float64) (float64, error) {
		var s float64
		err := c.Use("k", build, func(prog *graph.Program, aux any) error {
			if aux != "aux" {
				t.Errorf("aux %v", aux)
			}
			in := prog.InputData("x")
			for i := range in {
				in[i] = x
			}
			if err := prog.Run(); err != nil {
				return err
			}
			s = prog.Output("s")[0]
			return nil
		})
		return s, err
	}
	c := graph.NewProgramCache(2)
	for i, want := range []float64{10, 14} {
		got, err := sum(c, float64(i))
		if err != nil || got != want {
			t.Fatalf("use %d: %v, %v; want %v", i, got, err, want)
		}
	}
	if builds.Load() != 1 || c.Len() != 1 {
		t.Fatalf("%d builds, %d idle; want 1, 1", builds.Load(), c.Len())
	}
	p.Raw()[0] = 101 // a cached Program reads its Params at every run
	if got, _ := sum(c, 0); got != 110 {
		t.Fatalf("after a Param change: %v, want 110", got)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 6 {
		wg.Go(func() {
			<-start
			if _, err := sum(c, 1); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if c.Len() > 2 {
		t.Fatalf("%d idle Programs, want at most 2", c.Len())
	}
	before := c.Len()
	boom := errors.New("boom")
	if err := c.Use("k", build, func(*graph.Program, any) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("use error %v", err)
	}
	if c.Len() != before-1 && before > 0 {
		t.Fatalf("a failed use kept its Program: %d idle, had %d", c.Len(), before)
	}
	c.Close()
	if _, err := sum(c, 0); !errors.Is(err, graph.ErrCacheClosed) {
		t.Fatalf("after Close: %v, want ErrCacheClosed", err)
	}
	builds.Store(0)
	var none *graph.ProgramCache
	for range 2 {
		if _, err := sum(none, 0); err != nil {
			t.Fatal(err)
		}
	}
	if builds.Load() != 2 {
		t.Fatalf("the nil cache built %d times, want 2", builds.Load())
	}
}
