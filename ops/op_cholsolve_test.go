package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
)

func TestCholSolveGrad(t *testing.T) {
	t.Parallel()
	for _, bShape := range [][]int{{5}, {5, 3}, {1}, {1, 2}, {6, 6}} {
		n := bShape[0]
		t.Run(fmt.Sprintf("b=%v", bShape), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(len(bShape)), uint64(n)+100))
			gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return ops.CholSolve(in[0], in[1])
			}, []gradcheck.Input{triWithJunk("l", rng, n, false), gradcheck.Random("b", rng, -1, 1, bShape...)})
		})
	}
}

func TestCholSolveResidual(t *testing.T) {
	t.Parallel()
	const n, m = 50, 4
	rng := rand.New(rand.NewPCG(31, 32))
	a := spd(rng, n)
	b := gradcheck.Random("b", rng, -1, 1, n, m).Value
	l := make([]float64, n*n)
	if _, err := ops.CholeskyLower(l, a, n, ops.JitterPolicy{}); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, n*m)
	ops.CholSolveTo(x, l, b, n, m)
	var ax mat.Dense
	ax.Mul(mat.NewDense(n, n, a), mat.NewDense(n, m, x))
	for i, v := range ax.RawMatrix().Data {
		if math.Abs(v-b[i]) > 1e-12*maxAbs(a)*maxAbs(x) {
			t.Fatalf("residual at %d: %g vs %g", i, v, b[i])
		}
	}
	// Golden: gonum's Cholesky.SolveTo.
	var ch mat.Cholesky
	ch.Factorize(mat.NewSymDense(n, append([]float64(nil), a...)))
	var xs mat.Dense
	if err := ch.SolveTo(&xs, mat.NewDense(n, m, append([]float64(nil), b...))); err != nil {
		t.Fatal(err)
	}
	for i, v := range xs.RawMatrix().Data {
		if math.Abs(v-x[i]) > 1e-12*(1+math.Abs(v)) {
			t.Fatalf("x[%d] = %g, gonum %g", i, x[i], v)
		}
	}
}
