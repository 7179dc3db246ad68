package blas

import (
	pool "github.com/gpzoo/gpzoo/ops/internal/parallel"

	"runtime"
	"sync"
)

// parallelFlops is the work (2·m·n·k) below which a call runs on the calling goroutine: about 25 µs of work at
// one core's speed, well above the cost of starting and joining goroutines.
const parallelFlops = 2e6

// matrix is a row-major operand with a transpose flag: op(M)[i,j] = M[i,j], or M[j,i] when t.
type matrix struct {
	data []float64
	ld   int
	t    bool
}

// sub returns the operand whose op starts at op(M)[i,j].
func (m matrix) sub(i, j int) matrix {
	if m.t {
		i, j = j, i
	}
	if len(m.data) == 0 {
		return m
	}
	return matrix{data: m.data[i*m.ld+j:], ld: m.ld, t: m.t}
}

// scaleC sets C[0:m,0:n] = beta·C in the part pt; beta = 0 overwrites (NaN included), as reference BLAS does.
func scaleC(m, n int, beta float64, c []float64, ldc int, pt part) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		lo, hi := 0, n
		if pt.lower {
			hi = min(n, max(0, i+pt.off+1))
		} else if pt.upper {
			lo = min(n, max(0, i+pt.off))
		}
		if lo >= hi {
			continue
		}
		row := c[i*ldc+lo : i*ldc+hi]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// part restricts a product to one triangle of C: entry (i, j) of the call's C is computed only where
// j ≤ i + off (lower) or j ≥ i + off (upper); the other entries are neither read nor written. The zero part
// (upper and lower false) is the whole matrix.
type part struct {
	lower, upper bool
	off          int
}

// full is the whole matrix.
var full part

// keep reports whether entry (i, j) is in the part.
func (p part) keep(i, j int) bool {
	switch {
	case p.lower:
		return j <= i+p.off
	case p.upper:
		return j >= i+p.off
	}
	return true
}

// shift returns the part as seen from the sub-matrix that starts at (i0, j0).
func (p part) shift(i0, j0 int) part {
	p.off += i0 - j0
	return p
}

// tile classifies the r × c tile at (i, j): skip (no entry in the part), whole (every entry in it) or neither.
func (p part) tile(i, j, r, c int) (skip, whole bool) {
	switch {
	case p.lower:
		return j > i+r-1+p.off, j+c-1 <= i+p.off
	case p.upper:
		return j+c-1 < i+p.off, j >= i+r-1+p.off
	}
	return false, true
}

// gemm computes C = alpha·op(A)·op(B) + beta·C for op(A) [m,k], op(B) [k,n], C [m,n] (row-major, stride ldc),
// restricted to the part pt of C. Arguments are not checked (Dgemm does that).
func gemm(m, n, k int, alpha float64, a, b matrix, beta float64, c []float64, ldc int, pt part) {
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleC(m, n, beta, c, ldc, pt)
		return
	}
	// With beta = 0 each tile of C is cleared just before its first product, while it is in cache, instead of in
	// a pass over the whole of C first: a tall or wide C with a short k (an outer product's gradient) was cleared
	// in memory, then read back and written again.
	zero := beta == 0 && k <= kc
	if !zero {
		scaleC(m, n, beta, c, ldc, pt)
	}
	kern := sel.Active()
	work := func(i0, i1, j0, j1 int) {
		gemmSerial(kern, i1-i0, j1-j0, k, alpha, a.sub(i0, 0), b.sub(0, j0), c[i0*ldc+j0:], ldc, pt.shift(i0, j0), zero)
	}
	if pt != full {
		parallelTriangle(m, n, k, kern, pt, work)
		return
	}
	parallel(m, n, 2*float64(m)*float64(n)*float64(k), kern, work)
}

// parallelTriangle splits a triangular part of an [m,n] output into stripes of rows of about equal area, aligned
// to the kernel's tile, run on up to GOMAXPROCS goroutines when the work is large enough.
func parallelTriangle(m, n, k int, kern *microKernel, pt part, f func(i0, i1, j0, j1 int)) {
	// width(i): the number of entries of row i in the part.
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
	w := min(runtime.GOMAXPROCS(0), int(2*area*float64(k)/parallelFlops), (m+kern.mr-1)/kern.mr)
	// span calls f on rows [lo, hi) and only the columns the part has there (a lower triangle's top rows need
	// few): no packing or tile loop over the columns it would skip.
	span := func(lo, hi int) {
		j0, j1 := 0, n
		if pt.lower {
			j1 = min(n, max(0, hi-1+pt.off+1))
		} else {
			j0 = min(n, max(0, lo+pt.off))
		}
		if j0 < j1 {
			f(lo, hi, j0, j1)
		}
	}
	if w <= 1 {
		span(0, m)
		return
	}
	bounds := make([]int, 0, w+1)
	bounds = append(bounds, 0)
	var acc float64
	for i := 0; i < m && len(bounds) < w; i++ {
		acc += width(i)
		if acc >= area*float64(len(bounds))/float64(w) {
			if b := roundUp(i+1, kern.mr); b > bounds[len(bounds)-1] && b < m {
				bounds = append(bounds, b)
			}
		}
	}
	bounds = append(bounds, m)
	pool.Do(len(bounds)-1, func(s int) { span(bounds[s], bounds[s+1]) })
}

// parallel splits the [m,n] output into stripes along its longer side, aligned to the kernel's tile, and calls
// f(i0, i1, j0, j1) on each, on the caller and the pool of ops/internal/parallel (up to GOMAXPROCS stripes) when the call's work (flops) is
// large enough.
func parallel(m, n int, flops float64, kern *microKernel, f func(i0, i1, j0, j1 int)) {
	w := min(runtime.GOMAXPROCS(0), int(flops/parallelFlops))
	byRows := m >= n
	step := kern.nr
	if byRows {
		step = kern.mr
	}
	long := n
	if byRows {
		long = m
	}
	w = min(w, (long+step-1)/step)
	if w <= 1 {
		f(0, m, 0, n)
		return
	}
	tiles := (long + step - 1) / step
	pool.Do(w, func(s int) {
		lo, hi := s*tiles/w*step, min((s+1)*tiles/w*step, long)
		if byRows {
			f(lo, hi, 0, n)
		} else {
			f(0, m, lo, hi)
		}
	})
}

// buffers recycles packing buffers.
var buffers sync.Pool

func getBuf(n int) *[]float64 {
	if p, ok := buffers.Get().(*[]float64); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float64, n)
	return &s
}

// gemmSerial is the blocked product C += alpha·op(A)·op(B) on the calling goroutine (C already scaled), or
// C = alpha·op(A)·op(B) when zero (each tile of C cleared before its first block of k), restricted to the part pt
// of C: tiles outside it are skipped, tiles across its border computed in a scratch tile of which only the
// entries in the part are written back.
func gemmSerial(kern *microKernel, m, n, k int, alpha float64, a, b matrix, c []float64, ldc int, pt part, zero bool) {
	mr, nr := kern.mr, kern.nr
	nc := min(kern.nc, roundUp(n, nr))
	mc := min(kern.mc, roundUp(m, mr))
	pa, pb := getBuf(mc*kc), getBuf(kc*nc)
	defer func() { buffers.Put(pa); buffers.Put(pb) }()
	ap, bp := *pa, *pb
	var tmp [16 * 16]float64 // an edge tile (mr, nr ≤ 16)
	for jc := 0; jc < n; jc += nc {
		ncb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kcb := min(kc, k-pc)
			packB(bp, b, pc, jc, kcb, ncb, nr)
			for ic := 0; ic < m; ic += mc {
				mcb := min(mc, m-ic)
				packA(ap, a, ic, pc, mcb, kcb, mr)
				for jr := 0; jr < ncb; jr += nr {
					bj := bp[jr*kcb : (jr+nr)*kcb]
					nv := min(nr, ncb-jr)
					for ir := 0; ir < mcb; ir += mr {
						ai := ap[ir*kcb : (ir+mr)*kcb]
						mv := min(mr, mcb-ir)
						skip, whole := pt.tile(ic+ir, jc+jr, mv, nv)
						if skip {
							continue
						}
						ct := c[(ic+ir)*ldc+jc+jr:]
						first := zero && pc == 0
						if mv == mr && nv == nr && whole {
							if first {
								for i := 0; i < mr; i++ {
									clear(ct[i*ldc : i*ldc+nr])
								}
							}
							kern.fn(kcb, alpha, ai, bj, ct, ldc)
							continue
						}
						t := tmp[:mr*nr]
						clear(t)
						for i := 0; !first && i < mv; i++ {
							copy(t[i*nr:i*nr+nv], ct[i*ldc:i*ldc+nv])
						}
						kern.fn(kcb, alpha, ai, bj, t, nr)
						if whole {
							for i := 0; i < mv; i++ {
								copy(ct[i*ldc:i*ldc+nv], t[i*nr:i*nr+nv])
							}
							continue
						}
						for i := 0; i < mv; i++ {
							for j := 0; j < nv; j++ {
								if pt.keep(ic+ir+i, jc+jr+j) {
									ct[i*ldc+j] = t[i*nr+j]
								}
							}
						}
					}
				}
			}
		}
	}
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// packA packs op(A)[i0:i0+mcb, p0:p0+kcb] into micro-panels of mr rows: panel r holds, for each p, the mr values
// op(A)[i0+r·mr+i, p0+p] (zero below row mcb).
func packA(dst []float64, a matrix, i0, p0, mcb, kcb, mr int) {
	for ir := 0; ir < mcb; ir += mr {
		panel := dst[ir*kcb : (ir+mr)*kcb]
		mv := min(mr, mcb-ir)
		if mv < mr {
			clear(panel)
		}
		if !a.t {
			interleave(panel, a.data[(i0+ir)*a.ld+p0:], a.ld, mv, kcb, mr)
			continue
		}
		copyRows(panel, a.data[p0*a.ld+i0+ir:], a.ld, kcb, mv, mr) // op(A)[i,p] = A[p,i]: row p of A holds the panel's values contiguously
	}
}

// copyRows copies the first n values of k rows of src (stride ld) into dst at stride width: dst[p·width + j] =
// src[p·ld + j].
func copyRows(dst, src []float64, ld, k, n, width int) {
	for p := 0; p < k; p++ {
		copy(dst[p*width:p*width+n], src[p*ld:p*ld+n])
	}
}

// packB packs op(B)[p0:p0+kcb, j0:j0+ncb] into micro-panels of nr columns: panel s holds, for each p, the nr
// values op(B)[p0+p, j0+s·nr+j] (zero beyond column ncb).
func packB(dst []float64, b matrix, p0, j0, kcb, ncb, nr int) {
	for jr := 0; jr < ncb; jr += nr {
		panel := dst[jr*kcb : (jr+nr)*kcb]
		nv := min(nr, ncb-jr)
		if nv < nr {
			clear(panel)
		}
		if !b.t {
			copyRows(panel, b.data[p0*b.ld+j0+jr:], b.ld, kcb, nv, nr)
			continue
		}
		interleave(panel, b.data[(j0+jr)*b.ld+p0:], b.ld, nv, kcb, nr) // op(B)[p,j] = B[j,p]
	}
}

// interleave writes the first k values of the rows rows of src (stride ld) into dst k-major: dst[p·width + i] =
// src[i·ld + p] for i < rows, p < k (the columns rows … width−1 of dst untouched): the packing of a row-major
// operand into micro-panels, a transpose. The active kernel's vector code transposes blocks of 8 × 8 or 4 × 4 in
// registers (pack_amd64.s); the rest, and the generic kernel, go through interleaveGo. Moves only: the same
// values whatever the path.
func interleave(dst, src []float64, ld, rows, k, width int) {
	if rows == 0 || k == 0 {
		return
	}
	_, _ = dst[(k-1)*width+rows-1], src[(rows-1)*ld+k-1] // the bounds of every access below
	i := interleaveArch(dst, src, ld, rows, k, width)
	if i < rows {
		interleaveGo(dst[i:], src[i*ld:], ld, rows-i, 0, k, width)
	}
}

// interleaveGo is interleave on the columns [k0, k1): four rows at a time, each read in order, so that every
// step stores four adjacent values.
func interleaveGo(dst, src []float64, ld, rows, k0, k1, width int) {
	if k0 >= k1 {
		return
	}
	i := 0
	for ; i+4 <= rows; i += 4 {
		r0 := src[i*ld+k0 : i*ld+k1]
		r1, r2, r3 := src[(i+1)*ld+k0:][:len(r0)], src[(i+2)*ld+k0:][:len(r0)], src[(i+3)*ld+k0:][:len(r0)]
		d := dst[k0*width+i:]
		for p := range r0 {
			q := (*[4]float64)(d[p*width:])
			q[0], q[1], q[2], q[3] = r0[p], r1[p], r2[p], r3[p]
		}
	}
	for ; i < rows; i++ {
		d := dst[k0*width+i:]
		for p, v := range src[i*ld+k0 : i*ld+k1] {
			d[p*width] = v
		}
	}
}
