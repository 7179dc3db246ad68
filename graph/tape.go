package graph

import (
	"reflect"
	"runtime/debug"
	"unsafe"

	G "gorgonia.org/gorgonia"
)

// The engine's run loop, entered without its OS-thread lock.
//
// gorgonia v0.9.18's TapeMachine.RunAll locks the calling goroutine to its OS thread (for CUDA, which this build
// does not use) and executes the tape in a new goroutine. Each run thus costs two OS-thread hand-offs: the
// locked thread sleeps, another runs the tape, and the locked one must be woken when the tape ends, with its
// core idle meanwhile. Measured with BenchmarkProgramOverhead (graph/N=10): 40–61 µs per run through RunAll
// against 17–18 µs through runTape; a VBKS run with 2 workers kept 1.37 of 2 cores busy through RunAll.
//
// Without CUDA and without a batched BLAS (gorgonia's own cgo BLAS, which this project never installs), RunAll
// is exactly the unexported runall plus no-op flushes (ExternMetadata.DoWork with no batched BLAS; the closure
// queue, filled only under BindDualValues, which Programs never set). runTape calls runall directly, in the
// caller's goroutine: same instructions, same order, same results, and an engine panic is now recovered by
// Program.Run instead of killing the process from a goroutine nobody watches.
//
// The link is checked against one engine version only. A binary whose build information names another
// gorgonia version, or a replaced one, falls back to RunAll. Test binaries carry no dependency list; for them
// the version is gpzoo's go.mod pin, which TestRunTapeIsDirect checks, so whoever upgrades the engine must
// re-check the link first.

//go:linkname tapeRunall gorgonia.org/gorgonia.(*tapeMachine).runall
func tapeRunall(m unsafe.Pointer, errc chan error, done chan struct{})

// linkedEngine is the gorgonia version whose tapeMachine.runall signature tapeRunall was checked against.
const linkedEngine = "v0.9.18"

// tapeDirect reports whether runTape may call runall directly: the binary holds the linked engine version, or
// lists no dependencies (a test binary, built from go.mod's pin).
var tapeDirect = linkedEngineOK()

func linkedEngineOK() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	if len(info.Deps) == 0 {
		return true
	}
	for _, m := range info.Deps {
		if m.Path == "gorgonia.org/gorgonia" {
			// A replaced engine may differ from the version it claims.
			return m.Replace == nil && m.Version == linkedEngine
		}
	}
	return false
}

// directTape reports whether vm can be run through runall: it is the engine's tape machine and has no batched
// BLAS whose calls RunAll would flush.
func directTape(vm G.VM) bool {
	if !tapeDirect || reflect.TypeOf(vm).String() != "*gorgonia.tapeMachine" {
		return false
	}
	w, ok := vm.(interface{ WorkAvailable() <-chan bool })
	return ok && w.WorkAvailable() == nil
}

// runTape executes vm's tape once (vm must have been Reset). direct is directTape(vm), decided at compile time.
func runTape(vm G.VM, direct bool) error {
	if !direct {
		return vm.RunAll()
	}
	// runall reports through channels, once: an error, or completion. Buffered, they never block it.
	errc := make(chan error, 1)
	done := make(chan struct{}, 1)
	tapeRunall(reflect.ValueOf(vm).UnsafePointer(), errc, done)
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}
