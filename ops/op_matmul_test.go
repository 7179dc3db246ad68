package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

func TestMatMulGrad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ta, tb bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("tA=%t,tB=%t", tc.ta, tc.tb), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			sa, sb := []int{3, 4}, []int{4, 5}
			if tc.ta {
				sa = []int{4, 3}
			}
			if tc.tb {
				sb = []int{5, 4}
			}
			gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return ops.MatMul(in[0], in[1], tc.ta, tc.tb)
			}, []gradcheck.Input{gradcheck.Random("a", rng, -1, 1, sa...), gradcheck.Random("b", rng, -1, 1, sb...)})
		})
	}
}

func TestDotGrad(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.Dot(in[0], in[1]) },
		[]gradcheck.Input{gradcheck.Random("a", rng, -1, 1, 3, 2), gradcheck.Random("b", rng, -1, 1, 3, 2)})
}
