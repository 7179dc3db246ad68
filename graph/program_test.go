package graph_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/graph"
)

// TestClosedProgramIsCollected requires a compiled, run and closed Program to be garbage collected. The engine's
// machine carries a finalizer, and Go never collects a reference cycle through a finalized object: a Program
// reachable from its own machine (a read target inside the Program) leaked its graph and every buffer, about
// 1 MB per L-BFGS polish in VBKS, until a 144-kernel run filled 24 GB.
func TestClosedProgramIsCollected(t *testing.T) {
	p := mustParam(t, "p", []float64{1, 2, 3, 4}, nil, 2, 2)
	kinds := map[string]func(g *graph.Graph) (*graph.Program, error){
		"loss, output and monitor": func(g *graph.Graph) (*graph.Program, error) {
			x := g.Param(p)
			sq := g.Square(x)
			g.Monitor("sq", sq)
			return g.Compile(g.Sum(sq), map[string]*graph.Node{"x": x})
		},
		"forward": func(g *graph.Graph) (*graph.Program, error) {
			return g.CompileForward(map[string]*graph.Node{"s": g.Sum(g.Param(p))})
		},
	}
	for name, compile := range kinds {
		var collected atomic.Int32
		const programs = 5
		for range programs {
			prog, err := compile(graph.New(graph.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			if err := prog.Close(); err != nil {
				t.Fatal(err)
			}
			runtime.AddCleanup(prog, func(c *atomic.Int32) { c.Add(1) }, &collected)
		}
		// The machines' finalizers run in one collection and free the Programs for a later one; cleanups run
		// on their own goroutine.
		for i := 0; i < 100 && collected.Load() < programs; i++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		if got := collected.Load(); got != programs {
			t.Errorf("%s: %d of %d closed Programs were collected", name, got, programs)
		}
	}
}
