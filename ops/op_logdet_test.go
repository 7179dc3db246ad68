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

func TestLogDetCholGrad(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 41))
			gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return ops.LogDetChol(in[0])
			}, []gradcheck.Input{gradcheck.LowerTri("l", rng, n)})
		})
	}
}

func TestLogDetCholGolden(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 3, 8, 100} {
		rng := rand.New(rand.NewPCG(uint64(n), 42))
		a := spd(rng, n)
		l := make([]float64, n*n)
		if _, err := ops.CholeskyLower(l, a, n, ops.JitterPolicy{}); err != nil {
			t.Fatal(err)
		}
		var ch mat.Cholesky
		ch.Factorize(mat.NewSymDense(n, append([]float64(nil), a...)))
		want, got := ch.LogDet(), ops.CholLogDet(l, n)
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Fatalf("n=%d: CholLogDet = %.17g, gonum LogDet = %.17g", n, got, want)
		}
	}
}
