package blas

import (
	pool "github.com/gpzoo/gpzoo/ops/internal/parallel"

	"math"
	"runtime"

	"gonum.org/v1/gonum/blas"
)

// panelRows is the height of the row panels of the triangular routines. It is a multiple of every kernel's mr
// and the same for all kernels, so that, as for Dgemm, every kernel gives the same bits.
const panelRows = 12

// tileGroup is the number of column tiles of B the triangular routines carry through one sweep of the triangle:
// each packed panel of the triangle is then read from memory once per tileGroup tiles (the rest from cache).
const tileGroup = 4

// stridedOrder is the largest order at which Dtrsm and Dtrmm read B's rows in place through the strided
// micro-kernel (microKernel.fnS), whole tiles of nr columns, instead of packing each tile first: up to it a
// tile's rows stay in the caches across the sweep, and the copies in and out cost more than the reads at B's
// stride. Measured single-threaded (in-process, paired): a forward solve (lower triangle, or upper transposed),
// whose panels are then solved where they are with no copy at all, 1.15-1.4x at orders 50-200 (a 500-row sweep in
// place was 0.8x: packing pays there), and so a solve sweeping from the last row (its panels' rows at a negative
// stride, with the assembly kernels); a product, which writes each panel from a scratch tile, 1.1-1.3x while the
// rows it reads span at most stridedSpan values of B (order × stride) and 0.94x beyond (200 rows of 1024). The
// same products in the same order either way: the same bits (TestTriangularStridedSameBits).
var stridedOrder = 256 // a variable for the tests, which force either path

// stridedSpan bounds order × stride of B (values) for Dtrmm's in-place path (see stridedOrder).
const stridedSpan = 1 << 17

// packQBlock is the number of rows of T a transposed triangle's packing reads at a time.
const packQBlock = 32

// tri describes a triangular operand in processing order: the routines sweep its rows p = 0, 1, …, order−1,
// and at row p use only the columns q ≤ p. row(p) maps processing row p to the row of op(T) and of B it stands
// for (p itself for a lower-triangular op(T), order−1−p for an upper one, whose sweep runs from the bottom).
type tri struct {
	t       []float64
	ld      int
	order   int
	trans   bool // op(T) = Tᵀ
	reverse bool // op(T) is upper triangular: sweep from the last row
	unit    bool // the diagonal is taken as 1 and not read
}

func newTri(ul blas.Uplo, tA blas.Transpose, d blas.Diag, order int, t []float64, ld int) tri {
	trans := tA != blas.NoTrans
	lowerOp := (ul == blas.Lower) != trans
	return tri{t: t, ld: ld, order: order, trans: trans, reverse: !lowerOp, unit: d == blas.Unit}
}

// row maps processing row p to the row of op(T) (and of B).
func (tr tri) row(p int) int {
	if tr.reverse {
		return tr.order - 1 - p
	}
	return p
}

// at returns L'[p][q] = op(T)[row(p), row(q)] for q ≤ p (1 on the diagonal of a unit triangle).
func (tr tri) at(p, q int) float64 {
	if p == q && tr.unit {
		return 1
	}
	i, j := tr.row(p), tr.row(q)
	if tr.trans {
		i, j = j, i
	}
	return tr.t[i*tr.ld+j]
}

// pack writes the triangle in row panels of panelRows rows, each made of micro-panels of mr rows as the kernel
// reads them: panel P (processing rows p0 = P·panelRows, …) holds the columns q < p0 + panelRows, the entries
// above the diagonal and beyond the last row being zero. offsets[P] is where panel P starts. The buffer comes
// from the pool: give it back with buffers.Put(buf).
func (tr tri) pack(mr int) (buf *[]float64, offsets []int) {
	panels := (tr.order + panelRows - 1) / panelRows
	offsets = make([]int, panels+1)
	for P := 0; P < panels; P++ {
		offsets[P+1] = offsets[P] + panelRows*(P+1)*panelRows
	}
	buf = getBuf(offsets[panels])
	packed := *buf
	clear(packed)
	if tr.trans {
		// L'[p][q] = T[row(q)][row(p)]: the mr values of a micro-panel column are adjacent in row row(q) of T.
		// Blocks of packQBlock rows of T at a time (they stay in cache) are spread over every panel that uses them.
		for q0 := 0; q0 < tr.order; q0 += packQBlock {
			q1 := min(q0+packQBlock, tr.order)
			for P := q0 / panelRows; P < panels; P++ {
				p0 := P * panelRows
				k := p0 + panelRows
				dst := packed[offsets[P]:offsets[P+1]]
				for s := 0; s < panelRows/mr; s++ {
					mp := dst[s*mr*k : (s+1)*mr*k]
					pLo := p0 + s*mr
					pHi := min(pLo+mr, tr.order) // rows pLo ≤ p < pHi
					step := 1                    // row(p) runs up (or down, reversed) with p: the values are adjacent in src
					if tr.reverse {
						step = -1
					}
					for q := q0; q < min(q1, k); q++ {
						src := tr.t[tr.row(q)*tr.ld:]
						p0 := max(pLo, q)
						if p0 >= pHi {
							continue
						}
						dst := mp[q*mr+p0-pLo : q*mr+pHi-pLo]
						for r, j := 0, tr.row(p0); r < len(dst); r, j = r+1, j+step {
							dst[r] = src[j]
						}
					}
				}
			}
		}
		if tr.unit {
			for p := 0; p < tr.order; p++ {
				P, r := p/panelRows, p%panelRows
				packed[offsets[P]+(r/mr)*mr*(P+1)*panelRows+p*mr+r%mr] = 1
			}
		}
		return buf, offsets
	}
	for P := 0; P < panels; P++ {
		p0 := P * panelRows
		k := p0 + panelRows
		dst := packed[offsets[P]:offsets[P+1]]
		for s := 0; s < panelRows/mr; s++ { // micro-panel s: rows p0 + s·mr + r
			mp := dst[s*mr*k : (s+1)*mr*k]
			for r := 0; r < mr; r++ {
				p := p0 + s*mr + r
				if p >= tr.order {
					break
				}
				tr.packRow(mp[r:], mr, p)
			}
		}
	}
	return buf, offsets
}

// packRow writes L'[p][q] for q ≤ p into dst[q·stride] (op(T) = T; pack handles transposed triangles).
func (tr tri) packRow(dst []float64, stride, p int) {
	i := tr.row(p)
	switch {
	case !tr.trans && !tr.reverse: // L'[p][q] = T[p][q]: row p of T, forward
		for q, v := range tr.t[i*tr.ld : i*tr.ld+p+1] {
			dst[q*stride] = v
		}
	case !tr.trans: // upper op(T) = T, reversed: L'[p][q] = T[i][order−1−q], q ≤ p ↔ columns i … order−1
		row := tr.t[i*tr.ld:]
		for q := 0; q <= p; q++ {
			dst[q*stride] = row[tr.order-1-q]
		}
	default:
		panic("blas: packRow of a transposed triangle")
	}
	if tr.unit {
		dst[p*stride] = 1
	}
}

// rhsTiles runs f on the column tiles [j0, j1) of n columns, split over up to GOMAXPROCS goroutines when the work
// (flops) is large enough; the goroutines get contiguous runs of tiles (multiples of nr columns).
func rhsTiles(n, nr int, flops float64, f func(j0, j1 int)) {
	tiles := (n + nr - 1) / nr
	w := min(runtime.GOMAXPROCS(0), int(flops/parallelFlops), tiles)
	if w <= 1 {
		f(0, n)
		return
	}
	pool.Do(w, func(s int) { f(s*tiles/w*nr, min((s+1)*tiles/w*nr, n)) })
}

// trsmLeft solves op(T)·X = alpha·B for X in place in B (order × n, stride ldb).
func trsmLeft(tr tri, n int, alpha float64, b []float64, ldb int) {
	if alpha != 1 {
		scaleC(tr.order, n, alpha, b, ldb, full)
		if alpha == 0 {
			return
		}
	}
	trsmLeftTo(tr, n, b, ldb, b, ldb)
}

// trsmLeftTo solves op(T)·X = B for X into x (order × n, stride ldx), reading B from b (stride ldb): B's tiles are
// packed from b and the solution written to x as each panel is solved, so that a solve into another matrix
// costs no copy. b and x may be the same matrix (a solve in place), not otherwise overlap.
func trsmLeftTo(tr tri, n int, b []float64, ldb int, x []float64, ldx int) {
	m := tr.order
	kern := sel.Active()
	mr, nr := kern.mr, kern.nr
	pk, offsets := tr.pack(mr)
	defer buffers.Put(pk)
	packed := *pk
	// The diagonal blocks of the panels, once: block P (row-major, panelRows × panelRows, strictly lower part;
	// identity rows beyond the triangle) at lbs[P·panelRows²], the reciprocals of its diagonal at dbs[P·panelRows].
	panels := (m + panelRows - 1) / panelRows
	lbs, dbs := make([]float64, panels*panelRows*panelRows), make([]float64, panels*panelRows)
	for P := 0; P < panels; P++ {
		p0 := P * panelRows
		lb, db := lbs[P*panelRows*panelRows:], dbs[P*panelRows:]
		for r := 0; r < panelRows; r++ {
			db[r] = 1
			if p0+r >= m {
				continue
			}
			for q := 0; q < r; q++ {
				lb[r*panelRows+q] = tr.at(p0+r, p0+q)
			}
			db[r] = 1 / tr.at(p0+r, p0+r) // the reciprocal: the substitution multiplies
		}
	}
	mPad := panels * panelRows
	// Columns [0, nIn): full tiles solved in x itself, the solved rows read by the strided kernel. A sweep from
	// the last row has its panels' rows at a negative stride, which only the assembly kernels take (the Go
	// kernels index slices): with the generic kernel it packs.
	negStride := kern.diagS != nil
	nIn := 0
	if m <= stridedOrder && kern.fnS != nil && (!tr.reverse || negStride) {
		nIn = n / nr * nr
	}
	inPlace := m > 0 && n > 0 && &x[0] == &b[0] && ldx == ldb
	b0, bs := tr.row(0)*ldx, ldx // processing row p of x at b0 + p·bs
	if tr.reverse {
		bs = -ldx
	}
	rhsTiles(n, nr, float64(m)*float64(m)*float64(n), func(j0, j1 int) {
		var tile [panelRows * 16]float64
		// In place: up to tileGroup tiles at a time, panel by panel (each panel of the triangle read once per
		// group); a whole panel of a tile solved in x, the last, partial one in a scratch tile.
		for jg := j0; jg < min(j1, nIn); jg += tileGroup * nr {
			tiles := min(tileGroup, (min(j1, nIn)-jg)/nr)
			// Solving into another matrix: the group's tiles of B are copied into x first, row by row (one copy
			// per row of the group rather than of every tile: the short copies cost a tenth of an SVGP step at
			// M = 100), and solved there while in cache (a copy of the whole stripe first left it to be read back
			// from memory when its rows outgrew the cache: [100, 6553] in a full-batch step).
			if !inPlace {
				for r := 0; r < m; r++ {
					copy(x[r*ldx+jg:r*ldx+jg+tiles*nr], b[r*ldb+jg:])
				}
			}
			for P := 0; P < panels; P++ {
				p0 := P * panelRows
				mv := min(panelRows, m-p0)
				for g := 0; g < tiles; g++ {
					jr := jg + g*nr
					inX := mv == panelRows
					c, ldc := tile[:panelRows*nr], nr // C's row r at c[r·ldc:] (in x: x[row(p0+r)·ldx + jr:])
					if inX {
						c, ldc = x[tr.row(p0)*ldx+jr:], bs
					} else {
						clear(c)
						for r := 0; r < mv; r++ {
							copy(c[r*nr:(r+1)*nr], b[tr.row(p0+r)*ldb+jr:])
						}
					}
					if p0 > 0 { // C −= L'[panel, :p0]·X[:p0]
						k := p0 + panelRows
						for s := 0; s < panelRows/mr; s++ {
							cs := c[s*mr*nr:]
							if inX {
								cs = x[tr.row(p0+s*mr)*ldx+jr:]
							}
							kern.fnS(p0, -1, packed[offsets[P]+s*mr*k:], 0, mr, x, b0+jr, bs, cs, ldc)
						}
					}
					diagSolveS(kern, lbs[P*panelRows*panelRows:], dbs[P*panelRows:], c, ldc)
					if !inX {
						for r := 0; r < mv; r++ {
							copy(x[tr.row(p0+r)*ldx+jr:][:nr], c[r*nr:])
						}
					}
				}
			}
		}
		j0 = max(j0, nIn)
		if j0 >= j1 {
			return
		}
		px := getBuf(tileGroup * mPad * nr)
		defer buffers.Put(px)
		// Packed: up to tileGroup column tiles at a time, each packed (row q of tile g at xp[(g·mPad+q)·nr:]) and
		// solved in place panel by panel: each panel of the triangle is read once per group.
		for jg := j0; jg < j1; jg += tileGroup * nr {
			tiles := min(tileGroup, (j1-jg+nr-1)/nr)
			packGroup(tr, b, ldb, jg, j1, tiles, m, *px, mPad, nr)
			for P := 0; P < panels; P++ {
				p0 := P * panelRows
				mv := min(panelRows, m-p0)
				for g := 0; g < tiles; g++ {
					xp := (*px)[g*mPad*nr : (g+1)*mPad*nr]
					t := xp[p0*nr : (p0+panelRows)*nr]
					if p0 > 0 { // t −= L'[panel, :p0]·X[:p0]
						k := p0 + panelRows
						for s := 0; s < panelRows/mr; s++ {
							kern.fn(p0, -1, packed[offsets[P]+s*mr*k:], xp, t[s*mr*nr:], nr)
						}
					}
					diagSolve(kern, lbs[P*panelRows*panelRows:], dbs[P*panelRows:], t, nr)
					jr := jg + g*nr
					nv := min(nr, j1-jr)
					for r := 0; r < mv; r++ { // the panel's rows are solved: out, while in cache
						copy(x[tr.row(p0+r)*ldx+jr:][:nv], t[r*nr:r*nr+nv])
					}
				}
			}
		}
	})
}

// packGroup copies the rows of B in processing order into the tiles tiles of nr columns from column jg (not
// beyond column j1), row by row across the tiles: row p of tile g at xp[(g·mPad+p)·nr:], zero beyond the last
// column and from row m to mPad.
func packGroup(tr tri, b []float64, ldb, jg, j1, tiles, m int, xp []float64, mPad, nr int) {
	for p := 0; p < m; p++ {
		row := b[tr.row(p)*ldb:]
		for g := 0; g < tiles; g++ {
			jr := jg + g*nr
			nv := min(nr, j1-jr)
			dst := xp[(g*mPad+p)*nr : (g*mPad+p+1)*nr]
			copy(dst, row[jr:jr+nv])
			if nv < nr {
				clear(dst[nv:])
			}
		}
	}
	for g := 0; g < tiles; g++ {
		clear(xp[(g*mPad+m)*nr : (g+1)*mPad*nr])
	}
}

// diagSolve solves the lower-triangular block l (panelRows × panelRows, row-major; only the strictly lower part
// is read) with diagonal d against the tile t (panelRows × nr) in place: row r becomes
// (t[r] − Σ_{s<r} l[r][s]·t[s])·d[r] (d: the reciprocals of the diagonal), with one rounding per multiply-add, by the kernel's vector code when it
// has some (the same bits).
func diagSolve(kern *microKernel, l, d, t []float64, nr int) {
	if kern.diag != nil {
		kern.diag(l, d, t)
		return
	}
	for r := 0; r < panelRows; r++ {
		row := t[r*nr : r*nr+nr]
		for s := 0; s < r; s++ {
			ls, src := l[r*panelRows+s], t[s*nr:s*nr+nr]
			for j := range row {
				row[j] = math.FMA(-ls, src[j], row[j])
			}
		}
		for j := range row {
			row[j] *= d[r]
		}
	}
}

// trmmLeft computes B = alpha·op(T)·B in place (B order × n, stride ldb).
func trmmLeft(tr tri, n int, alpha float64, b []float64, ldb int) {
	m := tr.order
	if alpha == 0 {
		scaleC(m, n, 0, b, ldb, full)
		return
	}
	kern := sel.Active()
	mr, nr := kern.mr, kern.nr
	pk, offsets := tr.pack(mr)
	defer buffers.Put(pk)
	packed := *pk
	mPad := roundUp(m, panelRows)
	nIn := 0 // columns [0, nIn): full tiles multiplied in place, B's rows read by the strided kernel
	if m <= stridedOrder && float64(m)*float64(ldb) <= stridedSpan && kern.fnS != nil {
		nIn = n / nr * nr
	}
	b0, bs := tr.row(0)*ldb, ldb // processing row p of B at b0 + p·bs
	if tr.reverse {
		bs = -ldb
	}
	panels := mPad / panelRows
	rhsTiles(n, nr, float64(m)*float64(m)*float64(n), func(j0, j1 int) {
		var tile [panelRows * 16]float64
		// In place: up to tileGroup tiles at a time, the panels from the last (a panel's product reads the rows
		// up to its own, not yet overwritten), each tile's panel computed in a scratch tile and written back.
		for jg := j0; jg < min(j1, nIn); jg += tileGroup * nr {
			tiles := min(tileGroup, (min(j1, nIn)-jg)/nr)
			for P := panels - 1; P >= 0; P-- {
				p0 := P * panelRows
				k := p0 + panelRows
				mv := min(panelRows, m-p0)
				for g := 0; g < tiles; g++ {
					jr := jg + g*nr
					t := tile[:panelRows*nr]
					clear(t)
					for s := 0; s < panelRows/mr; s++ { // the last panel's product stops at row m (its other terms are zeros)
						kern.fnS(min(k, m), alpha, packed[offsets[P]+s*mr*k:], 0, mr, b, b0+jr, bs, t[s*mr*nr:], nr)
					}
					for r := 0; r < mv; r++ {
						copy(b[tr.row(p0+r)*ldb+jr:][:nr], t[r*nr:])
					}
				}
			}
		}
		j0 = max(j0, nIn)
		if j0 >= j1 {
			return
		}
		px := getBuf(tileGroup * mPad * nr)
		defer buffers.Put(px)
		var tile2 [panelRows * 16]float64
		// Packed: up to tileGroup column tiles at a time, their original rows packed in processing order (row q
		// of tile g at xp[(g·mPad+q)·nr:]): each panel of the triangle is read once per group.
		for jg := j0; jg < j1; jg += tileGroup * nr {
			tiles := min(tileGroup, (j1-jg+nr-1)/nr)
			packGroup(tr, b, ldb, jg, j1, tiles, m, *px, mPad, nr)
			for P := 0; P*panelRows < m; P++ {
				p0 := P * panelRows
				k := p0 + panelRows
				for g := 0; g < tiles; g++ {
					jr := jg + g*nr
					nv := min(nr, j1-jr)
					mv := min(panelRows, m-p0)
					xp := (*px)[g*mPad*nr : (g+1)*mPad*nr]
					t := tile2[:panelRows*nr]
					clear(t)
					for s := 0; s < panelRows/mr; s++ {
						kern.fn(k, alpha, packed[offsets[P]+s*mr*k:], xp, t[s*mr*nr:], nr)
					}
					for r := 0; r < mv; r++ {
						copy(b[tr.row(p0+r)*ldb+jr:][:nv], t[r*nr:r*nr+nv])
					}
				}
			}
		}
	})
}

// transpose writes the transpose of the r×c matrix a (stride lda) into dst (c×r, stride ldd): eight rows of a at
// a time, so that each write fills 64 contiguous bytes (a cache line) of a row of dst while the eight reads stream.
func transpose(dst []float64, ldd int, a []float64, r, c, lda int) {
	i := 0
	for ; i+8 <= r; i += 8 {
		a0, a1, a2, a3 := a[i*lda:i*lda+c], a[(i+1)*lda:(i+1)*lda+c], a[(i+2)*lda:(i+2)*lda+c], a[(i+3)*lda:(i+3)*lda+c]
		a4, a5, a6, a7 := a[(i+4)*lda:(i+4)*lda+c], a[(i+5)*lda:(i+5)*lda+c], a[(i+6)*lda:(i+6)*lda+c], a[(i+7)*lda:(i+7)*lda+c]
		for j := range a0 {
			d := dst[j*ldd+i : j*ldd+i+8]
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = a0[j], a1[j], a2[j], a3[j], a4[j], a5[j], a6[j], a7[j]
		}
	}
	for ; i < r; i++ {
		for j, v := range a[i*lda : i*lda+c] {
			dst[j*ldd+i] = v
		}
	}
}

// rightSide runs a left-side routine on the transpose: B·op(T) = op(T)ᵀ-from-the-left on Bᵀ.
func rightSide(m, n int, b []float64, ldb int, left func(bt []float64, ldbt int)) {
	p := getBuf(m * n)
	defer buffers.Put(p)
	bt := *p // Bᵀ: n × m
	transpose(bt, m, b, m, n, ldb)
	left(bt, m)
	transpose(b, ldb, bt, n, m, m)
}

// flip returns the opposite transpose.
func flip(t blas.Transpose) blas.Transpose {
	if t == blas.NoTrans {
		return blas.Trans
	}
	return blas.NoTrans
}

// Dtrsm solves op(A)·X = alpha·B (side Left) or X·op(A) = alpha·B (side Right) for X, in place in B (m × n).
func (Implementation) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	triangular(s, ul, tA, d, m, n, alpha, a, lda, b, ldb, fewTrsm, trsmLeft)
}

// DtrsmLeftTo solves op(A)·X = B for X (m × n) into x (stride ldx), A m × m triangular (ul, tA, d as Dtrsm's),
// reading B from b (stride ldb) and leaving it untouched: Dtrsm(Left, ul, tA, d, m, n, 1, …) on a copy of B,
// the same bits, without the copy (B's tiles are packed from b, the solution written to x panel by panel). x may
// be b (a solve in place) but must not otherwise overlap it. Arguments are checked as Dtrsm checks them.
func (im Implementation) DtrsmLeftTo(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, a []float64, lda int, b []float64, ldb int, x []float64, ldx int) {
	k := checkTri(blas.Left, ul, tA, d, m, n, a, lda, b, ldb)
	switch {
	case ldx < max(1, n):
		panic(badLdB)
	case m > 0 && n > 0 && len(x) < ldx*(m-1)+n:
		panic(shortB)
	}
	switch {
	case m == 0 || n == 0:
	case fewRHS(blas.Left, m, n):
		if &x[0] != &b[0] {
			for i := 0; i < m; i++ {
				copy(x[i*ldx:i*ldx+n], b[i*ldb:i*ldb+n])
			}
		}
		fewTrsm(blas.Left, ul, tA, d, m, n, 1, a, lda, x, ldx)
	default:
		trsmLeftTo(newTri(ul, tA, d, k, a, lda), n, b, ldb, x, ldx)
	}
}

// Dtrmm computes B = alpha·op(A)·B (side Left) or B = alpha·B·op(A) (side Right) in place (B m × n).
func (Implementation) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	triangular(s, ul, tA, d, m, n, alpha, a, lda, b, ldb, fewTrmm, trmmLeft)
}

// triangular runs a triangular solve or product: arguments checked as gonum checks them, at most fewRHSMax
// right-hand sides by the level-2 loops few, otherwise by the left-side routine left (on Bᵀ for side Right).
func triangular(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int,
	few func(blas.Side, blas.Uplo, blas.Transpose, blas.Diag, int, int, float64, []float64, int, []float64, int),
	left func(tri, int, float64, []float64, int)) {
	k := checkTri(s, ul, tA, d, m, n, a, lda, b, ldb)
	switch {
	case m == 0 || n == 0:
	case fewRHS(s, m, n):
		few(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
	case s == blas.Left:
		left(newTri(ul, tA, d, k, a, lda), n, alpha, b, ldb)
	default:
		rightSide(m, n, b, ldb, func(bt []float64, ldbt int) { left(newTri(ul, flip(tA), d, k, a, lda), m, alpha, bt, ldbt) })
	}
}

// checkTri checks the arguments of Dtrsm and Dtrmm as gonum does and returns the triangle's order.
func checkTri(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, a []float64, lda int, b []float64, ldb int) int {
	switch {
	case s != blas.Left && s != blas.Right:
		panic(badSide)
	case ul != blas.Lower && ul != blas.Upper:
		panic(badUplo)
	case tA != blas.NoTrans && tA != blas.Trans && tA != blas.ConjTrans:
		panic(badTranspose)
	case d != blas.NonUnit && d != blas.Unit:
		panic(badDiag)
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	}
	k := n
	if s == blas.Left {
		k = m
	}
	switch {
	case lda < max(1, k):
		panic(badLdA)
	case ldb < max(1, n):
		panic(badLdB)
	}
	if m == 0 || n == 0 {
		return k
	}
	switch {
	case len(a) < lda*(k-1)+k:
		panic(shortA)
	case len(b) < ldb*(m-1)+n:
		panic(shortB)
	}
	return k
}
