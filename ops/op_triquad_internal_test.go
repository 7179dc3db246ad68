package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// TestLowerABt checks lowerABt against a plain triple loop, at sizes straddling triQuadBlock and the recursion.
func TestLowerABt(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	for _, m := range []int{1, 7, 9, triQuadBlock, triQuadBlock + 1, 130, 200} {
		for _, n := range []int{1, 7, 300} {
			a, g := make([]float64, m*n), make([]float64, m*n)
			for i := range a {
				a[i], g[i] = rng.Float64()-0.5, rng.Float64()-0.5
			}
			want := make([]float64, m*m)
			for i := 0; i < m; i++ {
				for j := 0; j <= i; j++ {
					for k := 0; k < n; k++ {
						want[i*m+j] += a[i*n+k] * g[j*n+k]
					}
				}
			}
			for name, f := range map[string]func(c, a, g blas64.General){"lowerABt": lowerABt} {
				c := make([]float64, m*m)
				for i := range c {
					c[i] = math.NaN() // every entry must be written
				}
				f(dense(c, m, m), dense(a, m, n), dense(g, m, n))
				for i, w := range want {
					if math.Abs(c[i]-w) > 1e-12*float64(n) {
						t.Fatalf("%s m=%d n=%d: entry (%d,%d) = %v, want %v", name, m, n, i/m, i%m, c[i], w)
					}
				}
			}
		}
	}
}
