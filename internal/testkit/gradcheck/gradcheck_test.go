package gradcheck_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// recorder counts the failures a check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs int
}

func (r *recorder) Errorf(string, ...any) { r.errs++ }
func (r *recorder) Fatalf(format string, args ...any) {
	r.TB.Fatalf("unexpected fatal: "+format, args...)
}

// The checker must fail on a wrong gradient: gorgonia's built-in InverseSqrt, whose gradient is wrong upstream
// (−g/(2y³) instead of −g·y³/2), is the negative control; our ops.InvSqrt is the positive one.
func TestCheckCatchesWrongGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	in := []gradcheck.Input{gradcheck.Random("x", rng, 0.5, 2, 3)}
	bad := &recorder{TB: t}
	gradcheck.Check(bad, func(_ *G.ExprGraph, xs []*G.Node) (*G.Node, error) { return G.InverseSqrt(xs[0]) }, in)
	if bad.errs == 0 {
		t.Error("gradcheck passed gorgonia's InverseSqrt, whose gradient is wrong: the checker cannot fail")
	}
	good := &recorder{TB: t}
	gradcheck.Check(good, func(_ *G.ExprGraph, xs []*G.Node) (*G.Node, error) { return ops.InvSqrt(xs[0]) }, in)
	if good.errs != 0 {
		t.Errorf("gradcheck rejected ops.InvSqrt (%d entries)", good.errs)
	}
}
