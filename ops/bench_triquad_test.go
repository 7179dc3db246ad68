package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// BenchmarkTriQuadCols times one TapeMachine run of loss = Dot(W, TriQuadCols(A, L_1..L_P)) with the gradients
// with respect to A and every L_p ("fused"), against the composition it replaces, StackCols(SumRows(Square(
// MatMul(L_p, A, true, false)))...) ("naive"), at the sizes of a deep-GP layer (N = 1024, M = 100 and 200,
// P = 1, 8, 30). GFLOP/s counts each method's own level-3 work (a multiply-add is 2 flops), so compare ns/op:
//
//	fused: forward M²N (dtrmm), backward M²N (dtrmm for dA) + ≈ M²N (lower triangle of A·G_pᵀ), per output
//	naive: forward 2M²N (dgemm), backward 4M²N (two dgemm), per output
func BenchmarkTriQuadCols(b *testing.B) {
	const n = 1024
	for _, m := range []int{100, 200} {
		for _, p := range []int{1, 8, 30} {
			mmn := float64(m) * float64(m) * float64(n) * float64(p)
			for _, c := range []struct {
				name  string
				flops float64
				build func(a *G.Node, ls []*G.Node) (*G.Node, error)
			}{
				{"fused", 3 * mmn, func(a *G.Node, ls []*G.Node) (*G.Node, error) { return ops.TriQuadCols(a, ls...) }},
				{"naive", 6 * mmn, naiveTriQuad},
			} {
				b.Run(fmt.Sprintf("M=%d,N=%d,P=%d/%s", m, n, p, c.name), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 1))
					g := G.NewGraph()
					a := matNode(g, "a", m, n, benchRandom(rng, m*n))
					ls := make([]*G.Node, p)
					for k := range ls {
						ls[k] = matNode(g, fmt.Sprint("l", k), m, m, benchLower(b, rng, m))
					}
					out, err := c.build(a, ls)
					if err != nil {
						b.Fatal(err)
					}
					loss, err := ops.Dot(matNode(g, "w", n, p, benchRandom(rng, n*p)), out)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := G.Grad(loss, append([]*G.Node{a}, ls...)...); err != nil {
						b.Fatal(err)
					}
					runTape(b, g, c.flops)
				})
			}
		}
	}
}

// naiveTriQuad is StackCols(SumRows(Square(MatMul(L_p, A, true, false)))...) (the factors are lower triangular).
func naiveTriQuad(a *G.Node, ls []*G.Node) (*G.Node, error) {
	cols := make([]*G.Node, len(ls))
	for k, l := range ls {
		b, err := ops.MatMul(l, a, true, false)
		if err != nil {
			return nil, err
		}
		if b, err = ops.Square(b); err != nil {
			return nil, err
		}
		if cols[k], err = ops.SumRows(b); err != nil {
			return nil, err
		}
	}
	return ops.StackCols(cols...)
}
