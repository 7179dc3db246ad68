// Package cpusel chooses, among implementations of one routine that this CPU can run, the one in use: the
// best at start-up unless the environment variable GPZOO_BLAS names another, and any of them on request (tests
// and benchmarks). ops/internal/blas's micro-kernels and ops/internal/vmath's Exp kernels share it, so one
// switch forces both. It imports nothing of the module.
package cpusel

import (
	"os"
	"slices"
	"strings"
	"sync/atomic"
)

// Env is the environment variable read at start-up that forces an implementation by name (generic, avx2,
// avx512; the case does not matter). An unknown value, or one this CPU does not run, leaves the best.
const Env = "GPZOO_BLAS"

// Selector holds the implementations of one routine this CPU runs, by name, and the one in use. Active is one
// atomic load, cheap enough for every call of a hot routine.
type Selector[K any] struct {
	names  []string      // the available names, best first
	impls  map[string]*K // by name
	active atomic.Pointer[K]
}

// New returns a Selector over the implementations in avail (by name) whose names appear in order, best first
// (names absent from avail are skipped, avail's names absent from order are ignored). The one in use is the one
// Env names if it is available, else the best. It panics if none is available.
func New[K any](order []string, avail map[string]*K) *Selector[K] {
	s := &Selector[K]{impls: map[string]*K{}}
	for _, n := range order {
		if k, ok := avail[n]; ok && k != nil {
			s.names = append(s.names, n)
			s.impls[n] = k
		}
	}
	if len(s.names) == 0 {
		panic("cpusel: no implementation available")
	}
	s.active.Store(s.impls[Choice(s.names)])
	return s
}

// Choice returns the name chosen among names (the available ones, best first): the one Env names, in any case,
// if it is there, else the first.
func Choice(names []string) string {
	if env := strings.ToLower(os.Getenv(Env)); slices.Contains(names, env) {
		return env
	}
	return names[0]
}

// Active returns the implementation in use.
func (s *Selector[K]) Active() *K { return s.active.Load() }

// Names lists the available implementations, best first.
func (s *Selector[K]) Names() []string { return append([]string(nil), s.names...) }

// Set switches to the named implementation and reports whether it is available (otherwise nothing changes).
// Callers of Active already running keep the implementation they loaded.
func (s *Selector[K]) Set(name string) bool {
	k, ok := s.impls[name]
	if ok {
		s.active.Store(k)
	}
	return ok
}
