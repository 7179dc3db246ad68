package blas

import (
	"math"
	"runtime"

	pool "github.com/gpzoo/gpzoo/ops/internal/parallel"
)

// The Cholesky factorisation (Dpotrf, lower) and its backward pass (CholeskyBackward, cholrev.go) at the orders GP
// training uses (tens to hundreds) run on the micro-kernel directly, without the general routines' per-call costs
// (packing whole operands, transposing right-side solves, allocations): the micro-kernel's strided twin (fnS)
// reads the blocks in place wherever they are stored k-major, and the rest is transposed once per block.
//
// Blocks of cholOuter rows. The factorisation's diagonal blocks and the backward's are factorised (reversed) by
// vector kernels (potrfU, revRows), the solves against them run as trsmLeft's (micro-kernel and diagonal-block
// substitution), every product on the micro-kernel. Every block size is fixed (the same for every kernel), every
// kernel accumulates each entry in the same order whatever its tile or vector width, and the work is split over
// goroutines only by output tiles: the bits do not depend on the kernel or on GOMAXPROCS.

const (
	// cholOuter is the block order: a multiple of panelRows (the solves' panel), and the order of the diagonal
	// blocks the potrf kernels factorise (gen_kernels.go's potrfWidth).
	cholOuter = 48
	// cholParallelFlops is the work of one product or solve below which it runs on the calling goroutine (the
	// package's parallelFlops): at the orders GP training uses (n ≲ 250) every call of a factorisation or backward
	// pass is below it, and a split, each piece tens of µs, would gain little and lose more whenever the other core
	// is busy with other work (a helper descheduled in its piece holds the call up).
	cholParallelFlops = parallelFlops
	// unitFlops is the least work of one piece of a split product or solve (some 10 µs): pieces are claimed by the
	// caller and by whichever pooled worker is free (ops/internal/parallel), so several per core let a core slowed
	// by other work take fewer, and a helper that starts late find none left instead of holding the call up.
	unitFlops = 5e5
	// maxUnits bounds the pieces of one product (each has a scratch tile in cholWork.pad).
	maxUnits = 16
)

// cholWork is the scratch of a factorisation or backward pass.
type cholWork struct {
	tri    []float64 // the backward's diagonal block, packed for the solves (packTriRev)
	lb, db []float64 // the diagonal blocks of a solve's triangle and the reciprocals of its diagonal (diagBlocks)
	x      []float64 // a solve's right-hand sides, transposed (panelSolve)
	pad    []float64 // zero-padded edges of the operands and scratch tiles of the products (update)
	s      []float64 // the backward's D̄ + D̄ᵀ, or the factorisation's diagonal block transposed (potrfDiag)
}

// triSize is the length of the packed triangle of order ≤ m (panels of panelRows rows, columns before the panel).
func triSize(m int) int {
	p := (m + panelRows - 1) / panelRows
	return panelRows * panelRows * p * (p - 1) / 2
}

// xStride is the row stride of the transposed right-hand sides of nk columns: whole tiles of 16 (the widest nr)
// and micro-panels of 12 (the tallest mr) fit in it, and it is not a multiple of 512 bytes (the rows of a
// panel would share a few cache sets).
func xStride(nk int) int {
	ld := max(roundUp(nk, 16), roundUp(nk, 12))
	if ld%64 == 0 {
		ld += 8
	}
	return ld
}

// newCholWork returns the scratch for blocks of order ≤ nb with up to rest rows below them and products of depth
// ≤ depth, carved from a pooled buffer (give it back with buffers.Put).
func newCholWork(nb, rest, depth int) (cholWork, *[]float64) {
	mPad := roundUp(nb, panelRows)
	sizes := [...]int{triSize(nb), mPad * panelRows, mPad, mPad * xStride(rest), padSize(depth), cholOuter * cholOuter}
	total := 0
	for _, n := range sizes {
		total += n
	}
	buf := getBuf(total)
	rest2 := *buf
	var w cholWork
	for i, dst := range [...]*[]float64{&w.tri, &w.lb, &w.db, &w.x, &w.pad, &w.s} {
		*dst = rest2[:sizes[i]:sizes[i]]
		rest2 = rest2[sizes[i]:]
	}
	return w, buf
}

// potrfLower factorises the order-n lower triangle at a (stride lda) in place and reports whether it is positive
// definite. Right-looking, blocks of cholOuter: per block J, L_JJ = chol(A_JJ) (potrfDiag), the rows below solved
// against L_JJ in their transpose (Uᵀ·X = A_KJᵀ, U = L_JJᵀ, vectors along the rows of A) and the trailing triangle
// updated by the micro-kernel reading X in place (A_KK −= Xᵀ·X).
func potrfLower(a []float64, n, lda int) bool {
	kern := sel.Active()
	nb := min(cholOuter, n)
	w, buf := newCholWork(nb, n-nb, nb)
	defer buffers.Put(buf)
	for j := 0; j < n; j += nb {
		jb := min(nb, n-j)
		d := a[j*lda+j:]
		if !potrfDiag(kern, d, jb, lda, w.s) {
			return false
		}
		if nk := n - j - jb; nk > 0 {
			potrfPanel(kern, d, jb, nk, lda, &w, w.s)
		}
	}
	return true
}

// potrfDiag factorises the order-m (≤ cholOuter) diagonal block at a (lower, stride lda) in place through its
// transpose U = L_JJᵀ in u (stride cholOuter; U stays there for potrfPanel). When the block is not positive
// definite it returns false, with the rows up to the failed pivot written back (the pivot holds the value that
// was not positive).
func potrfDiag(kern *microKernel, a []float64, m, lda int, u []float64) bool {
	const ld = cholOuter
	clear(u[:m*ld])
	lowerToUpper(kern, u, ld, a, lda, m)
	f := potrfU(kern, u, m)
	upperToLower(kern, a, lda, u, ld, min(f+1, m))
	return f == m
}

// lowerToUpper writes the transpose of the lower triangle of the m × m block at a (stride lda) into the upper
// triangle of u (stride ldu): u[q][p] = a[p][q] for q ≤ p. Whole 8 × 8 blocks by transposeBlocks.
func lowerToUpper(kern *microKernel, u []float64, ldu int, a []float64, lda, m int) {
	for p0 := 0; p0 < m; p0 += 8 {
		if p0+8 <= m {
			transposeBlocks(kern, u, p0, ldu, a, p0*lda, lda, 1, p0/8, false)
		}
		for p := p0; p < min(p0+8, m); p++ {
			q0 := p0
			if p0+8 > m {
				q0 = 0
			}
			for q := q0; q <= p; q++ {
				u[q*ldu+p] = a[p*lda+q]
			}
		}
	}
}

// upperToLower is lowerToUpper's inverse on the first rows rows of a: a[p][q] = u[q][p] for q ≤ p < rows.
func upperToLower(kern *microKernel, a []float64, lda int, u []float64, ldu, rows int) {
	for p0 := 0; p0 < rows; p0 += 8 {
		if p0+8 <= rows {
			transposeBlocks(kern, a, p0*lda, lda, u, p0, ldu, p0/8, 1, false)
		}
		for p := p0; p < min(p0+8, rows); p++ {
			q0 := p0
			if p0+8 > rows {
				q0 = 0
			}
			for q := q0; q <= p; q++ {
				a[p*lda+q] = u[q*ldu+p]
			}
		}
	}
}

// potrfU factorises the order-m upper triangle U (row-major, stride cholOuter; UᵀU = A) in place, left-looking by
// rows, and returns m, or the row whose pivot is not positive (or NaN; its row then holds the updated values, the
// pivot the value that failed): row i gets R[c] −= U[k][i]·U[k][c] for k = 0 … i−1 (fused), then
// U[i][i] = √d and U[i][c] = R[c]·(1/√d) for c > i. The kernel's vector code (potrf48*) does exactly this.
func potrfU(kern *microKernel, u []float64, m int) int {
	if kern.potrf != nil {
		return kern.potrf(u, m)
	}
	const ld = cholOuter
	for i := 0; i < m; i++ {
		row := u[i*ld+i : i*ld+m]
		for k := 0; k < i; k++ {
			f, rk := u[k*ld+i], u[k*ld+i:k*ld+m]
			for c := range row {
				row[c] = math.FMA(-f, rk[c], row[c])
			}
		}
		d := row[0]
		if !(d > 0) {
			return i
		}
		d = math.Sqrt(d)
		r := 1 / d
		for c := 1; c < len(row); c++ {
			row[c] *= r
		}
		row[0] = d
	}
	return m
}

// potrfPanel finishes block column J of the factorisation given L_JJ (order jb, a multiple of panelRows, at a)
// and its transpose U in u: L_KJ = A_KJ·L_JJ⁻ᵀ for the nk rows below, solved in their transpose X (Uᵀ·X = A_KJᵀ,
// Uᵀ read from u in place), then A_KK −= L_KJ·L_KJᵀ (lower triangle) with both operands X in place.
func potrfPanel(kern *microKernel, a []float64, jb, nk, lda int, w *cholWork, u []float64) {
	const ld = cholOuter
	diagBlocks(w, jb, u, 0, 1, ld) // Uᵀ[p][q] = u[q·ld + p]
	ldx := xStride(nk)
	x := w.x[:roundUp(jb, panelRows)*ldx]
	for q := 0; q < jb; q++ {
		clear(x[q*ldx+nk : (q+1)*ldx])
	}
	// Uᵀ's micro-panel from row p: (q, i) ↦ Uᵀ[p+i][q] = u[q·ld + p + i].
	panelSolve(kern, w, func(p int) kop { return kop{u, p, ld, true} }, x, ldx, jb, nk, a[jb*lda:], lda, false)
	xs := kop{x, 0, ldx, true}
	update(kern, w, nk, nk, jb, -1, xs, xs, a[jb*lda+jb:], lda, part{lower: true}, false)
}

// diagBlocks writes the diagonal blocks of the order-m lower triangle T with T[p][q] = t[t0 + p·sp + q·sq]
// (q ≤ p; sp and sq may be negative) for the solves: block P (rows p0 =
// P·panelRows …) at w.lb[P·panelRows²] (row-major, strictly lower), the reciprocals of its diagonal at w.db[p0];
// rows beyond m are identity rows.
func diagBlocks(w *cholWork, m int, t []float64, t0, sp, sq int) {
	for p0 := 0; p0 < m; p0 += panelRows {
		lb, db := w.lb[p0*panelRows:(p0+panelRows)*panelRows], w.db[p0:p0+panelRows]
		clear(lb)
		for r := 0; r < panelRows; r++ {
			db[r] = 1
			p := p0 + r
			if p >= m {
				continue
			}
			row := lb[r*panelRows : r*panelRows+r]
			for q := range row {
				row[q] = t[t0+p*sp+(p0+q)*sq]
			}
			db[r] = 1 / t[t0+p*sp+p*sq]
		}
	}
}

// panelSolve solves T·X = B for the order-k lower triangle T and the m columns of B = Cᵀ, C the m × k block at src
// (stride ld; with rev its columns are taken backwards, see gatherT), and writes X back into it: tri(p) is T's
// micro-panel of mr rows from row p (columns before the panel: (q, i) ↦ T[p+i][q]), w holds its diagonal blocks
// (diagBlocks). Column tiles of nr run on up to GOMAXPROCS goroutines when the work is large enough, each
// gathering, solving and scattering its own tiles in x (k × ldx, rows padded to a multiple of panelRows, columns
// from m on zero): panel by panel of T, the micro-kernel subtracts the solved rows' part and the diagonal block
// is solved by substitution (as trsmLeft does).
func panelSolve(kern *microKernel, w *cholWork, tri func(p int) kop, x []float64, ldx, k, m int, src []float64, ld int, rev bool) {
	mr, nr := kern.mr, kern.nr
	panels := (k + panelRows - 1) / panelRows
	tiles := (m + nr - 1) / nr
	forTiles(tiles, 2*float64(k)*float64(k)*float64(m), func(t0, t1 int) {
		c0, c1 := t0*nr, min(t1*nr, m)
		gatherT(kern, x[c0:], ldx, src[c0*ld:], ld, c1-c0, k, rev)
		for P := 0; P < panels; P++ {
			p0 := P * panelRows
			for t := t0; t < t1; t++ {
				c := t * nr
				if p0 > 0 {
					for s := 0; s < panelRows/mr; s++ {
						a := tri(p0 + s*mr)
						kern.fnS(p0, -1, a.d, a.off, a.ld, x, c, ldx, x[(p0+s*mr)*ldx+c:], ldx)
					}
				}
				diagSolveS(kern, w.lb[p0*panelRows:], w.db[p0:], x[p0*ldx+c:], ldx)
			}
		}
		scatterT(kern, src[c0*ld:], ld, x[c0:], ldx, c1-c0, k, rev)
	})
}

// transposeBlocks writes the transpose of the 8rb × 8cb block of src at s0 (rows lds apart) into dst at d0 (rows
// ldd apart; either stride may be negative): dst[d0 + j·ldd + i] = src[s0 + i·lds + j]. With half, the block of
// src is halved in place first (and the halves written). By the kernel's vector code (8 × 8 blocks in registers)
// when it has some.
func transposeBlocks(kern *microKernel, dst []float64, d0, ldd int, src []float64, s0, lds, rb, cb int, half bool) {
	if rb <= 0 || cb <= 0 {
		return
	}
	if kern.transpose != nil {
		kern.transpose(dst, d0, ldd, src, s0, lds, rb, cb, half)
		return
	}
	for i := 0; i < 8*rb; i++ {
		row := src[s0+i*lds : s0+i*lds+8*cb]
		for j, v := range row {
			if half {
				v *= 0.5
				row[j] = v
			}
			dst[d0+j*ldd+i] = v
		}
	}
}

// gatherT writes the transpose of the m × k block at src (stride ld) into x (k × m, stride ldx). With rev the
// rows of x run backwards: row q holds column k−1−q of the block. Whole 8 × 8 blocks by transposeBlocks.
func gatherT(kern *microKernel, x []float64, ldx int, src []float64, ld, m, k int, rev bool) {
	m8, k8 := m/8*8, k/8*8
	d0, ldd := 0, ldx
	if rev {
		d0, ldd = (k-1)*ldx, -ldx
	}
	transposeBlocks(kern, x, d0, ldd, src, 0, ld, m8/8, k8/8, false)
	for c := 0; c < m; c++ {
		q0 := k8
		if c >= m8 {
			q0 = 0
		}
		for q, v := range src[c*ld+q0 : c*ld+k] {
			x[d0+(q0+q)*ldd+c] = v
		}
	}
}

// scatterT is gatherT's inverse: it writes x back into the m × k block.
func scatterT(kern *microKernel, dst []float64, ld int, x []float64, ldx, m, k int, rev bool) {
	m8, k8 := m/8*8, k/8*8
	s0, lds := 0, ldx
	if rev {
		s0, lds = (k-1)*ldx, -ldx
	}
	transposeBlocks(kern, dst, 0, ld, x, s0, lds, k8/8, m8/8, false)
	for c := 0; c < m; c++ {
		q0 := k8
		if c >= m8 {
			q0 = 0
		}
		d := dst[c*ld+q0 : c*ld+k]
		for q := range d {
			d[q] = x[s0+(q0+q)*lds+c]
		}
	}
}

// packTriRev packs the micro-panels of the lower triangle T of order m with T[p][q] = a[(m−1−q)·lda + m−1−p]
// (q ≤ p), the transpose of the lower triangle at a taken from its last row (an upper triangle's back
// substitution as a forward one), for panelSolve: panel P (rows p0 = P·panelRows …) holds, for the columns q < p0,
// micro-panels of mr rows at w.tri[panelRows²·P(P−1)/2 + s·mr·p0 + q·mr + i] = T[p0+s·mr+i][q] (mr adjacent
// values of a row of a, backwards; zero beyond row m). triRev is its tri function.
func packTriRev(kern *microKernel, w *cholWork, a []float64, m, lda int) {
	mr := kern.mr
	for p0 := 0; p0 < m; p0 += panelRows {
		P := p0 / panelRows
		off := panelRows * panelRows * P * (P - 1) / 2
		for s := 0; s < panelRows/mr; s++ {
			mp := w.tri[off+s*mr*p0 : off+(s+1)*mr*p0]
			pLo := p0 + s*mr
			mv := min(mr, m-pLo) // rows pLo … pLo+mv−1 exist
			for q := 0; q < p0; q++ {
				src := a[(m-1-q)*lda:]
				dst := mp[q*mr : q*mr+mr]
				for i := 0; i < mv; i++ {
					dst[i] = src[m-1-pLo-i]
				}
				clear(dst[max(mv, 0):])
			}
		}
	}
}

// triRev returns packTriRev's micro-panel from row p (p0 + s·mr) as panelSolve reads it.
func triRev(w *cholWork, mr int) func(p int) kop {
	return func(p int) kop {
		p0 := p / panelRows * panelRows
		P := p0 / panelRows
		return kop{w.tri, panelRows*panelRows*P*(P-1)/2 + (p-p0)*p0, mr, true}
	}
}

// diagSolveS is diagSolve on a tile whose rows are ldt apart.
func diagSolveS(kern *microKernel, l, d, t []float64, ldt int) {
	if kern.diagS != nil {
		kern.diagS(l, d, t, ldt)
		return
	}
	nr := kern.nr
	for r := 0; r < panelRows; r++ {
		row := t[r*ldt : r*ldt+nr]
		for s := 0; s < r; s++ {
			ls, src := l[r*panelRows+s], t[s*ldt:s*ldt+nr]
			for j := range row {
				row[j] = math.FMA(-ls, src[j], row[j])
			}
		}
		for j := range row {
			row[j] *= d[r]
		}
	}
}

// kop is an operand of a product stored k-major: element (p, i) at d[off + p·ld + i] (ld may be negative). When
// padded, the lanes beyond the operand's extent up to the next whole tile are readable (zeros in scratch), so an
// edge panel is read in place too.
type kop struct {
	d       []float64
	off, ld int
	padded  bool
}

// panel returns the operand's lanes i0 … i0+v−1 for k steps as the micro-kernel reads them: in place when they
// all exist (or the operand is padded), else a zero-padded copy in pad (k × v).
func (o kop) panel(pad []float64, i0, mv, v, k int) kop {
	if mv == v || o.padded {
		return kop{o.d, o.off + i0, o.ld, o.padded}
	}
	pad = pad[:k*v]
	for p := 0; p < k; p++ {
		src := o.d[o.off+p*o.ld+i0:]
		dst := pad[p*v : p*v+v]
		copy(dst, src[:mv])
		clear(dst[mv:])
	}
	return kop{pad, 0, v, true}
}

// padSize is the length of cholWork.pad for products of depth ≤ k: an edge panel of A, an edge tile of B and a
// scratch tile per piece.
func padSize(k int) int { return k*(16+12) + maxUnits*16*16 }

// update computes C[0:m, 0:n] += alpha·A·B (C stride ldc) restricted to the part pt, for A (m lanes) and B (n
// lanes) stored k-major. Stripes of tiles run on up to GOMAXPROCS goroutines when the work is large enough; the
// operands' edge panel and edge tile (fewer than mr rows, nr columns) are copied once into w.pad beforehand
// unless they are padded. Tiles of C that are not whole (at the edges, across the diagonal of a triangle) are
// computed in a scratch tile of which only the part's entries are read and written (with spill, whole tiles
// across the diagonal are computed in place, their entries outside the part overwritten).
func update(kern *microKernel, w *cholWork, m, n, k int, alpha float64, a, b kop, c []float64, ldc int, pt part, spill bool) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	mr, nr := kern.mr, kern.nr
	ae, be := m/mr*mr, n/nr*nr // the edge panel and tile start here
	var aEdge, bEdge kop
	if ae < m {
		aEdge = a.panel(w.pad[:k*mr], ae, m-ae, mr, k)
	}
	if be < n {
		bEdge = b.panel(w.pad[k*mr:k*(mr+nr)], be, n-be, nr, k)
	}
	tiles := w.pad[k*(mr+nr):]
	flops := 2 * float64(m) * float64(n) * float64(k)
	if pt != full {
		flops /= 2
	}
	splitTiles(kern, m, n, flops, pt, func(s, i0, i1, j0, j1 int) {
		t := tiles[s*16*16 : s*16*16+mr*nr]
		clear(t)
		for jr := j0; jr < j1; jr += nr {
			nv := min(nr, j1-jr)
			bt := kop{b.d, b.off + jr, b.ld, false}
			if jr == be {
				bt = bEdge
			}
			for ir := i0; ir < i1; ir += mr {
				mv := min(mr, i1-ir)
				skip, whole := pt.tile(ir, jr, mv, nv)
				if skip {
					continue
				}
				at := kop{a.d, a.off + ir, a.ld, false}
				if ir == ae {
					at = aEdge
				}
				ct := c[ir*ldc+jr:]
				if mv == mr && nv == nr && (whole || spill) {
					kern.fnS(k, alpha, at.d, at.off, at.ld, bt.d, bt.off, bt.ld, ct, ldc)
					continue
				}
				// Row i of the tile has the part's columns lo(i) … hi(i)−1; the other entries of t are stale
				// values that are computed and dropped.
				span := func(i int) (lo, hi int) {
					lo, hi = 0, nv
					if pt.lower {
						hi = min(nv, max(0, ir+i-jr+pt.off+1))
					} else if pt.upper {
						lo = min(nv, max(0, ir+i-jr+pt.off))
					}
					return lo, hi
				}
				for i := 0; i < mv; i++ {
					lo, hi := span(i)
					src, dst := ct[i*ldc+lo:i*ldc+hi], t[i*nr+lo:i*nr+hi]
					for j := range dst {
						dst[j] = src[j]
					}
				}
				kern.fnS(k, alpha, at.d, at.off, at.ld, bt.d, bt.off, bt.ld, t, nr)
				for i := 0; i < mv; i++ {
					lo, hi := span(i)
					src, dst := t[i*nr+lo:i*nr+hi], ct[i*ldc+lo:i*ldc+hi]
					for j := range dst {
						dst[j] = src[j]
					}
				}
			}
		}
	})
}

// units is the number of pieces of a product or solve of flops split into at most tiles parts: 1 (the calling
// goroutine alone) below cholParallelFlops or with GOMAXPROCS = 1 (read only when the work could be split: it
// takes the scheduler's lock), else one per unitFlops, at least two, at most maxUnits.
func units(flops float64, tiles int) int {
	if flops < cholParallelFlops || tiles < 2 || runtime.GOMAXPROCS(0) < 2 {
		return 1
	}
	return min(tiles, maxUnits, max(2, int(flops/unitFlops)))
}

// forTiles runs f on runs of the tiles 0 … tiles−1, in pieces claimed by the caller and the pooled workers when the
// work (flops) is large enough.
func forTiles(tiles int, flops float64, f func(t0, t1 int)) {
	u := units(flops, tiles)
	if u <= 1 {
		f(0, tiles)
		return
	}
	pool.Do(u, func(i int) { f(i*tiles/u, (i+1)*tiles/u) })
}

// splitTiles splits the m × n output of a product restricted to pt into stripes of whole tiles (rows for a
// triangle, else along the longer side), of about equal work, and runs f(s, i0, i1, j0, j1) on each stripe s, in
// pieces claimed by the caller and the pooled workers when the work (flops) is large enough.
func splitTiles(kern *microKernel, m, n int, flops float64, pt part, f func(s, i0, i1, j0, j1 int)) {
	mr, nr := kern.mr, kern.nr
	byRows := pt != full || m >= n
	step, long := nr, n
	if byRows {
		step, long = mr, m
	}
	w := units(flops, (long+step-1)/step)
	if w <= 1 {
		f(0, 0, m, 0, n)
		return
	}
	// bounds[s]: where stripe s starts, a multiple of step; a triangle's rows balanced by their length.
	var bb [maxUnits + 1]int
	bounds := bb[:w+1]
	bounds[w] = long
	if pt == full {
		tiles := (long + step - 1) / step
		for s := 1; s < w; s++ {
			bounds[s] = s * tiles / w * step
		}
	} else {
		width := func(i int) float64 {
			lo, hi := 0, n
			if pt.lower {
				hi = min(n, max(0, i+pt.off+1))
			} else {
				lo = min(n, max(0, i+pt.off))
			}
			return float64(hi - lo)
		}
		var area float64
		for i := 0; i < m; i++ {
			area += width(i)
		}
		var acc float64
		s := 1
		for i := 0; i < m && s < w; i++ {
			acc += width(i)
			for s < w && acc >= area*float64(s)/float64(w) {
				bounds[s] = min(roundUp(i+1, mr), m)
				s++
			}
		}
		for ; s < w; s++ {
			bounds[s] = m
		}
	}
	pool.Do(w, func(s int) {
		lo, hi := bounds[s], bounds[s+1]
		if lo >= hi {
			return
		}
		if byRows {
			f(s, lo, hi, 0, n)
		} else {
			f(s, 0, m, lo, hi)
		}
	})
}
