package ops

import (
	"math"
	"math/rand/v2"
	"testing"
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
