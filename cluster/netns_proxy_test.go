package cluster

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lossyProxy is a user-space TCP proxy standing in for a bad network (this kernel has no netem qdisc): every
// accepted connection is forwarded to a dialled upstream, each chunk read in either direction delivered
// Latency later (chunks stay in order and overlap in flight, as on a long link; an end closed or reset by its
// peer still gets what was in flight towards it, then end of file), and a fraction CutFraction of the
// connections is cut — both sides closed at once — at a random moment within CutWithin of its start, losing
// what is in flight. The cut draws come from a seeded generator, one per accepted connection in order.
type lossyProxy struct {
	ln          net.Listener
	dial        func() (net.Conn, error)
	latency     time.Duration
	cutFraction float64
	cutWithin   time.Duration

	rmu sync.Mutex
	rng *rand.Rand

	mu    sync.Mutex
	conns map[*proxyConn]struct{}
	wg    sync.WaitGroup

	accepted, cut, dialFailed atomic.Int64
}

type proxyConn struct {
	down, up net.Conn
	once     sync.Once
	ended    atomic.Int32 // directions that have ended: at 2 the connection closes
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		c.down.Close()
		c.up.Close()
	})
}

// newLossyProxy serves ln until it is closed; dial opens the upstream connection of each accepted one.
func newLossyProxy(ln net.Listener, dial func() (net.Conn, error), latency time.Duration, cutFraction float64,
	cutWithin time.Duration, seed uint64) *lossyProxy {
	p := &lossyProxy{ln: ln, dial: dial, latency: latency, cutFraction: cutFraction, cutWithin: cutWithin,
		rng: rand.New(rand.NewPCG(seed, 0x9e0c5)), conns: map[*proxyConn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p
}

func (p *lossyProxy) serve() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.accepted.Add(1)
		p.rmu.Lock()
		cut := p.rng.Float64() < p.cutFraction
		after := time.Duration(p.rng.Int64N(int64(p.cutWithin) + 1))
		p.rmu.Unlock()
		up, err := p.dial()
		if err != nil { // the server is down (killed, restarting): the client sees a closed connection
			p.dialFailed.Add(1)
			down.Close()
			continue
		}
		c := &proxyConn{down: down, up: up}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		if cut {
			time.AfterFunc(after, func() { p.cutConn(c) })
		}
		p.wg.Add(2)
		go p.pipe(c, down, up)
		go p.pipe(c, up, down)
	}
}

// cutConn closes c (counting it once, if it was still open).
func (p *lossyProxy) cutConn(c *proxyConn) {
	p.mu.Lock()
	_, open := p.conns[c]
	delete(p.conns, c)
	p.mu.Unlock()
	if open {
		p.cut.Add(1)
	}
	c.close()
}

// cutAll cuts every open connection now (the test's deterministic cut on top of the random ones); it returns
// how many it cut.
func (p *lossyProxy) cutAll() int {
	p.mu.Lock()
	cs := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		p.cutConn(c)
	}
	return len(cs)
}

// pipe copies src to dst, each chunk delivered latency after it was read. When src ends (end of file or an
// error) the chunks in flight are still delivered, then dst's write side is shut (its peer reads end of file);
// when dst fails, src's read side is shut. The connection closes when both directions have ended (or at a cut).
func (p *lossyProxy) pipe(c *proxyConn, src, dst net.Conn) {
	defer p.wg.Done()
	type chunk struct {
		b   []byte
		due time.Time
	}
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(p.latency)}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range q {
		if d := time.Until(ch.due); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(ch.b); err != nil {
			if r, ok := src.(interface{ CloseRead() error }); ok {
				_ = r.CloseRead() // the reader's Read returns: this direction is over
			} else {
				c.close()
			}
			break
		}
	}
	for range q { // let the reader end
	}
	if w, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = w.CloseWrite()
	}
	if c.ended.Add(1) == 2 {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.close()
	}
}

// Close stops accepting, closes every connection and waits for the proxy's goroutines.
func (p *lossyProxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	cs := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

var _ io.Closer = (*lossyProxy)(nil)

// The proxy on loopback (no namespaces needed): an echo through it takes at least two latencies (one per
// direction) and returns the bytes sent; with CutFraction 1 every connection is cut within CutWithin, with 0 none.
func TestNetnsLossyProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	newProxy := func(cut float64) *lossyProxy {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := newLossyProxy(ln, func() (net.Conn, error) { return net.Dial("tcp", echo.Addr().String()) }, 20*time.Millisecond, cut, 100*time.Millisecond, 5)
		t.Cleanup(func() { p.Close() })
		return p
	}
	const lat = 20 * time.Millisecond

	p := newProxy(0)
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := []byte("gradient of shard 0 at version 7")
	for range 3 {
		t0 := time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		if rt := time.Since(t0); rt < 2*lat {
			t.Errorf("round trip %v through the proxy, want ≥ %v", rt, 2*lat)
		}
		if string(got) != string(msg) {
			t.Errorf("echo %q, want %q", got, msg)
		}
	}
	time.Sleep(150 * time.Millisecond) // past CutWithin: CutFraction 0 cut nothing
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, len(msg))); err != nil {
		t.Errorf("an uncut connection failed: %v", err)
	}
	if n := p.cut.Load(); n != 0 {
		t.Errorf("%d connections cut at fraction 0", n)
	}
	if n := p.cutAll(); n != 1 {
		t.Errorf("cutAll cut %d connections, want 1", n)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read after cutAll: %v, want the connection closed", err)
	}

	// An upstream that says goodbye and closes at once: the goodbye, in flight for a latency, still arrives.
	bye, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer bye.Close()
	go func() {
		for {
			c, err := bye.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("done"))
			c.Close()
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pb := newLossyProxy(ln, func() (net.Conn, error) { return net.Dial("tcp", bye.Addr().String()) }, lat, 0, 0, 5)
	defer pb.Close()
	cb, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	cb.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := io.ReadAll(cb); string(got) != "done" || err != nil {
		t.Errorf("from an upstream that closed: %q, %v; want \"done\" then end of file", got, err)
	}

	p = newProxy(1)
	for i := range 5 {
		c, err := net.Dial("tcp", p.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("connection %d at fraction 1: read %v, want it cut", i, err)
		}
		c.Close()
	}
	if n := p.cut.Load(); n != 5 || p.accepted.Load() != 5 {
		t.Errorf("fraction 1: %d of %d connections cut, want 5 of 5", n, p.accepted.Load())
	}
}
