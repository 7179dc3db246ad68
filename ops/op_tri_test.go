package ops_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

func TestTrilGrad(t *testing.T) {
	t.Parallel()
	for _, k := range []int{-2, -1, 0, 1} {
		for _, shape := range [][]int{{3, 3}, {4, 2}, {2, 4}} {
			t.Run(fmt.Sprintf("k=%d/%v", k, shape), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(k+3), uint64(shape[1])))
				gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.Tril(in[0], k) },
					[]gradcheck.Input{gradcheck.Random("x", rng, -2, 2, shape...)})
			})
		}
	}
}

func TestLowerTriPositiveGrad(t *testing.T) {
	t.Parallel()
	for _, floor := range []float64{0, 1e-6, 0.25} {
		for _, n := range []int{1, 3} {
			t.Run(fmt.Sprintf("floor=%g/n=%d", floor, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), 9))
				gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.LowerTriPositive(in[0], floor) },
					[]gradcheck.Input{gradcheck.Random("u", rng, -3, 3, n, n)})
			})
		}
	}
}

func TestTriForward(t *testing.T) {
	t.Parallel()
	x := ewIn("x", []int{3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	for _, tc := range []struct {
		k    int
		want []float64
	}{
		{0, []float64{1, 0, 0, 4, 5, 0, 7, 8, 9}},
		{-1, []float64{0, 0, 0, 4, 0, 0, 7, 8, 0}},
		{1, []float64{1, 2, 0, 4, 5, 6, 7, 8, 9}},
		{-3, make([]float64, 9)},
	} {
		_, got := ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.Tril(in[0], tc.k) }, x)
		ewClose(t, fmt.Sprintf("Tril k=%d", tc.k), got, tc.want, 0)
	}
	_, got := ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.Tril(in[0], 0) },
		ewIn("x", []int{2, 3}, 1, 2, 3, 4, 5, 6))
	ewClose(t, "Tril [2,3]", got, []float64{1, 0, 0, 4, 5, 0}, 0)

	u := ewIn("u", []int{2, 2}, 0.3, 7, -1.2, -40)
	_, got = ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.LowerTriPositive(in[0], 0.1) }, u)
	ewClose(t, "LowerTriPositive", got, []float64{ops.SoftplusFloat(0.3) + 0.1, 0, -1.2, ops.SoftplusFloat(-40) + 0.1}, 1e-15)
}

func TestLowerTriPositiveInverse(t *testing.T) {
	t.Parallel()
	const n, floor = 3, 1e-3
	rng := rand.New(rand.NewPCG(1, 1))
	u := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			u[i*n+j] = 4*rng.Float64() - 2
		}
	}
	_, l := ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.LowerTriPositive(in[0], floor) },
		ewIn("u", []int{n, n}, u...))
	back, err := ops.LowerTriPositiveInverse(l, n, floor)
	if err != nil {
		t.Fatal(err)
	}
	ewClose(t, "round trip", back, u, 1e-13)

	for name, tc := range map[string]struct {
		l []float64
		n int
	}{
		"upper nonzero":   {[]float64{1, 0.5, 0, 1}, 2},
		"diag at floor":   {[]float64{1, 0, 0, floor}, 2},
		"diag below":      {[]float64{-1, 0, 0, 1}, 2},
		"NaN":             {[]float64{1, 0, math.NaN(), 1}, 2},
		"length":          {[]float64{1, 0, 0}, 2},
		"n=0":             {nil, 0},
		"Inf on diagonal": {[]float64{math.Inf(1)}, 1},
	} {
		r, err := ops.LowerTriPositiveInverse(tc.l, tc.n, floor)
		if err == nil || r != nil {
			t.Errorf("%s: got %v, %v; want an error", name, r, err)
		}
		var se *ops.ShapeError
		if (name == "length" || name == "n=0") != errors.As(err, &se) {
			t.Errorf("%s: error %v: ShapeError only for wrong sizes", name, err)
		}
		if (name == "NaN" || name == "Inf on diagonal") != errors.Is(err, ops.ErrNonFinite) {
			t.Errorf("%s: error %v: ErrNonFinite only for NaN/Inf", name, err)
		}
	}
}

func TestTriErrorsAndHash(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	v := ewLeaf(g, ewIn("v", []int{3}, 1, 2, 3))
	r := ewLeaf(g, ewIn("r", []int{2, 3}, 1, 2, 3, 4, 5, 6))
	n, err := ops.Tril(v, 0)
	ewWantShapeError(t, "Tril(vector)", n, err)
	n, err = ops.LowerTriPositive(r, 0)
	ewWantShapeError(t, "LowerTriPositive([2,3])", n, err)
	n, err = ops.LowerTriPositive(v, 0)
	ewWantShapeError(t, "LowerTriPositive(vector)", n, err)
	n, err = ops.Tril(nil, 0)
	ewWantError(t, "Tril(nil)", n, err)
	n, err = ops.LowerTriPositive(nil, 0)
	ewWantError(t, "LowerTriPositive(nil)", n, err)
	for _, f := range []float64{-1e-3, math.NaN(), math.Inf(1)} {
		n, err = ops.LowerTriPositive(r, f)
		ewWantError(t, fmt.Sprintf("LowerTriPositive(floor %v)", f), n, err)
	}

	tril := func(k int) func(*G.Node) (*G.Node, error) {
		return func(x *G.Node) (*G.Node, error) { return ops.Tril(x, k) }
	}
	ewDistinct(t, "Tril", ewGraphNodes(t, tril(-1), tril(0), tril(1), tril(-2)))
	g2 := G.NewGraph()
	sq := ewLeaf(g2, ewIn("sq", []int{2, 2}, 1, 2, 3, 4))
	var ns []*G.Node
	for _, f := range []float64{0, 1e-6, 0.1} {
		n, err := ops.LowerTriPositive(sq, f)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, n)
	}
	n, err = ops.Tril(sq, -1)
	if err != nil {
		t.Fatal(err)
	}
	ewDistinct(t, "LowerTriPositive", append(ns, n))
}
