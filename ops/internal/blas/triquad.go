package blas

import (
	pool "github.com/gpzoo/gpzoo/ops/internal/parallel"

	"math"
	"runtime"

	"gonum.org/v1/gonum/blas"
)

// TriQuad holds the work of the batched triangular products behind ops.TriQuadCols: for A [m,n] and P
// lower-triangular factors L_q [m,m] (row-major, stride m; only their lower triangles are read),
//
//	Forward   out[j·P+q] = Σ_i B_q[i,j]²,  B_q = L_qᵀ·A
//	Backward  G_q = B_q·diag(s_q) with s_q[j] = 2·ĝ[j·P+q] (ĝ = ∂/∂out),  ∂A = Σ_q L_q·G_q,  ∂L_q = tril(A·G_qᵀ)
//
// All P factors multiply the same A, so each column tile of A (nr columns, the micro-kernel's width) is packed
// once and every factor is applied to it while it is in cache, as Dtrmm applies one: the column sums of squares
// are taken from each tile of B_q as it leaves the micro-kernel, B_q is kept for Backward in those tiles (written
// where the micro-kernel writes them: contiguous, no copy), ∂A accumulates Σ_q L_q·G_q per tile in the
// micro-kernel's accumulator (no P products written out and summed), and the operands of tril(A·G_qᵀ) are
// written in the micro-kernel's packed layout (A once for all factors, G_q transposed) while their tiles are in
// cache, block of kc columns by block, so that the lower-triangle products run without packing.
//
// Work is split by columns of A over goroutines (each owns its columns for every factor: no reduction), and
// tril(A·G_qᵀ), a sum over the columns, by rows of the triangle, each entry summed over the columns in blocks of
// kc in order (C = acc + C per block, as Dgemmt) whatever the split: every kernel and every GOMAXPROCS gives the
// same bits, and column j of out and of ∂A depends on column j of A (and of ĝ) only.
//
// Layouts (nr, mr: the kernel's tile; mP = m rounded up to panelRows): B_q in column tiles of mP × nr, rows in
// the forward sweep's order (B_q[i, j] at ((j/nr)·mP + m−1−i)·nr + j%nr); the block of kc columns from kb of A
// as the left operand of tril(A·G_qᵀ) (A[i, j] at ((i/mr)·kc + j−kb)·mr + i%mr) and of G_q as its right one
// (G_q[i, j] at ((i/nr)·kc + j−kb)·nr + i%nr).
type TriQuad struct {
	kern    *microKernel
	m, n, p int
	bt      [][]float64 // per factor: B_q in column tiles
	atb     []float64   // A's block of kc columns, packed for tril(A·G_qᵀ)
	gblk    [][]float64 // per factor: G_q's block of kc columns, packed (transposed) for tril(A·G_qᵀ)
	fwd     bool        // bt holds the B_q of the last Forward (kern, m, n, p)
}

// triQuadGroup is the number of column tiles TriQuad carries through one sweep of each triangle (Dtrsm's and
// Dtrmm's tileGroup is 4): each packed panel is read from memory once per group for every factor. 8 measured
// 2-5% faster than 4 at M = 200, N = 1024 (single core, paired); 16 no faster.
const triQuadGroup = 8

// ensure sizes the buffers for the kernel kern, A [m,n] and p factors.
func (w *TriQuad) ensure(kern *microKernel, m, n, p int) {
	if w.kern == kern && w.m == m && w.n == n && w.p == p {
		return
	}
	w.kern, w.m, w.n, w.p, w.fwd = kern, m, n, p, false
	size := roundUp(m, panelRows) * roundUp(n, kern.nr)
	w.bt = make([][]float64, p)
	for q := range w.bt {
		w.bt[q] = make([]float64, size)
	}
}

// packTris packs the triangles op(L_q) (lower L_q, op = ᵀ when trans) in parallel over the factors; release gives
// the buffers back. All share the offsets (they depend only on the order).
func packTris(ls [][]float64, m int, trans bool, mr int, flops float64) (packed [][]float64, offsets []int, release func()) {
	tA := blas.NoTrans
	if trans {
		tA = blas.Trans
	}
	bufs := make([]*[]float64, len(ls))
	packed = make([][]float64, len(ls))
	offs := make([][]int, len(ls))
	one := func(q int) {
		bufs[q], offs[q] = newTri(blas.Lower, tA, blas.NonUnit, m, ls[q], m).pack(mr)
		packed[q] = *bufs[q]
	}
	w := min(runtime.GOMAXPROCS(0), len(ls), int(flops/parallelFlops))
	if w <= 1 {
		for q := range ls {
			one(q)
		}
	} else {
		pool.Do(w, func(s int) {
			for q := s; q < len(ls); q += w {
				one(q)
			}
		})
	}
	return packed, offs[0], func() {
		for _, b := range bufs {
			buffers.Put(b)
		}
	}
}

// Forward writes out[j·P+q] = Σ_i (L_qᵀA)[i,j]² for A [m,n] (row-major, stride n) and the P = len(ls) factors
// L_q [m,m] (stride m, lower triangles read), out [n,P], and keeps the products L_qᵀA for Backward. The sums run
// over i = m−1, …, 0 with one rounding per square added (math.FMA).
func (w *TriQuad) Forward(a []float64, m, n int, ls [][]float64, out []float64) {
	p := len(ls)
	if m == 0 || n == 0 || p == 0 {
		clear(out[:n*p])
		return
	}
	kern := sel.Active()
	w.ensure(kern, m, n, p)
	w.fwd = false
	flops := float64(p) * float64(m) * float64(m) * float64(n)
	packed, offsets, release := packTris(ls, m, true, kern.mr, flops)
	defer release()
	rhsTiles(n, kern.nr, flops, func(j0, j1 int) { w.forwardCols(j0, j1, a, packed, offsets, out) })
	w.fwd = true
}

// forwardCols runs Forward on the columns [j0, j1) (j0 a multiple of nr), triQuadGroup tiles of nr columns at a
// time: A's tiles packed once (rows in the sweep's order: L_qᵀ is upper triangular, its sweep runs from the last
// row), then for every factor and every panel of its triangle (read once per group), each tile's panel of
// B_q = L_qᵀA is computed in place in B_q's tile and its squares added to the column sums.
func (w *TriQuad) forwardCols(j0, j1 int, a []float64, packed [][]float64, offsets []int, out []float64) {
	kern, m, n, p := w.kern, w.m, w.n, w.p
	mr, nr := kern.mr, kern.nr
	mP := roundUp(m, panelRows)
	px := getBuf(triQuadGroup * mP * nr)
	defer buffers.Put(px)
	xp := *px
	pacc := getBuf(p * triQuadGroup * nr)
	defer buffers.Put(pacc)
	acc := *pacc
	for jg := j0; jg < j1; jg += triQuadGroup * nr {
		tiles := min(triQuadGroup, (j1-jg+nr-1)/nr)
		for pr := 0; pr < m; pr++ { // processing row pr is A's row m−1−pr
			row := a[(m-1-pr)*n : (m-pr)*n]
			for g := 0; g < tiles; g++ {
				jr := jg + g*nr
				nv := min(nr, n-jr)
				dst := xp[(g*mP+pr)*nr : (g*mP+pr+1)*nr]
				copy(dst, row[jr:jr+nv])
				clear(dst[nv:])
			}
		}
		for g := 0; g < tiles; g++ {
			clear(xp[(g*mP+m)*nr : (g+1)*mP*nr])
		}
		clear(acc)
		for q := 0; q < p; q++ {
			lq, bq := packed[q], w.bt[q]
			for P := 0; P*panelRows < m; P++ {
				p0 := P * panelRows
				k := p0 + panelRows
				mv := min(panelRows, m-p0)
				for g := 0; g < tiles; g++ {
					jr := jg + g*nr
					t := bq[((jr/nr)*mP+p0)*nr : ((jr/nr)*mP+p0+panelRows)*nr]
					clear(t)
					for s := 0; s < panelRows/mr; s++ {
						kern.fn(k, 1, lq[offsets[P]+s*mr*k:], xp[g*mP*nr:], t[s*mr*nr:], nr)
					}
					sumSquares(acc[(q*triQuadGroup+g)*nr:(q*triQuadGroup+g+1)*nr], t, mv, nr)
				}
			}
		}
		for q := 0; q < p; q++ {
			for g := 0; g < tiles; g++ {
				jr := jg + g*nr
				for c, s := range acc[(q*triQuadGroup+g)*nr : (q*triQuadGroup+g)*nr+min(nr, n-jr)] {
					out[(jr+c)*p+q] = s
				}
			}
		}
	}
}

// Backward computes the gradients of the last Forward's out for A [m,n] and the factors ls, given gout = ∂/∂out
// [n,P]: da = Σ_q L_q·G_q (when da is not nil) and, for each non-nil dls[q], dls[q] = tril(A·G_qᵀ) with its
// strict upper triangle zeroed (G_q = B_q·diag(s_q), s_q[j] = 2·gout[j·P+q], B_q = L_qᵀA). It uses, and
// consumes, the products kept by the last Forward, which the caller must have run on the same a and ls (they are
// recomputed when the kernel or the sizes changed since). ∂A sums the factors in the order q = 0, 1, …, each
// product added as the micro-kernel adds (C = 1·acc + C); tril(A·G_qᵀ) sums over the columns in blocks of kc,
// in order, as Dgemmt does.
//
// The columns run in blocks of kc: the block's tiles of G_q (and of ∂A) are made in parallel over tiles, each
// written once more, transposed, in the packed operand of the block's lower-triangle products, which then run
// in parallel over rows of the triangles. The packed operands of one block stay in cache between the two steps.
func (w *TriQuad) Backward(a []float64, m, n int, ls [][]float64, gout, da []float64, dls [][]float64) {
	p := len(ls)
	if m == 0 || p == 0 {
		return
	}
	if n == 0 {
		for _, dl := range dls {
			clear(dl)
		}
		return
	}
	kern := sel.Active()
	if !w.fwd || w.kern != kern || w.m != m || w.n != n || w.p != p {
		w.Forward(a, m, n, ls, make([]float64, n*p))
	}
	w.fwd = false
	var wantL int
	for _, dl := range dls {
		if dl != nil {
			wantL++
		}
	}
	if da == nil && wantL == 0 {
		return
	}
	if wantL > 0 {
		if len(w.atb) != roundUp(m, kern.mr)*kc {
			w.atb = make([]float64, roundUp(m, kern.mr)*kc)
		}
		if len(w.gblk) != p || len(w.gblk[0]) != roundUp(m, kern.nr)*kc {
			w.gblk = make([][]float64, p)
		}
		for q, dl := range dls {
			if dl != nil && w.gblk[q] == nil {
				w.gblk[q] = make([]float64, roundUp(m, kern.nr)*kc)
			}
		}
	}
	mm := float64(m) * float64(m)
	var packed [][]float64
	var offsets []int
	if da != nil {
		var release func()
		packed, offsets, release = packTris(ls, m, false, kern.mr, float64(p)*mm*float64(n))
		defer release()
	}
	// Whether a block of kc columns is split over the cores is decided on the whole call's work, not the block's:
	// at M = 100 no block reached the threshold, and an SVGP step's largest node ran on one core.
	work := float64(wantL) * float64(m) * float64(n) * 4 // gathering and transposing
	if da != nil {
		work += float64(p) * mm * float64(n)
	}
	for kb := 0; kb < n; kb += kc {
		kcb := min(kc, n-kb)
		rhsTiles(kcb, kern.nr, work, func(j0, j1 int) { w.backwardCols(kb+j0, kb+j1, kb, a, packed, offsets, gout, da, dls) })
		if wantL > 0 {
			parallelTriangle(m, m, wantL*n, kern, part{lower: true}, func(i0, i1, _, _ int) { w.lowerRows(i0, i1, kb, kcb, dls) })
		}
	}
}

// backwardCols runs Backward's column part on the columns [j0, j1) of the block of kc columns from kb (j0 a
// multiple of nr), triQuadGroup tiles at a time: A's columns packed for the block's lower-triangle products; for
// every factor, each tile of G_q gathered (rows in order) from B_q's tile and scaled, written transposed into the
// block's packed G_q, and L_q·G_q added to the tile of ∂A.
func (w *TriQuad) backwardCols(j0, j1, kb int, a []float64, packed [][]float64, offsets []int, gout, da []float64, dls [][]float64) {
	kern, m, n, p := w.kern, w.m, w.n, w.p
	mr, nr := kern.mr, kern.nr
	mP := roundUp(m, panelRows)
	pg := getBuf(triQuadGroup * mP * nr)
	defer buffers.Put(pg)
	gb := *pg
	var dacc []float64
	if da != nil {
		pd := getBuf(triQuadGroup * mP * nr)
		defer buffers.Put(pd)
		dacc = *pd
	}
	wantL := false
	for _, dl := range dls {
		wantL = wantL || dl != nil
	}
	for jg := j0; jg < j1; jg += triQuadGroup * nr {
		tiles := min(triQuadGroup, (j1-jg+nr-1)/nr)
		if wantL { // A[i, k] at ((i/mr)·kc + k − kb)·mr + i%mr for the group's columns k
			cEnd := min(jg+tiles*nr, n)
			for i0 := 0; i0 < m; i0 += mr {
				dst := w.atb[((i0/mr)*kc+jg-kb)*mr:]
				rows := min(mr, m-i0)
				interleave(dst, a[i0*n+jg:], n, rows, cEnd-jg, mr)
				for k := 0; rows < mr && k < cEnd-jg; k++ {
					clear(dst[k*mr+rows : (k+1)*mr])
				}
			}
		}
		if da != nil {
			clear(dacc)
		}
		for q := 0; q < p; q++ {
			wantLq := q < len(dls) && dls[q] != nil
			if da == nil && !wantLq {
				continue
			}
			bq := w.bt[q]
			for g := 0; g < tiles; g++ {
				jr := jg + g*nr
				var sc [16]float64
				for c := 0; c < min(nr, n-jr); c++ {
					sc[c] = 2 * gout[(jr+c)*p+q]
				}
				var gq []float64
				if wantLq {
					gq = w.gblk[q][(jr-kb)*nr:]
				}
				gatherG(gb[g*mP*nr:(g+1)*mP*nr], bq[(jr/nr)*mP*nr:(jr/nr+1)*mP*nr], m, nr, sc[:], gq)
			}
			if da != nil {
				lq := packed[q]
				for P := 0; P*panelRows < m; P++ {
					p0 := P * panelRows
					k := p0 + panelRows
					for g := 0; g < tiles; g++ {
						for s := 0; s < panelRows/mr; s++ {
							kern.fn(k, 1, lq[offsets[P]+s*mr*k:], gb[g*mP*nr:], dacc[(g*mP+p0+s*mr)*nr:], nr)
						}
					}
				}
			}
		}
		if da != nil {
			for i := 0; i < m; i++ {
				row := da[i*n : (i+1)*n]
				for g := 0; g < tiles; g++ {
					jr := jg + g*nr
					nv := min(nr, n-jr)
					copy(row[jr:jr+nv], dacc[(g*mP+i)*nr:][:nv])
				}
			}
		}
	}
}

// lowerRows adds the block of kcb columns from kb to the rows [i0, i1) of every dls[q] = tril(A·G_qᵀ) (cleared,
// strict upper part included, at the first block) from the block's packed operands: micro-tiles above the
// diagonal skipped, those across it through a scratch tile; i0 a multiple of mr.
func (w *TriQuad) lowerRows(i0, i1, kb, kcb int, dls [][]float64) {
	kern, m := w.kern, w.m
	mr, nr := kern.mr, kern.nr
	var tmp [16 * 16]float64
	for q, dl := range dls {
		if dl == nil {
			continue
		}
		if kb == 0 {
			clear(dl[i0*m : i1*m])
		}
		gq := w.gblk[q]
		for j0 := 0; j0 < i1; j0 += nr {
			bp := gq[(j0/nr)*kc*nr:]
			nv := min(nr, m-j0)
			for i := i0; i < i1; i += mr {
				mv := min(mr, i1-i)
				if j0 > i+mv-1 { // above the diagonal
					continue
				}
				ap := w.atb[(i/mr)*kc*mr:]
				c := dl[i*m+j0:]
				if mv == mr && nv == nr && j0+nr-1 <= i {
					kern.fn(kcb, 1, ap, bp, c, m)
					continue
				}
				t := tmp[:mr*nr]
				clear(t)
				for r := 0; r < mv; r++ {
					copy(t[r*nr:r*nr+nv], c[r*m:r*m+nv])
				}
				kern.fn(kcb, 1, ap, bp, t, nr)
				for r := 0; r < mv; r++ {
					copy(c[r*m:r*m+max(0, min(nv, i+r-j0+1))], t[r*nr:])
				}
			}
		}
	}
}

// gatherG writes the rows of a tile of G = B·diag(sc) in order into gt (row i at gt[i·nr:], zero from row m on),
// row i being row m−1−i of bt (B's tile in the forward's order), and, when gq is not nil, G transposed in blocks
// of nr × nr: G[i, c] at gq[((i/nr)·kc + c)·nr + i%nr], zero beyond row m (the packed right operand of
// tril(A·Gᵀ), from the tile's first column).
func gatherG(gt, bt []float64, m, nr int, sc, gq []float64) {
	switch nr {
	case 16:
		scaleRows16(gt, bt, m, (*[16]float64)(sc))
	case 8:
		scaleRows8(gt, bt, m, (*[16]float64)(sc))
	default:
		for i := 0; i < m; i++ {
			dst := gt[i*nr:][:nr]
			src := bt[(m-1-i)*nr:][:len(dst)]
			s := sc[:len(dst)]
			for c := range dst {
				dst[c] = src[c] * s[c]
			}
		}
	}
	clear(gt[m*nr:])
	if gq == nil {
		return
	}
	for i0 := 0; i0 < m; i0 += nr {
		blk := gq[(i0/nr)*kc*nr:][:nr*nr]
		rows := min(nr, m-i0)
		interleave(blk, gt[i0*nr:], nr, rows, nr, nr)
		for c := 0; rows < nr && c < nr; c++ {
			clear(blk[c*nr+rows : (c+1)*nr])
		}
	}
}

// sumSquares adds the squares of the rows of the tile t (rows × nr, row-major) to sq (nr sums), row by row in
// order, one rounding per square added.
func sumSquares(sq, t []float64, rows, nr int) {
	switch nr {
	case 16:
		sumSquares16(sq, t, rows)
	case 8:
		sumSquares8(sq, t, rows)
	default:
		sq = sq[:nr]
		for r := 0; r < rows; r++ {
			for c, v := range t[r*nr : (r+1)*nr] {
				sq[c] = math.FMA(v, v, sq[c])
			}
		}
	}
}

// scaleRows16 is gatherG's scaling for nr = 16, unrolled (no bounds checks, no loop over the columns).
func scaleRows16(gt, bt []float64, m int, sc *[16]float64) {
	for i := 0; i < m; i++ {
		d := (*[16]float64)(gt[i*16:])
		s := (*[16]float64)(bt[(m-1-i)*16:])
		d[0], d[1], d[2], d[3] = s[0]*sc[0], s[1]*sc[1], s[2]*sc[2], s[3]*sc[3]
		d[4], d[5], d[6], d[7] = s[4]*sc[4], s[5]*sc[5], s[6]*sc[6], s[7]*sc[7]
		d[8], d[9], d[10], d[11] = s[8]*sc[8], s[9]*sc[9], s[10]*sc[10], s[11]*sc[11]
		d[12], d[13], d[14], d[15] = s[12]*sc[12], s[13]*sc[13], s[14]*sc[14], s[15]*sc[15]
	}
}

// scaleRows8 is gatherG's scaling for nr = 8, unrolled (no bounds checks, no loop over the columns).
func scaleRows8(gt, bt []float64, m int, sc *[16]float64) {
	for i := 0; i < m; i++ {
		d := (*[8]float64)(gt[i*8:])
		s := (*[8]float64)(bt[(m-1-i)*8:])
		d[0], d[1], d[2], d[3] = s[0]*sc[0], s[1]*sc[1], s[2]*sc[2], s[3]*sc[3]
		d[4], d[5], d[6], d[7] = s[4]*sc[4], s[5]*sc[5], s[6]*sc[6], s[7]*sc[7]
	}
}

// sumSquares16 is sumSquares for nr = 16, unrolled: the sums in registers across the rows.
func sumSquares16(sq, t []float64, rows int) {
	q := (*[16]float64)(sq)
	s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11], q[12], q[13], q[14], q[15]
	for r := 0; r < rows; r++ {
		v := (*[16]float64)(t[r*16:])
		s0, s1, s2, s3 = math.FMA(v[0], v[0], s0), math.FMA(v[1], v[1], s1), math.FMA(v[2], v[2], s2), math.FMA(v[3], v[3], s3)
		s4, s5, s6, s7 = math.FMA(v[4], v[4], s4), math.FMA(v[5], v[5], s5), math.FMA(v[6], v[6], s6), math.FMA(v[7], v[7], s7)
		s8, s9, s10, s11 = math.FMA(v[8], v[8], s8), math.FMA(v[9], v[9], s9), math.FMA(v[10], v[10], s10), math.FMA(v[11], v[11], s11)
		s12, s13, s14, s15 = math.FMA(v[12], v[12], s12), math.FMA(v[13], v[13], s13), math.FMA(v[14], v[14], s14), math.FMA(v[15], v[15], s15)
	}
	q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11], q[12], q[13], q[14], q[15] = s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15
}

// sumSquares8 is sumSquares for nr = 8, unrolled: the sums in registers across the rows.
func sumSquares8(sq, t []float64, rows int) {
	q := (*[8]float64)(sq)
	s0, s1, s2, s3, s4, s5, s6, s7 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]
	for r := 0; r < rows; r++ {
		v := (*[8]float64)(t[r*8:])
		s0, s1, s2, s3 = math.FMA(v[0], v[0], s0), math.FMA(v[1], v[1], s1), math.FMA(v[2], v[2], s2), math.FMA(v[3], v[3], s3)
		s4, s5, s6, s7 = math.FMA(v[4], v[4], s4), math.FMA(v[5], v[5], s5), math.FMA(v[6], v[6], s6), math.FMA(v[7], v[7], s7)
	}
	q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7] = s0, s1, s2, s3, s4, s5, s6, s7
}
