package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// triWithJunk returns an n×n input whose upper (or lower) triangle is a well-conditioned triangular factor and whose
// other triangle holds random junk: the op must ignore the junk, and its gradient there must be 0.
func triWithJunk(name string, rng *rand.Rand, n int, upper bool) gradcheck.Input {
	in := gradcheck.LowerTri(name, rng, n)
	if upper {
		transposeInPlace(in.Value, n)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if (upper && i > j) || (!upper && j > i) {
				in.Value[i*n+j] = 10 * (rng.Float64() - 0.5)
			}
		}
	}
	return in
}

func transposeInPlace(a []float64, n int) {
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			a[i*n+j], a[j*n+i] = a[j*n+i], a[i*n+j]
		}
	}
}

func TestTriSolveGrad(t *testing.T) {
	t.Parallel()
	for _, upper := range []bool{false, true} {
		for _, trans := range []bool{false, true} {
			for _, bShape := range [][]int{{5}, {5, 3}, {1}, {1, 2}} {
				n := bShape[0]
				t.Run(fmt.Sprintf("upper=%t,trans=%t,b=%v", upper, trans, bShape), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(len(bShape)), uint64(n)))
					gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
						return ops.TriSolve(in[0], in[1], upper, trans)
					}, []gradcheck.Input{triWithJunk("t", rng, n, upper), gradcheck.Random("b", rng, -1, 1, bShape...)})
				})
			}
		}
	}
}

// TestTriSolveResidual checks op(T)·X = B for the plain function (ignoring the junk triangle) and in place.
func TestTriSolveResidual(t *testing.T) {
	t.Parallel()
	const n, m = 40, 7
	rng := rand.New(rand.NewPCG(21, 22))
	for _, upper := range []bool{false, true} {
		for _, trans := range []bool{false, true} {
			tt := triWithJunk("t", rng, n, upper).Value
			b := gradcheck.Random("b", rng, -1, 1, n, m).Value
			x := make([]float64, n*m)
			ops.TriSolveTo(x, tt, b, n, m, upper, trans)
			for i := 0; i < n; i++ {
				for c := 0; c < m; c++ {
					s := 0.0
					for k := 0; k < n; k++ {
						r, col := i, k // op(T)[i,k]
						if trans {
							r, col = k, i
						}
						if (upper && r > col) || (!upper && col > r) {
							continue // the triangle that is not read
						}
						s += tt[r*n+col] * x[k*m+c]
					}
					if math.Abs(s-b[i*m+c]) > 1e-12*(1+maxAbs(x)) {
						t.Fatalf("upper=%t trans=%t: residual at (%d,%d): %g vs %g", upper, trans, i, c, s, b[i*m+c])
					}
				}
			}
			y := append([]float64(nil), b...)
			ops.TriSolveTo(y, tt, y, n, m, upper, trans)
			for i := range y {
				if y[i] != x[i] {
					t.Fatalf("in place differs at %d", i)
				}
			}
		}
	}
}
