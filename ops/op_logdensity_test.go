package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// testGammaDensity is the gamma density with shape a and rate b: a smooth density with a bounded support
// (x > 0), so that the op's value and gradient are checked against the closed form and finite differences.
type testGammaDensity struct{ a, b float64 }

func (d testGammaDensity) Name() string {
	return fmt.Sprintf("test.gamma(%s,%s)", strconv.FormatFloat(d.a, 'g', -1, 64), strconv.FormatFloat(d.b, 'g', -1, 64))
}

func (d testGammaDensity) LogDensity(x float64) (float64, float64) {
	if !(x > 0) {
		return math.Inf(-1), 0
	}
	lg, _ := math.Lgamma(d.a)
	return d.a*math.Log(d.b) - lg + (d.a-1)*math.Log(x) - d.b*x, (d.a-1)/x - d.b
}

func logDensityBuild(d ops.ScalarDensity) gradcheck.Build {
	return func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.LogDensitySum(d, in[0]) }
}

// TestLogDensitySum: the value is the sum of the entries' log densities, the gradient matches central finite
// differences, an entry outside the support makes the sum −Inf, and a nil density is refused.
func TestLogDensitySum(t *testing.T) {
	t.Parallel()
	d := testGammaDensity{a: 2.5, b: 1.5}
	in := ewIn("x", []int{2, 3}, 0.3, 1, 2.5, 0.05, 4, 1.7)
	shape, got := ewEval(t, logDensityBuild(d), in)
	if len(shape) != 0 {
		t.Fatalf("shape %v, want a scalar", shape)
	}
	want := 0.0
	for _, x := range in.Value {
		lp, _ := d.LogDensity(x)
		want += lp
	}
	ewClose(t, "LogDensitySum", got, []float64{want}, 1e-15)
	rng := rand.New(rand.NewPCG(3, 9))
	for _, shape := range [][]int{{}, {4}, {3, 2}} {
		gradcheck.Check(t, logDensityBuild(d), []gradcheck.Input{gradcheck.Random("x", rng, 0.2, 3, shape...)})
	}
	_, got = ewEval(t, logDensityBuild(d), ewIn("x", []int{3}, 1, -0.5, 2))
	if !math.IsInf(got[0], -1) {
		t.Errorf("an entry outside the support: sum %v, want −Inf", got[0])
	}
	if n, err := ops.LogDensitySum(nil, nil); err == nil || n != nil {
		t.Errorf("nil density: node %v, error %v; want an error", n, err)
	}
}

// TestHashLogDensitySum: the density's constants are semantic; the same density built twice merges.
func TestHashLogDensitySum(t *testing.T) {
	t.Parallel()
	ld := func(d ops.ScalarDensity) variant {
		return func(a, _ *G.Node) (*G.Node, error) { return ops.LogDensitySum(d, a) }
	}
	checkHashes(t, 3, map[string]variant{
		"gamma(2,1)":      ld(testGammaDensity{2, 1}),
		"gamma(2,1),copy": ld(testGammaDensity{a: 2, b: 1}),
		"gamma(2,3)":      ld(testGammaDensity{2, 3}),
		"gamma(3,1)":      ld(testGammaDensity{3, 1}),
		"of b":            func(_, b *G.Node) (*G.Node, error) { return ops.LogDensitySum(testGammaDensity{2, 1}, b) },
		"sum":             func(a, _ *G.Node) (*G.Node, error) { return ops.Sum(a) },
	}, [2]string{"gamma(2,1)", "gamma(2,1),copy"})
}
