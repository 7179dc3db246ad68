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

// Output copies the last Run's value on first read; OutputView reads it in the executor's memory. Both give the
// same values after every Run, and a caller's writes to Output's copy do not reach the view.
func TestOutputAndOutputView(t *testing.T) {
	g := graph.New(graph.Options{})
	x := g.Input("x", 2, 3)
	prog, err := g.CompileForward(map[string]*graph.Node{"y": g.Scale(x, 2), "s": g.Sum(x)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	for run, in := range [][]float64{{1, 2, 3, 4, 5, 6}, {-1, 0, 1, 2, 3, 4}} {
		copy(prog.InputData("x"), in)
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		view := prog.OutputView("y")
		got := prog.Output("y")
		for i, v := range in {
			if got[i] != 2*v || view[i] != 2*v {
				t.Fatalf("run %d: Output %v, OutputView %v, want twice %v", run, got, view, in)
			}
		}
		got[0] = 1e9
		if prog.OutputView("y")[0] == 1e9 || prog.Output("y")[0] != 1e9 {
			t.Errorf("run %d: the copy and the view share memory", run)
		}
		sum := 0.0
		for _, v := range in {
			sum += v
		}
		if s := prog.OutputView("s"); len(s) != 1 || s[0] != sum {
			t.Errorf("run %d: scalar output %v, want %v", run, s, sum)
		}
	}
	if prog.Output("none") != nil || prog.OutputView("none") != nil {
		t.Error("an unknown output has a value")
	}
}
