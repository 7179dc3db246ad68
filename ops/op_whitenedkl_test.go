package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// whitenedKLInputs returns m [M,P] in [−2, 2) and P lower-triangular factors with positive diagonals and junk
// above the diagonal (which WhitenedKL must ignore).
func whitenedKLInputs(rng *rand.Rand, m, p int) []gradcheck.Input {
	in := []gradcheck.Input{gradcheck.Random("m", rng, -2, 2, m, p)}
	for k := 0; k < p; k++ {
		in = append(in, triWithJunk(fmt.Sprintf("l%d", k), rng, m, false))
	}
	return in
}

func whitenedKLBuild(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
	return ops.WhitenedKL(in[0], in[1:]...)
}

// naiveWhitenedKLBuild is the composition WhitenedKL replaces: ½[m·m + Σ_p tril(L_p)·tril(L_p) − MP]
// − ½Σ_p LogDetChol(L_p).
func naiveWhitenedKLBuild(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
	quad, err := ops.Dot(in[0], in[0])
	if err != nil {
		return nil, err
	}
	var logdets *G.Node
	for _, l := range in[1:] {
		lt, err := ops.Tril(l, 0)
		if err != nil {
			return nil, err
		}
		d, err := ops.Dot(lt, lt)
		if err != nil {
			return nil, err
		}
		if quad, err = ops.Add(quad, d); err != nil {
			return nil, err
		}
		ld, err := ops.LogDetChol(l)
		if err != nil {
			return nil, err
		}
		if logdets == nil {
			logdets = ld
		} else if logdets, err = ops.Add(logdets, ld); err != nil {
			return nil, err
		}
	}
	mp := float64(in[0].Shape()[0] * in[0].Shape()[1])
	diff, err := ops.Sub(quad, logdets)
	if err != nil {
		return nil, err
	}
	c := G.NewConstant(-mp)
	s, err := ops.Add(diff, c)
	if err != nil {
		return nil, err
	}
	return ops.Scale(s, 0.5)
}

// The gradients with respect to m and every factor against central finite differences (0 above the diagonal).
func TestWhitenedKLGrad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ m, p int }{{1, 1}, {4, 1}, {5, 3}, {12, 8}} {
		t.Run(fmt.Sprintf("M=%d,P=%d", c.m, c.p), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(c.m), uint64(c.p)))
			gradcheck.Check(t, whitenedKLBuild, whitenedKLInputs(rng, c.m, c.p))
		})
	}
}

// The value equals the composition it replaces.
func TestWhitenedKLMatchesNaive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ m, p int }{{1, 1}, {7, 2}, {40, 8}} {
		rng := rand.New(rand.NewPCG(uint64(c.m), 7))
		in := whitenedKLInputs(rng, c.m, c.p)
		_, got := ewEval(t, whitenedKLBuild, in...)
		_, want := ewEval(t, naiveWhitenedKLBuild, in...)
		ewClose(t, fmt.Sprintf("M=%d,P=%d", c.m, c.p), got, want, 1e-13)
	}
}

func TestWhitenedKLErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m := ewLeaf(g, ewIn("m", []int{3, 2}, 1, 2, 3, 4, 5, 6))
	l3 := ewLeaf(g, ewIn("l3", []int{3, 3}, 1, 0, 0, 1, 1, 0, 1, 1, 1))
	l2 := ewLeaf(g, ewIn("l2", []int{2, 2}, 1, 0, 1, 1))
	n, err := ops.WhitenedKL(m, l3) // 2 outputs, 1 factor
	ewWantShapeError(t, "one factor for two outputs", n, err)
	n, err = ops.WhitenedKL(m, l3, l2)
	ewWantShapeError(t, "a factor of the wrong order", n, err)
	n, err = ops.WhitenedKL(m)
	ewWantShapeError(t, "no factors", n, err)
}
