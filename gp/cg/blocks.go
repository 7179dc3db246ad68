package cg

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Blocks is the kernel matrix K(X, X) of any kernel of package gp (a registered family, a sum or product, a kernel
// on chosen columns: any kernel expression) seen through products, an ops.KernelOperator: K is computed by
// square blocks of rows through the kernel's own graph — its fused covariance ops (ops.CovMatrix) forward, and
// their backward passes for the gradients, ∂/∂θ Σ_ab U_ab K_ab of a block being the covariance op's hyperparameter
// gradient for the upstream gradient U. A diagonal block is K(X_i, X_i) with one node (so that a white-noise
// term adds its variance there only), an off-diagonal one K(X_i, X_j) with two.
//
// Products either keep K whole, when its n² values fit Options.Memory (computed once per binding of the
// hyperparameters, then one matrix product per call), or recompute its blocks at every product, the upper
// triangle only (K_ij and K_ijᵀ = K_ji from one block): then nothing of size n² is stored, and the memory is
// O(n·(d + columns)) plus a few blocks per core. The blocks run on the cores' worker pool (ops.Parallel) in a fixed
// schedule, and sums over blocks are added in a fixed order, so every GOMAXPROCS gives the same bits.
type Blocks struct {
	kern   gp.Kernel // a private copy, rebuilt from the kernel's Spec: its Params take the bound values
	params []*graph.Param
	sizes  []int
	o      BlocksOptions

	x       []float64
	n, d    int
	bound   []float64 // the bound hyperparameters' raw values, flattened
	nb      int       // blocks
	keep    bool      // K kept whole
	dense   []float64 // K when kept, for the binding denseOK says
	denseOK bool

	mu    sync.Mutex
	progs map[progKey][]*graph.Program // idle compiled programs per shape and kind
}

// BlocksOptions configures Blocks. Zero values mean the defaults.
type BlocksOptions struct {
	// Block is the number of rows of a block (default DefaultBlock).
	Block int
	// Memory is the largest size in bytes of K kept whole (n²·8 bytes; default DefaultMemory; negative: never
	// kept).
	Memory int64
	// Strips computes every product and gradient by full row strips (K(X_i, X_j) for every block j of row block
	// i, in order), never keeping K: the arithmetic of a cluster's workers (MulRows, BilinearGradRows), so that a
	// single process gives their bits, at twice the kernel evaluations of the upper triangle.
	Strips bool
}

// DefaultBlock is the default number of rows of a kernel block: 512×512 entries are 2 MiB, a few blocks per core
// stay in the caches' reach, and a block's graph run costs far more than its overhead.
const DefaultBlock = 512

func (o BlocksOptions) withDefaults() BlocksOptions {
	if o.Block <= 0 {
		o.Block = DefaultBlock
	}
	if o.Memory == 0 {
		o.Memory = DefaultMemory
	}
	return o
}

// Keeps reports whether K of n rows is kept whole under o.
func (o BlocksOptions) Keeps(n int) bool {
	o = o.withDefaults()
	return !o.Strips && o.Memory > 0 && int64(n)*int64(n)*8 <= o.Memory
}

// NewBlocks returns the blocks of kernel k. The kernel must describe itself (gp.Describer; every kernel of
// package gp and every registered family does): Blocks computes on its own copy, whose hyperparameters are set
// by Bind.
func NewBlocks(k gp.Kernel, o BlocksOptions) (*Blocks, error) {
	if k == nil {
		return nil, fmt.Errorf("gp/cg: NewBlocks: nil kernel")
	}
	desc, ok := k.(gp.Describer)
	if !ok {
		return nil, fmt.Errorf("gp/cg: kernel %T cannot describe itself (gp.Describer), so it cannot be copied", k)
	}
	spec, err := desc.Spec()
	if err != nil {
		return nil, fmt.Errorf("gp/cg: %w", err)
	}
	built, err := gp.BuildSpec(spec, gp.BuildOptions{})
	if err != nil {
		return nil, fmt.Errorf("gp/cg: copying the kernel: %w", err)
	}
	kern, ok := built.(gp.Kernel)
	if !ok {
		return nil, fmt.Errorf("gp/cg: the kernel's spec builds a %T", built)
	}
	ps, orig := kern.Params(), k.Params()
	if len(ps) != len(orig) {
		return nil, fmt.Errorf("gp/cg: the kernel's copy has %d hyperparameters, the kernel %d (is a hyperparameter shared?)", len(ps), len(orig))
	}
	b := &Blocks{kern: kern, params: ps, o: o.withDefaults(), progs: map[progKey][]*graph.Program{}}
	for i, p := range ps {
		if p.Size() != orig[i].Size() || p.Name() != orig[i].Name() {
			return nil, fmt.Errorf("gp/cg: the kernel's copy has hyperparameter %d %s, the kernel %s", i, p, orig[i])
		}
		if err := p.SetRaw(orig[i].Raw()); err != nil {
			return nil, err
		}
		p.SetTrainable(true)
		b.sizes = append(b.sizes, p.Size())
	}
	return b, nil
}

// HyperSizes returns the sizes of the kernel's hyperparameters (their raw values), in the order of its Params.
func (b *Blocks) HyperSizes() []int { return append([]int(nil), b.sizes...) }

// InputDim returns the kernel's input dimension D.
func (b *Blocks) InputDim() int { return b.kern.InputDim() }

// Bind fixes the inputs x [n,d] (not copied) and the raw hyperparameters for the calls that follow. Binding the
// same inputs (the same slice) and values again keeps a kept K.
func (b *Blocks) Bind(x []float64, n, d int, hyper [][]float64) error {
	if d != b.kern.InputDim() || n <= 0 || len(x) != n*d {
		return &ops.ShapeError{Op: "gp/cg.Blocks", Want: fmt.Sprintf("inputs [n,%d]", b.kern.InputDim()), Got: fmt.Sprintf("%d values for %d×%d", len(x), n, d)}
	}
	if len(hyper) != len(b.params) {
		return &ops.ShapeError{Op: "gp/cg.Blocks", Want: fmt.Sprintf("%d hyperparameters", len(b.params)), Got: fmt.Sprint(len(hyper))}
	}
	var flat []float64
	for _, h := range hyper {
		flat = append(flat, h...)
	}
	if b.x != nil && n == b.n && d == b.d && &x[0] == &b.x[0] && slices.Equal(flat, b.bound) {
		return nil
	}
	for i, p := range b.params {
		if err := p.SetRaw(hyper[i]); err != nil {
			return fmt.Errorf("gp/cg.Blocks: %w", err)
		}
	}
	b.x, b.n, b.d, b.bound = x, n, d, flat
	b.nb = (n + b.o.Block - 1) / b.o.Block
	b.keep = b.o.Keeps(n)
	b.denseOK = false
	if !b.keep {
		b.dense = nil
	}
	return nil
}

// Kept reports whether K is kept whole (for the rows last bound).
func (b *Blocks) Kept() bool { return b.keep }

// Describe says how the products run, for run summaries.
func (b *Blocks) Describe() string {
	mib := float64(b.n) * float64(b.n) * 8 / (1 << 20)
	if b.keep {
		return fmt.Sprintf("kernel matrix kept (%.0f MiB ≤ %.0f MiB)", mib, float64(b.o.Memory)/(1<<20))
	}
	if b.o.Strips {
		return fmt.Sprintf("kernel recomputed by %d-row strips at every product", b.o.Block)
	}
	return fmt.Sprintf("kernel recomputed by %d-row blocks at every product (K would take %.0f MiB > %.0f MiB)", b.o.Block, mib, float64(b.o.Memory)/(1<<20))
}

// NumBlocks returns the number of row blocks of the bound inputs; BlockRows the rows of block i.
func (b *Blocks) NumBlocks() int { return b.nb }

// BlockRows returns the rows [lo, hi) of block i.
func (b *Blocks) BlockRows(i int) (lo, hi int) { return i * b.o.Block, min(b.n, (i+1)*b.o.Block) }

func (b *Blocks) rows(lo, hi int) []float64 { return b.x[lo*b.d : hi*b.d] }

// ---------------------------------------------------------------------------------------------------------------
// Programs.

type progKind int

const (
	kindCross     progKind = iota // K(a [ra,d], b [rb,d]), two nodes
	kindSame                      // K(a, a), one node
	kindDiag                      // diag K(a, a)
	kindCrossGrad                 // ∂/∂θ Σ u ⊙ K(a, b)
	kindSameGrad                  // ∂/∂θ Σ u ⊙ K(a, a)
)

type progKey struct {
	kind   progKind
	ra, rb int
}

// program checks out a compiled program of the kind and shape (compiling one when none is idle); give it back
// with release.
func (b *Blocks) program(k progKey) (*graph.Program, error) {
	b.mu.Lock()
	if ps := b.progs[k]; len(ps) > 0 {
		p := ps[len(ps)-1]
		b.progs[k] = ps[:len(ps)-1]
		b.mu.Unlock()
		return p, nil
	}
	b.mu.Unlock()
	g := graph.New(graph.Options{})
	d := b.kern.InputDim()
	a := g.Input("a", k.ra, d)
	outs := map[string]*graph.Node{}
	var loss *graph.Node
	switch k.kind {
	case kindCross:
		outs["k"] = b.kern.K(a, g.Input("b", k.rb, d))
	case kindSame:
		outs["k"] = b.kern.K(a, a)
	case kindDiag:
		outs["k"] = b.kern.KDiag(a)
	case kindCrossGrad, kindSameGrad:
		other := a
		if k.kind == kindCrossGrad {
			other = g.Input("b", k.rb, d)
		}
		loss = g.Sum(g.Mul(g.Input("u", k.ra, k.rb), b.kern.K(a, other)))
		// Every hyperparameter reaches the loss, with weight 0 when the block does not depend on it (a white
		// term's variance off the diagonal), so that the program differentiates them all.
		for _, p := range b.params {
			loss = g.Add(loss, g.Scale(g.Sum(g.Param(p)), 0))
		}
	}
	var p *graph.Program
	var err error
	if loss != nil {
		p, err = g.Compile(loss, nil)
	} else {
		p, err = g.CompileForward(outs)
	}
	if err != nil {
		return nil, fmt.Errorf("gp/cg: compiling the kernel's %d×%d block: %w", k.ra, k.rb, err)
	}
	return p, nil
}

func (b *Blocks) release(k progKey, p *graph.Program) {
	b.mu.Lock()
	b.progs[k] = append(b.progs[k], p)
	b.mu.Unlock()
}

// loaded takes a program for K(xa, xb) of kind same (xb nil: K(xa, xa) with one node) or cross and copies the
// inputs into it; the caller releases it with the returned key.
func (b *Blocks) loaded(same, cross progKind, xa, xb []float64) (*graph.Program, progKey, error) {
	ra := len(xa) / b.d
	key := progKey{kind: same, ra: ra, rb: ra}
	if xb != nil {
		key = progKey{kind: cross, ra: ra, rb: len(xb) / b.d}
	}
	p, err := b.program(key)
	if err != nil {
		return nil, key, err
	}
	copy(p.InputData("a"), xa)
	if xb != nil {
		copy(p.InputData("b"), xb)
	}
	return p, key, nil
}

// block runs K(xa, xb) (xb nil: K(xa, xa) with one node) and hands its output [ra,rb] to use.
func (b *Blocks) block(xa, xb []float64, use func(k []float64) error) error {
	p, key, err := b.loaded(kindSame, kindCross, xa, xb)
	if err != nil {
		return err
	}
	defer b.release(key, p)
	if err := p.Run(); err != nil {
		return fmt.Errorf("gp/cg: kernel block: %w", err)
	}
	return use(p.OutputView("k")) // read before the program is released
}

// blockGrad adds ∂/∂θ Σ u ⊙ K(xa, xb) (xb nil: K(xa, xa)) for u [ra,rb] to dst (one slice per hyperparameter).
func (b *Blocks) blockGrad(xa, xb, u []float64, dst [][]float64) error {
	p, key, err := b.loaded(kindSameGrad, kindCrossGrad, xa, xb)
	if err != nil {
		return err
	}
	defer b.release(key, p)
	copy(p.InputData("u"), u)
	if err := p.Run(); err != nil {
		return fmt.Errorf("gp/cg: kernel block gradient: %w", err)
	}
	for j, q := range b.params {
		for e, v := range p.Grad(q) {
			dst[j][e] += v
		}
	}
	return nil
}

// ---------------------------------------------------------------------------------------------------------------
// Schedules.

// rounds returns the pairs (i < j) of nb blocks in rounds in which no block appears twice (the circle method of
// round-robin tournaments): the blocks of one round can be computed concurrently while each adds into its two row
// blocks, and every row block receives its terms in the same order for every GOMAXPROCS.
func rounds(nb int) [][][2]int {
	m := nb + nb%2 // a dummy block when odd
	var out [][][2]int
	for r := 0; r < m-1; r++ {
		var round [][2]int
		add := func(i, j int) {
			if i >= nb || j >= nb {
				return
			}
			round = append(round, [2]int{min(i, j), max(i, j)})
		}
		add(r, m-1)
		for k := 1; k < m/2; k++ {
			add((r+k)%(m-1), (r-k+m-1)%(m-1))
		}
		if len(round) > 0 {
			out = append(out, round)
		}
	}
	return out
}

// firstErr returns the first non-nil error of errs (in order).
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// gemm computes c = beta·c + op(a)·bm for a [ar,ac] (transposed when ta), bm [.,cols], all row-major.
func gemm(ta bool, a []float64, ar, ac int, bm []float64, cols int, beta float64, c []float64) {
	t, rows, inner := blas.NoTrans, ar, ac
	if ta {
		t, rows, inner = blas.Trans, ac, ar
	}
	blas64.Gemm(t, blas.NoTrans, 1, blas64.General{Rows: ar, Cols: ac, Stride: ac, Data: a},
		blas64.General{Rows: inner, Cols: cols, Stride: cols, Data: bm}, beta,
		blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: c})
}

// ---------------------------------------------------------------------------------------------------------------
// ops.KernelOperator.

// Mul writes K·v into out for v [n,c].
func (b *Blocks) Mul(v []float64, c int, out []float64) error {
	n := b.n
	if len(v) != n*c || len(out) != n*c || c <= 0 {
		return &ops.ShapeError{Op: "gp/cg.Blocks.Mul", Want: fmt.Sprintf("blocks of %d×c values", n), Got: fmt.Sprintf("%d and %d", len(v), len(out))}
	}
	if b.keep {
		if err := b.fillDense(); err != nil {
			return err
		}
		gemm(false, b.dense, n, n, v, c, 0, out)
		return nil
	}
	if b.o.Strips {
		return b.MulRows(0, n, v, c, out)
	}
	errs := make([]error, b.nb)
	ops.Parallel(b.nb, func(i int) {
		lo, hi := b.BlockRows(i)
		errs[i] = b.block(b.rows(lo, hi), nil, func(k []float64) error {
			gemm(false, k, hi-lo, hi-lo, v[lo*c:hi*c], c, 0, out[lo*c:hi*c])
			return nil
		})
	})
	if err := firstErr(errs); err != nil {
		return err
	}
	for _, round := range rounds(b.nb) {
		errs = errs[:len(round)]
		ops.Parallel(len(round), func(t int) {
			i, j := round[t][0], round[t][1]
			li, hi := b.BlockRows(i)
			lj, hj := b.BlockRows(j)
			errs[t] = b.block(b.rows(li, hi), b.rows(lj, hj), func(k []float64) error {
				gemm(false, k, hi-li, hj-lj, v[lj*c:hj*c], c, 1, out[li*c:hi*c])
				gemm(true, k, hi-li, hj-lj, v[li*c:hi*c], c, 1, out[lj*c:hj*c])
				return nil
			})
		})
		if err := firstErr(errs); err != nil {
			return err
		}
	}
	return nil
}

// fillDense computes K whole for the current binding (kept mode).
func (b *Blocks) fillDense() error {
	if b.denseOK {
		return nil
	}
	if len(b.dense) != b.n*b.n {
		b.dense = make([]float64, b.n*b.n)
	}
	if err := b.fillInto(b.dense); err != nil {
		return err
	}
	b.denseOK = true
	return nil
}

// Dense writes K whole [n,n] (row-major) into out for the current binding: a copy of the kept matrix, or computed
// by blocks.
func (b *Blocks) Dense(out []float64) error {
	if len(out) != b.n*b.n || b.n == 0 {
		return &ops.ShapeError{Op: "gp/cg.Blocks.Dense", Want: fmt.Sprintf("%d×%d values (bound)", b.n, b.n), Got: fmt.Sprint(len(out))}
	}
	if b.keep {
		if err := b.fillDense(); err != nil {
			return err
		}
		copy(out, b.dense)
		return nil
	}
	return b.fillInto(out)
}

// fillInto computes K whole into dst [n,n] from its upper triangle's blocks.
func (b *Blocks) fillInto(dst []float64) error {
	n := b.n
	type pair struct{ i, j int }
	var all []pair
	for i := 0; i < b.nb; i++ {
		for j := i; j < b.nb; j++ {
			all = append(all, pair{i, j})
		}
	}
	errs := make([]error, len(all))
	ops.Parallel(len(all), func(t int) {
		i, j := all[t].i, all[t].j
		li, hi := b.BlockRows(i)
		lj, hj := b.BlockRows(j)
		var xb []float64
		if i != j {
			xb = b.rows(lj, hj)
		}
		errs[t] = b.block(b.rows(li, hi), xb, func(k []float64) error {
			w := hj - lj
			for r := li; r < hi; r++ {
				row := k[(r-li)*w : (r-li+1)*w]
				copy(dst[r*n+lj:r*n+hj], row)
				if i != j {
					for s, val := range row {
						dst[(lj+s)*n+r] = val
					}
				}
			}
			return nil
		})
	})
	return firstErr(errs)
}

// Diag writes diag K into out [n].
func (b *Blocks) Diag(out []float64) error {
	if len(out) != b.n {
		return &ops.ShapeError{Op: "gp/cg.Blocks.Diag", Want: fmt.Sprint(b.n, " values"), Got: fmt.Sprint(len(out))}
	}
	errs := make([]error, b.nb)
	ops.Parallel(b.nb, func(i int) {
		lo, hi := b.BlockRows(i)
		key := progKey{kind: kindDiag, ra: hi - lo, rb: 1}
		p, err := b.program(key)
		if err != nil {
			errs[i] = err
			return
		}
		defer b.release(key, p)
		copy(p.InputData("a"), b.rows(lo, hi))
		if err := p.Run(); err != nil {
			errs[i] = fmt.Errorf("gp/cg: kernel diagonal: %w", err)
			return
		}
		copy(out[lo:hi], p.OutputView("k"))
	})
	return firstErr(errs)
}

// Row writes row i of K into out [n].
func (b *Blocks) Row(i int, out []float64) error {
	if i < 0 || i >= b.n || len(out) != b.n {
		return &ops.ShapeError{Op: "gp/cg.Blocks.Row", Want: fmt.Sprintf("row in [0, %d) into %d values", b.n, b.n), Got: fmt.Sprintf("row %d into %d", i, len(out))}
	}
	xi := b.rows(i, i+1)
	errs := make([]error, b.nb+1)
	ops.Parallel(b.nb, func(j int) {
		lo, hi := b.BlockRows(j)
		errs[j] = b.block(xi, b.rows(lo, hi), func(k []float64) error {
			copy(out[lo:hi], k)
			return nil
		})
	})
	// K_ii as K(x_i, x_i) with one node: a white-noise term's variance is on the diagonal only.
	errs[b.nb] = b.block(xi, nil, func(k []float64) error {
		out[i] = k[0]
		return nil
	})
	return firstErr(errs)
}

// newGrads returns zeroed gradient slices, one per hyperparameter.
func (b *Blocks) newGrads() [][]float64 {
	g := make([][]float64, len(b.sizes))
	for j, s := range b.sizes {
		g[j] = make([]float64, s)
	}
	return g
}

func addGrads(dst, src [][]float64) {
	for j, s := range src {
		for e, v := range s {
			dst[j][e] += v
		}
	}
}

// BilinearGrad adds Σ_ab (A·Bᵀ)_ab ∂K_ab/∂θ to dst for every raw hyperparameter value θ, a and bm [n,c]: per block
// of the upper triangle, with the upstream gradient U_ij + U_jiᵀ = A_i B_jᵀ + B_i A_jᵀ (K_ji = K_ijᵀ); the
// blocks' sums are added in block order.
func (b *Blocks) BilinearGrad(a, bm []float64, c int, dst [][]float64) error {
	n := b.n
	if c <= 0 || len(a) != n*c || len(bm) != n*c || len(dst) != len(b.sizes) {
		return &ops.ShapeError{Op: "gp/cg.Blocks.BilinearGrad", Want: fmt.Sprintf("blocks of %d×c values", n), Got: fmt.Sprintf("%d and %d", len(a), len(bm))}
	}
	if b.o.Strips {
		return b.BilinearGradRows(0, n, a, bm, c, dst)
	}
	type pair struct{ i, j int }
	var all []pair
	for i := 0; i < b.nb; i++ {
		for j := i; j < b.nb; j++ {
			all = append(all, pair{i, j})
		}
	}
	parts := make([][][]float64, len(all))
	errs := make([]error, len(all))
	ops.Parallel(len(all), func(t int) {
		i, j := all[t].i, all[t].j
		li, hi := b.BlockRows(i)
		lj, hj := b.BlockRows(j)
		ri, rj := hi-li, hj-lj
		u := make([]float64, ri*rj)
		ab := func(x, y []float64, beta float64) { // u = beta·u + X_i Y_jᵀ
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, blas64.General{Rows: ri, Cols: c, Stride: c, Data: x[li*c : hi*c]},
				blas64.General{Rows: rj, Cols: c, Stride: c, Data: y[lj*c : hj*c]}, beta, blas64.General{Rows: ri, Cols: rj, Stride: rj, Data: u})
		}
		ab(a, bm, 0)
		var xb []float64
		if i != j {
			ab(bm, a, 1)
			xb = b.rows(lj, hj)
		}
		parts[t] = b.newGrads()
		errs[t] = b.blockGrad(b.rows(li, hi), xb, u, parts[t])
	})
	if err := firstErr(errs); err != nil {
		return err
	}
	for _, p := range parts {
		addGrads(dst, p)
	}
	return nil
}

// PivotGrad adds Σ_{i,p} U_ip ∂K[i, piv_p]/∂θ + Σ_{q,p} W_qp ∂K[piv_q, piv_p]/∂θ to dst for u [n,k] and w [k,k]: the
// rows of U at the pivots join W (so that K[piv, piv] is computed with one node, as Row gives it), the other rows
// go through K(X_i, X_piv) by row blocks.
func (b *Blocks) PivotGrad(piv []int, u, w []float64, dst [][]float64) error {
	n, k := b.n, len(piv)
	if k == 0 {
		return nil
	}
	if len(u) != n*k || len(w) != k*k || len(dst) != len(b.sizes) {
		return &ops.ShapeError{Op: "gp/cg.Blocks.PivotGrad", Want: fmt.Sprintf("U [%d,%d] and W [%d,%d]", n, k, k, k), Got: fmt.Sprintf("%d and %d values", len(u), len(w))}
	}
	u2 := append([]float64(nil), u...)
	w2 := append([]float64(nil), w...)
	xp := make([]float64, k*b.d)
	for q, i := range piv {
		if i < 0 || i >= n {
			return &ops.ShapeError{Op: "gp/cg.Blocks.PivotGrad", Want: fmt.Sprintf("pivots in [0, %d)", n), Got: fmt.Sprint(i)}
		}
		copy(xp[q*b.d:(q+1)*b.d], b.rows(i, i+1))
		for p := 0; p < k; p++ {
			w2[q*k+p] += u2[i*k+p]
			u2[i*k+p] = 0
		}
	}
	parts := make([][][]float64, b.nb+1)
	errs := make([]error, b.nb+1)
	ops.Parallel(b.nb+1, func(t int) {
		parts[t] = b.newGrads()
		if t == b.nb {
			errs[t] = b.blockGrad(xp, nil, w2, parts[t])
			return
		}
		lo, hi := b.BlockRows(t)
		errs[t] = b.blockGrad(b.rows(lo, hi), xp, u2[lo*k:hi*k], parts[t])
	})
	if err := firstErr(errs); err != nil {
		return err
	}
	for _, p := range parts {
		addGrads(dst, p)
	}
	return nil
}

// ---------------------------------------------------------------------------------------------------------------
// Row blocks: the parts of a product and of a gradient that one machine of a cluster computes (package cluster),
// and the cross-covariances of prediction.

// MulRows writes rows [lo, hi) of K·v into out [(hi−lo),c] for v [n,c], where lo and hi are block boundaries
// (BlockRows): the row blocks' full strips, K(X_i, X_j) for every column block j (K(X_i, X_i) with one node).
func (b *Blocks) MulRows(lo, hi int, v []float64, c int, out []float64) error {
	if err := b.checkRows("MulRows", lo, hi); err != nil {
		return err
	}
	if len(v) != b.n*c || len(out) != (hi-lo)*c {
		return &ops.ShapeError{Op: "gp/cg.Blocks.MulRows", Want: fmt.Sprintf("v [%d,c] and out [%d,c]", b.n, hi-lo), Got: fmt.Sprintf("%d and %d values", len(v), len(out))}
	}
	bs := b.o.Block
	i0, i1 := lo/bs, (hi+bs-1)/bs
	errs := make([]error, i1-i0)
	ops.Parallel(i1-i0, func(t int) {
		i := i0 + t
		li, hi := b.BlockRows(i)
		dst := out[(li-lo)*c : (hi-lo)*c]
		for j := 0; j < b.nb && errs[t] == nil; j++ {
			lj, hj := b.BlockRows(j)
			var xb []float64
			if i != j {
				xb = b.rows(lj, hj)
			}
			beta := 1.0
			if j == 0 {
				beta = 0
			}
			errs[t] = b.block(b.rows(li, hi), xb, func(k []float64) error {
				gemm(false, k, hi-li, hj-lj, v[lj*c:hj*c], c, beta, dst)
				return nil
			})
		}
	})
	return firstErr(errs)
}

// BilinearGradRows adds Σ_{a ∈ [lo,hi), all b} (A·Bᵀ)_ab ∂K_ab/∂θ to dst for a, bm [n,c] (lo, hi block
// boundaries): the rows' strips, summed block by block in order.
func (b *Blocks) BilinearGradRows(lo, hi int, a, bm []float64, c int, dst [][]float64) error {
	if err := b.checkRows("BilinearGradRows", lo, hi); err != nil {
		return err
	}
	if len(a) != b.n*c || len(bm) != b.n*c || len(dst) != len(b.sizes) {
		return &ops.ShapeError{Op: "gp/cg.Blocks.BilinearGradRows", Want: fmt.Sprintf("blocks of %d×%d values", b.n, c), Got: fmt.Sprintf("%d and %d", len(a), len(bm))}
	}
	bs := b.o.Block
	i0, i1 := lo/bs, (hi+bs-1)/bs
	type pair struct{ i, j int }
	var all []pair
	for i := i0; i < i1; i++ {
		for j := 0; j < b.nb; j++ {
			all = append(all, pair{i, j})
		}
	}
	parts := make([][][]float64, len(all))
	errs := make([]error, len(all))
	ops.Parallel(len(all), func(t int) {
		i, j := all[t].i, all[t].j
		li, hi := b.BlockRows(i)
		lj, hj := b.BlockRows(j)
		ri, rj := hi-li, hj-lj
		u := make([]float64, ri*rj)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, blas64.General{Rows: ri, Cols: c, Stride: c, Data: a[li*c : hi*c]},
			blas64.General{Rows: rj, Cols: c, Stride: c, Data: bm[lj*c : hj*c]}, 0, blas64.General{Rows: ri, Cols: rj, Stride: rj, Data: u})
		var xb []float64
		if i != j {
			xb = b.rows(lj, hj)
		}
		parts[t] = b.newGrads()
		errs[t] = b.blockGrad(b.rows(li, hi), xb, u, parts[t])
	})
	if err := firstErr(errs); err != nil {
		return err
	}
	for _, p := range parts {
		addGrads(dst, p)
	}
	return nil
}

func (b *Blocks) checkRows(op string, lo, hi int) error {
	if b.x == nil {
		return errors.New("gp/cg.Blocks: no inputs bound")
	}
	if lo < 0 || hi > b.n || lo >= hi || lo%b.o.Block != 0 || hi%b.o.Block != 0 && hi != b.n {
		return &ops.ShapeError{Op: "gp/cg.Blocks." + op, Want: fmt.Sprintf("rows [lo, hi) on the %d-row block boundaries of %d rows", b.o.Block, b.n), Got: fmt.Sprintf("[%d, %d)", lo, hi)}
	}
	return nil
}

// CrossMul writes K(xs, X)·v into out [ns,c] for test rows xs [ns,d] and v [n,c] and, when sq is not nil, the
// squared norms ‖K(X, x*)‖² of the test rows' cross-covariances into sq [ns]: the cross-covariances of prediction
// (two nodes: a white-noise term adds nothing), as K(X_j, xs)ᵀ·v_j summed over the training blocks j in order.
// The test rows are the covariance ops' second operand, in chunks of at most Block rows (padded: see padded), so
// that a row's result does not depend on the rows predicted with it.
func (b *Blocks) CrossMul(xs []float64, ns int, v []float64, c int, out, sq []float64) error {
	if len(xs) != ns*b.d || len(v) != b.n*c || len(out) != ns*c || sq != nil && len(sq) != ns {
		return &ops.ShapeError{Op: "gp/cg.Blocks.CrossMul", Want: fmt.Sprintf("xs [%d,%d], v [%d,c], out [%d,c]", ns, b.d, b.n, ns), Got: fmt.Sprintf("%d, %d and %d values", len(xs), len(v), len(out))}
	}
	bs := b.o.Block
	for r0 := 0; r0 < ns; r0 += bs {
		r1 := min(ns, r0+bs)
		chunk, size := b.padded(xs[r0*b.d : r1*b.d])
		parts, sqs := make([][]float64, b.nb), make([][]float64, b.nb)
		errs := make([]error, b.nb)
		ops.Parallel(b.nb, func(j int) {
			lj, hj := b.BlockRows(j)
			parts[j] = make([]float64, size*c)
			errs[j] = b.block(b.rows(lj, hj), chunk, func(k []float64) error {
				gemm(true, k, hj-lj, size, v[lj*c:hj*c], c, 0, parts[j])
				if sq != nil {
					sqs[j] = make([]float64, size)
					for r := 0; r < hj-lj; r++ {
						for i, val := range k[r*size : (r+1)*size] {
							sqs[j][i] += val * val
						}
					}
				}
				return nil
			})
		})
		if err := firstErr(errs); err != nil {
			return err
		}
		dst := out[r0*c : r1*c]
		clear(dst)
		for _, p := range parts {
			for i := range dst {
				dst[i] += p[i]
			}
		}
		if sq != nil {
			dsq := sq[r0:r1]
			clear(dsq)
			for _, p := range sqs {
				for i := range dsq {
					dsq[i] += p[i]
				}
			}
		}
	}
	return nil
}

// padded returns the test rows xs (at most Block rows) padded to the next power of two (at least 4, at most Block)
// with copies of its first row (valid inputs for every kernel: a task column keeps a task index), and that size:
// the programs of test rows come in a few sizes, and a row's result does not depend on the padding.
func (b *Blocks) padded(xs []float64) ([]float64, int) {
	rows := len(xs) / b.d
	size := 4
	for size < rows {
		size *= 2
	}
	size = max(min(size, b.o.Block), rows)
	out := make([]float64, size*b.d)
	copy(out, xs)
	for r := rows; r < size; r++ {
		copy(out[r*b.d:(r+1)*b.d], xs[:b.d])
	}
	return out, size
}

// Cross writes K(X, xs) [n,ns] into out for at most Block test rows xs [ns,d] (the right-hand sides of exact
// predictive variances; the rows padded to a block).
func (b *Blocks) Cross(xs []float64, ns int, out []float64) error {
	if len(xs) != ns*b.d || len(out) != b.n*ns || ns > b.o.Block {
		return &ops.ShapeError{Op: "gp/cg.Blocks.Cross", Want: fmt.Sprintf("xs [≤%d,%d] and out [%d,ns]", b.o.Block, b.d, b.n), Got: fmt.Sprintf("%d and %d values", len(xs), len(out))}
	}
	chunk, size := b.padded(xs)
	errs := make([]error, b.nb)
	ops.Parallel(b.nb, func(j int) {
		lj, hj := b.BlockRows(j)
		errs[j] = b.block(b.rows(lj, hj), chunk, func(k []float64) error {
			for r := lj; r < hj; r++ {
				copy(out[r*ns:(r+1)*ns], k[(r-lj)*size:(r-lj)*size+ns])
			}
			return nil
		})
	})
	return firstErr(errs)
}

// TestDiag writes diag K(xs, xs) [ns] into out (one node: a white-noise term's variance included), by chunks of
// Block rows (the last one padded).
func (b *Blocks) TestDiag(xs []float64, ns int, out []float64) error {
	if len(xs) != ns*b.d || len(out) != ns {
		return &ops.ShapeError{Op: "gp/cg.Blocks.TestDiag", Want: fmt.Sprintf("xs [%d,%d] and out [%d]", ns, b.d, ns), Got: fmt.Sprintf("%d and %d values", len(xs), len(out))}
	}
	bs := b.o.Block
	for r0 := 0; r0 < ns; r0 += bs {
		r1 := min(ns, r0+bs)
		chunk, size := b.padded(xs[r0*b.d : r1*b.d])
		key := progKey{kind: kindDiag, ra: size, rb: 1}
		p, err := b.program(key)
		if err != nil {
			return err
		}
		copy(p.InputData("a"), chunk)
		err = p.Run()
		if err == nil {
			copy(out[r0:r1], p.OutputView("k")[:r1-r0])
		}
		b.release(key, p)
		if err != nil {
			return fmt.Errorf("gp/cg: kernel diagonal: %w", err)
		}
	}
	return nil
}

var _ ops.KernelOperator = (*Blocks)(nil)
