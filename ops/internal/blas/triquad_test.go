package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// triQuadInputs returns A [m,n] in [−1, 1), p factors [m,m] lower triangular with garbage above the diagonal
// (which must not be read), and the upstream gradient ĝ [n,p] in [−1, 1).
func triQuadInputs(rng *rand.Rand, m, n, p int) (a []float64, ls [][]float64, g []float64) {
	a = operand(rng, m, n, n)[:m*n]
	for q := 0; q < p; q++ {
		l := operand(rng, m, m, m)[:m*m]
		for i := 0; i < m; i++ {
			for j := i + 1; j < m; j++ {
				l[i*m+j] = math.NaN()
			}
			l[i*m+i] = 1 + rng.Float64()
		}
		ls = append(ls, l)
	}
	return a, ls, operand(rng, n, p, p)[:n*p]
}

// triQuadRef is TriQuad by gonum's reference BLAS and plain loops, with entrywise error bounds: out, ∂A, ∂L_q
// and, for each, the bound on the error of a computation in another order (from the same sums over absolute
// values, γ_k = 2k·u each).
type triQuadRef struct {
	out, da []float64
	dls     [][]float64
	outB    []float64
	daB     []float64
	dlsB    [][]float64
}

func abs(x []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = math.Abs(v)
	}
	return y
}

func triQuadReference(a []float64, m, n int, ls [][]float64, g []float64) triQuadRef {
	const u = 0x1p-53
	p := len(ls)
	r := triQuadRef{out: make([]float64, n*p), outB: make([]float64, n*p), da: make([]float64, m*n), daB: make([]float64, m*n)}
	tril := func(l []float64) []float64 { // the lower triangle, zeros above
		t := make([]float64, m*m)
		for i := 0; i < m; i++ {
			copy(t[i*m:i*m+i+1], l[i*m:i*m+i+1])
		}
		return t
	}
	for q, l := range ls {
		lt := tril(l)
		b := append([]float64(nil), a...)
		ref.Dtrmm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, lt, m, b, n)
		bb := abs(a) // |L|ᵀ|A|: the bound on B's error is γ_m·bb
		ref.Dtrmm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, abs(lt), m, bb, n)
		for j := 0; j < n; j++ {
			var s, e float64
			for i := 0; i < m; i++ {
				v, ev := b[i*n+j], 2*float64(m+1)*u*bb[i*n+j]
				s += v * v
				e += 2*math.Abs(v)*ev + ev*ev
			}
			r.out[j*p+q] = s
			r.outB[j*p+q] = e + 2*float64(m+1)*u*s
		}
		gq, gqB := make([]float64, m*n), make([]float64, m*n) // G_q and the bound on its error
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				sc := 2 * g[j*p+q]
				gq[i*n+j] = b[i*n+j] * sc
				gqB[i*n+j] = 2*float64(m+2)*u*bb[i*n+j]*math.Abs(sc) + u*math.Abs(gq[i*n+j])
			}
		}
		// ∂A += L_q·G_q; its bound += |L_q|·(γ·|G_q| + bound of G_q), γ = γ_{m+p+2} (the products and the sum over q)
		t := append([]float64(nil), gq...)
		ref.Dtrmm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, lt, m, t, n)
		tb := abs(gq)
		for i := range tb {
			tb[i] = tb[i]*2*float64(m+p+2)*u + gqB[i]
		}
		ref.Dtrmm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, abs(lt), m, tb, n)
		for i := range t {
			r.da[i] += t[i]
			r.daB[i] += tb[i]
		}
		// ∂L_q = tril(A·G_qᵀ); its bound |A|·(γ_{n+2}·|G_q| + bound of G_q)ᵀ
		dl, dlB := make([]float64, m*m), make([]float64, m*m)
		full := make([]float64, m*m)
		ref.Dgemm(blas.NoTrans, blas.Trans, m, m, n, 1, a, n, gq, n, 0, full, m)
		ab := make([]float64, m*m)
		gb := abs(gq)
		for i := range gb {
			gb[i] = gb[i]*2*float64(n+2)*u + gqB[i]
		}
		ref.Dgemm(blas.NoTrans, blas.Trans, m, m, n, 1, abs(a), n, gb, n, 0, ab, m)
		for i := 0; i < m; i++ {
			copy(dl[i*m:i*m+i+1], full[i*m:i*m+i+1])
			copy(dlB[i*m:i*m+i+1], ab[i*m:i*m+i+1])
		}
		r.dls, r.dlsB = append(r.dls, dl), append(r.dlsB, dlB)
	}
	return r
}

// within fails unless |got − want| ≤ bound entrywise (NaN fails).
func within(t *testing.T, what string, got, want, bound []float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= bound[i]) {
			t.Fatalf("%s: entry %d = %v, reference %v (diff %.3g, bound %.3g)", what, i, got[i], want[i], d, bound[i])
		}
	}
}

// runTriQuad runs Forward and Backward on a fresh TriQuad (every gradient wanted unless only is ≥ 0: then only
// ∂A (only = 0) or ∂L_{only−1}) and returns out, ∂A and the ∂L_q.
func runTriQuad(a []float64, m, n int, ls [][]float64, g []float64, only int) (out, da []float64, dls [][]float64) {
	var w TriQuad
	p := len(ls)
	out = make([]float64, n*p)
	w.Forward(a, m, n, ls, out)
	if only < 0 || only == 0 {
		da = make([]float64, m*n)
		for i := range da {
			da[i] = math.NaN() // every entry must be written
		}
	}
	dls = make([][]float64, p)
	for q := range dls {
		if only < 0 || only == q+1 {
			dls[q] = make([]float64, m*m)
			for i := range dls[q] {
				dls[q][i] = math.NaN()
			}
		}
	}
	w.Backward(a, m, n, ls, g, da, dls)
	return out, da, dls
}

// TriQuad against the reference (gonum's Dtrmm, plain sums, gonum's Dgemm) at the edge shapes (M around the panel
// height 12 and the tiles 4, 6, 8, 12, 16; N around the tiles and kc), for every kernel: within the error bounds
// of the reference's own sums, the strict upper triangle of ∂L_q exactly zero, every entry written.
func TestTriQuad(t *testing.T) {
	ms := []int{1, 2, 11, 12, 13, 16, 17, 31, 200, 257}
	ns := []int{1, 2, 3, 15, 16, 17, 100, 1024}
	ps := []int{1, 2, 8}
	type c struct{ m, n, p int }
	var cases []c
	for _, m := range ms {
		for _, n := range ns {
			for _, p := range ps {
				if testing.Short() && m*m*n*p > 1<<22 {
					continue
				}
				cases = append(cases, c{m, n, p})
			}
		}
	}
	refs := map[c]triQuadRef{}
	eachKernel(t, func(t *testing.T) {
		for _, cs := range cases {
			m, n, p := cs.m, cs.n, cs.p
			rng := rand.New(rand.NewPCG(uint64(m), uint64(n*16+p)))
			a, ls, g := triQuadInputs(rng, m, n, p)
			r, ok := refs[cs]
			if !ok {
				r = triQuadReference(a, m, n, ls, g)
				refs[cs] = r
			}
			what := fmt.Sprintf("M=%d N=%d P=%d", m, n, p)
			out, da, dls := runTriQuad(a, m, n, ls, g, -1)
			within(t, what+" out", out, r.out, r.outB)
			within(t, what+" ∂A", da, r.da, r.daB)
			for q := range dls {
				within(t, fmt.Sprintf("%s ∂L%d", what, q), dls[q], r.dls[q], r.dlsB[q])
				for i := 0; i < m; i++ {
					for j := i + 1; j < m; j++ {
						if math.Float64bits(dls[q][i*m+j]) != 0 {
							t.Fatalf("%s ∂L%d[%d,%d] = %v above the diagonal, want +0", what, q, i, j, dls[q][i*m+j])
						}
					}
				}
			}
		}
	})
}

// Backward with only some gradients wanted gives the bits of the full call for those; a second Backward without a
// new Forward (the products consumed) recomputes them; a repeated Forward gives the same bits.
func TestTriQuadPartial(t *testing.T) {
	for _, s := range [][3]int{{13, 17, 3}, {200, 100, 2}} {
		m, n, p := s[0], s[1], s[2]
		rng := rand.New(rand.NewPCG(7, uint64(m)))
		a, ls, g := triQuadInputs(rng, m, n, p)
		out, da, dls := runTriQuad(a, m, n, ls, g, -1)
		for only := 0; only <= p; only++ {
			o, d, l := runTriQuad(a, m, n, ls, g, only)
			sameBits(t, "out", o, out)
			if only == 0 {
				sameBits(t, "∂A alone", d, da)
			} else {
				sameBits(t, fmt.Sprintf("∂L%d alone", only-1), l[only-1], dls[only-1])
			}
		}
		var w TriQuad
		o := make([]float64, n*p)
		w.Forward(a, m, n, ls, o)
		w.Forward(a, m, n, ls, o)
		sameBits(t, "out again", o, out)
		d := make([]float64, m*n)
		w.Backward(a, m, n, ls, g, d, make([][]float64, p))
		d2, l2 := make([]float64, m*n), make([][]float64, p)
		l2[p-1] = make([]float64, m*m)
		w.Backward(a, m, n, ls, g, d2, l2) // the products were consumed: recomputed
		sameBits(t, "∂A recomputed", d2, da)
		sameBits(t, "∂L recomputed", l2[p-1], dls[p-1])
	}
}

// triQuadRuns are TriQuad calls for the bitwise tests (kernels, GOMAXPROCS): out, ∂A and every ∂L_q in one slice.
func triQuadRuns(large bool) []level3Run {
	shapes := [][3]int{{13, 29, 2}, {37, 35, 3}}
	if large {
		shapes = [][3]int{{200, 301, 3}, {97, 1024, 2}, {257, 130, 1}}
	}
	var runs []level3Run
	for _, s := range shapes {
		m, n, p := s[0], s[1], s[2]
		rng := rand.New(rand.NewPCG(uint64(m), uint64(n)))
		a, ls, g := triQuadInputs(rng, m, n, p)
		runs = append(runs, level3Run{fmt.Sprintf("TriQuad m=%d n=%d p=%d", m, n, p), func() []float64 {
			out, da, dls := runTriQuad(a, m, n, ls, g, -1)
			all := append(out, da...)
			for _, dl := range dls {
				all = append(all, dl...)
			}
			return all
		}})
	}
	return runs
}

// Column j of out and of ∂A depends on column j of A and of ĝ only, bit for bit, wherever it sits (lanes_test.go).
func TestTriQuadLanes(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prevProcs)
	eachKernel(t, func(t *testing.T) {
		for _, procs := range []int{1, 3} {
			runtime.GOMAXPROCS(procs)
			for _, s := range [][3]int{{30, 16, 2}, {37, 301, 3}, {200, 256, 1}} {
				m, n, p := s[0], s[1], s[2]
				rng := rand.New(rand.NewPCG(uint64(m), 5))
				a, ls, g := triQuadInputs(rng, m, n, p)
				out, da, _ := runTriQuad(a, m, n, ls, g, 0)
				for _, sh := range []int{1, 5, 13} {
					sa := shiftLanes(a, m, n, n, false, sh)
					sg := shiftLanes(g, n, p, p, true, sh)
					o, d, _ := runTriQuad(sa, m, n, ls, sg, 0)
					name := fmt.Sprintf("m=%d n=%d p=%d GOMAXPROCS %d", m, n, p, procs)
					sameLanes(t, name+" out", o, out, n, p, p, true, sh)
					sameLanes(t, name+" ∂A", d, da, m, n, n, false, sh)
				}
			}
		}
	})
}
