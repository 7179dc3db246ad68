package graph

import (
	"errors"
	"sync"
)

// ErrCacheClosed is returned by ProgramCache.Use after Close.
var ErrCacheClosed = errors.New("graph: program cache closed")

// DefaultIdlePrograms is how many idle Programs a ProgramCache keeps per key when NewProgramCache is given 0.
const DefaultIdlePrograms = 8

// ProgramCache keeps compiled Programs for reuse across calls, so that a prediction served many times compiles
// its graph once per shape instead of at every call. Programs are checked out one caller at a time (a Program
// is not safe for concurrent use): concurrent callers of the same key get distinct Programs, each compiled on
// first need, and at most maxIdle of them are kept idle per key (the rest are closed when returned).
//
// A Program reads its Params' raw values at every run, so a cached Program follows parameter updates; what it
// does not follow is a change of structure (shapes) or of the values set once at compilation (a model's
// training data, for example): the owner of a cache must key such values into the key, or not change them.
// ProgramCache is safe for concurrent use. The nil *ProgramCache caches nothing: Use compiles, uses and closes.
type ProgramCache struct {
	mu      sync.Mutex
	idle    map[string][]cached
	maxIdle int
	closed  bool
}

type cached struct {
	p   *Program
	aux any
}

// NewProgramCache returns an empty cache keeping at most maxIdle idle Programs per key (0:
// DefaultIdlePrograms).
func NewProgramCache(maxIdle int) *ProgramCache {
	if maxIdle <= 0 {
		maxIdle = DefaultIdlePrograms
	}
	return &ProgramCache{idle: map[string][]cached{}, maxIdle: maxIdle}
}

// Use checks out a Program for key (an idle one, or a new one from build, which may also return an auxiliary
// value kept with it, such as a switchable random source its ops draw from), calls use with it and returns it to
// the cache. key must identify everything build bakes into the Program (its shapes, its fixed inputs). A
// Program whose use returned an error is closed rather than kept (its state is unknown).
func (c *ProgramCache) Use(key string, build func() (*Program, any, error), use func(p *Program, aux any) error) error {
	if c == nil {
		p, aux, err := build()
		if err != nil {
			return err
		}
		defer p.Close()
		return use(p, aux)
	}
	e, ok, err := c.get(key)
	if err != nil {
		return err
	}
	if !ok {
		if e.p, e.aux, err = build(); err != nil {
			return err
		}
	}
	if err := use(e.p, e.aux); err != nil {
		e.p.Close()
		return err
	}
	c.put(key, e)
	return nil
}

func (c *ProgramCache) get(key string) (cached, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return cached{}, false, ErrCacheClosed
	}
	l := c.idle[key]
	if len(l) == 0 {
		return cached{}, false, nil
	}
	e := l[len(l)-1]
	c.idle[key] = l[:len(l)-1]
	return e, true, nil
}

func (c *ProgramCache) put(key string, e cached) {
	c.mu.Lock()
	if c.closed || len(c.idle[key]) >= c.maxIdle {
		c.mu.Unlock()
		e.p.Close()
		return
	}
	c.idle[key] = append(c.idle[key], e)
	c.mu.Unlock()
}

// Len returns the number of idle Programs held.
func (c *ProgramCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.idle {
		n += len(l)
	}
	return n
}

// Close closes every idle Program; Programs checked out are closed when returned. Use fails with
// ErrCacheClosed afterwards.
func (c *ProgramCache) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	for _, l := range idle {
		for _, e := range l {
			e.p.Close()
		}
	}
}
