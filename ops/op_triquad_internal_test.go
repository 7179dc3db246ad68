package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gorgonia.org/tensor"
)

// TestGemmTri checks gemmTri (both triangles, and lowerABt) against a plain triple loop, at sizes straddling
// the kernels' tiles and the recursion of the OpenBLAS build's gemmtRec; every entry must be written.
func TestGemmTri(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	for _, m := range []int{1, 7, 9, 64, 65, 130, 200} {
		for _, n := range []int{0, 1, 7, 300} {
			a, g := make([]float64, m*n), make([]float64, m*n)
			for i := range a {
				a[i], g[i] = rng.Float64()-0.5, rng.Float64()-0.5
			}
			for _, upper := range []bool{false, true} {
				want := make([]float64, m*m)
				for i := 0; i < m; i++ {
					for j := 0; j < m; j++ {
						if upper && j < i || !upper && j > i {
							continue
						}
						for k := 0; k < n; k++ {
							want[i*m+j] -= 0.5 * a[i*n+k] * g[j*n+k]
						}
					}
				}
				c := make([]float64, m*m)
				for i := range c {
					c[i] = math.NaN() // every entry must be written
				}
				gemmTri(upper, -0.5, dense(a, m, n), dense(g, m, n), dense(c, m, m))
				if !upper && n > 0 {
					l := make([]float64, m*m)
					lowerABt(dense(l, m, m), dense(a, m, n), dense(g, m, n))
					for i := range l {
						if math.Abs(-0.5*l[i]-c[i]) > 1e-12*float64(n) {
							t.Fatalf("lowerABt m=%d n=%d: entry (%d,%d) = %v, want %v", m, n, i/m, i%m, l[i], -2*c[i])
						}
					}
				}
				for i, w := range want {
					if !(math.Abs(c[i]-w) <= 1e-12*float64(n+1)) {
						t.Fatalf("upper=%v m=%d n=%d: entry (%d,%d) = %v, want %v", upper, m, n, i/m, i%m, c[i], w)
					}
				}
			}
		}
	}
}

// perFactorTriQuad is TriQuadCols as it was computed before the batched routine, one factor at a time through the
// installed BLAS: B_p = L_pᵀA (dtrmm) and its column sums of squares; G_p = 2·B_p·diag(ĝ_p), dL_p = tril(A·G_pᵀ)
// (lowerABt) and dA = Σ_p L_p·G_p (dtrmm).
func perFactorTriQuad(a []float64, m, n int, ls [][]float64, g []float64) (out, da []float64, dls [][]float64) {
	np := len(ls)
	out, da = make([]float64, n*np), make([]float64, m*n)
	for p, l := range ls {
		b := append([]float64(nil), a...)
		blas64.Trmm(blas.Left, blas.Trans, 1, triangular(l, m, false), dense(b, m, n))
		for i := 0; i < m; i++ {
			for j, v := range b[i*n : i*n+n] {
				out[j*np+p] += v * v
			}
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				b[i*n+j] *= 2 * g[j*np+p]
			}
		}
		dl := make([]float64, m*m)
		lowerABt(dense(dl, m, m), dense(a, m, n), dense(b, m, n))
		dls = append(dls, dl)
		blas64.Trmm(blas.Left, blas.NoTrans, 1, triangular(l, m, false), dense(b, m, n))
		for i, v := range b {
			da[i] += v
		}
	}
	return out, da, dls
}

// The build's engine (the batched routine in the purego build) against the per-factor computation it replaced,
// over edge shapes (M and N around the panel height 12, the kernels' tiles 4…16 and the column block 256; P = 1, 2,
// 8), through the op's own entry points (forward, then the joint backward on the cached products, and the
// per-input backward that recomputes them): out to 1e-13 relative, the gradients to 1e-12 relative to their
// largest entry, the strict upper triangle of dL_p exactly zero.
func TestTriQuadEngineMatchesPerFactor(t *testing.T) {
	t.Parallel()
	ms, ns, ps := []int{1, 2, 11, 12, 13, 16, 17, 31, 200, 257}, []int{1, 2, 3, 15, 16, 17, 100, 1024}, []int{1, 2, 8}
	for _, m := range ms {
		for _, n := range ns {
			for pi, np := range ps {
				if testing.Short() && m*m*n*np > 1<<22 && (m+n+pi)%3 != 0 {
					continue // a third of the large cases
				}
				rng := rand.New(rand.NewPCG(uint64(m), uint64(n*10+np)))
				a, g := make([]float64, m*n), make([]float64, n*np)
				for i := range a {
					a[i] = 2*rng.Float64() - 1
				}
				for i := range g {
					g[i] = 2*rng.Float64() - 1
				}
				ls, ins := make([][]float64, np), []arg{{data: a, shape: tensor.Shape{m, n}}}
				for p := range ls {
					ls[p] = make([]float64, m*m)
					for i := 0; i < m; i++ {
						for j := 0; j < m; j++ {
							ls[p][i*m+j] = 2*rng.Float64() - 1 // junk above the diagonal, not read
						}
						ls[p][i*m+i] = 1 + rng.Float64()
					}
					ins = append(ins, arg{data: ls[p], shape: tensor.Shape{m, m}})
				}
				wantOut, wantDA, wantDL := perFactorTriQuad(a, m, n, ls, g)
				k := triQuadK{p: np, ws: &triQuadWork{}}
				out := make([]float64, n*np)
				if err := k.forward(ins, out); err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("M=%d N=%d P=%d", m, n, np)
				for i := range out {
					if d := math.Abs(out[i] - wantOut[i]); !(d <= 1e-13*wantOut[i]) {
						t.Fatalf("%s: out[%d] = %v, per factor %v", what, i, out[i], wantOut[i])
					}
				}
				dst := [][]float64{make([]float64, m*n)}
				for range ls {
					dst = append(dst, make([]float64, m*m))
				}
				ga := arg{data: g, shape: tensor.Shape{n, np}}
				if err := k.backwardAll(ins, arg{}, ga, dst); err != nil {
					t.Fatal(err)
				}
				closeToMax := func(what string, got, want []float64) {
					t.Helper()
					var scale float64
					for _, v := range want {
						scale = math.Max(scale, math.Abs(v))
					}
					for i := range want {
						if d := math.Abs(got[i] - want[i]); !(d <= 1e-12*scale) {
							t.Fatalf("%s: entry %d = %v, per factor %v", what, i, got[i], want[i])
						}
					}
				}
				closeToMax(what+" dA", dst[0], wantDA)
				for p := range ls {
					closeToMax(fmt.Sprintf("%s dL%d", what, p), dst[1+p], wantDL[p])
					for i := 0; i < m; i++ {
						for j := i + 1; j < m; j++ {
							if dst[1+p][i*m+j] != 0 {
								t.Fatalf("%s dL%d[%d,%d] = %v above the diagonal", what, p, i, j, dst[1+p][i*m+j])
							}
						}
					}
				}
				one := make([]float64, m*m) // the per-input path recomputes the products: the same bits
				if err := k.backward(np, ins, arg{}, ga, one); err != nil {
					t.Fatal(err)
				}
				for i := range one {
					if math.Float64bits(one[i]) != math.Float64bits(dst[np][i]) {
						t.Fatalf("%s: dL%d by the per-input backward differs at %d: %v, joint %v", what, np-1, i, one[i], dst[np][i])
					}
				}
			}
		}
	}
}
