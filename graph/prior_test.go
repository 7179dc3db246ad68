package graph_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
)

// testNormal is the normal density N(mu, s²), named with its constants.
type testNormal struct{ mu, s float64 }

func (d testNormal) Name() string { return "test.normal" }
func (d testNormal) LogDensity(x float64) (float64, float64) {
	z := (x - d.mu) / d.s
	return -0.5*z*z - math.Log(d.s) - 0.5*math.Log(2*math.Pi), -z / d.s
}

// testPositiveOnly is log p(c) = −c on c > 0 (an exponential density), −Inf elsewhere.
type testPositiveOnly struct{}

func (testPositiveOnly) Name() string { return "test.exponential" }
func (testPositiveOnly) LogDensity(x float64) (float64, float64) {
	if x <= 0 {
		return math.Inf(-1), 0
	}
	return -x, -1
}

// TestLogPriorAndJacobian: Graph.LogPrior sums each prior over its Param's constrained entries, LogJacobian adds
// Σ log σ(raw) for Positive Params (t(r) = softplus(r) + floor) and 0 for Identity ones; both agree with plain Go,
// and the gradient of their sum with respect to the raw values agrees with finite differences.
func TestLogPriorAndJacobian(t *testing.T) {
	pos := mustParam(t, "pos", []float64{0.3, 1.7, 4}, graph.Positive{}, 3)
	id := mustParam(t, "id", []float64{-0.4, 0.9}, nil, 2)
	flat := mustParam(t, "flat", []float64{2}, graph.Positive{})
	if err := pos.SetPrior(testPositiveOnly{}); err != nil {
		t.Fatal(err)
	}
	if err := id.SetPrior(testNormal{mu: 0.5, s: 2}); err != nil {
		t.Fatal(err)
	}
	ps := []*graph.Param{pos, id, flat}
	g := graph.New(graph.Options{})
	lp, lj := g.LogPrior(ps), g.LogJacobian(ps)
	flatTerm := g.Scale(g.Sum(g.Param(flat)), 1e-3) // flat is in the loss, so that its gradient (the Jacobian's alone) is checked
	loss := g.Neg(g.Add(g.Add(lp, lj), flatTerm))
	prog, err := g.Compile(loss, map[string]*graph.Node{"lp": lp, "lj": lj})
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	wantLP, wantLJ := 0.0, 0.0
	for _, c := range pos.Value() {
		wantLP -= c
	}
	for _, c := range id.Value() {
		v, _ := testNormal{0.5, 2}.LogDensity(c)
		wantLP += v
	}
	for _, p := range []*graph.Param{pos, flat} {
		for _, r := range p.Raw() {
			wantLJ += math.Log(1 / (1 + math.Exp(-r)))
		}
	}
	if got := prog.Output("lp")[0]; math.Abs(got-wantLP) > 1e-13*math.Abs(wantLP) {
		t.Errorf("LogPrior = %.17g, want %.17g", got, wantLP)
	}
	if got := prog.Output("lj")[0]; math.Abs(got-wantLJ) > 1e-13*math.Abs(wantLJ) {
		t.Errorf("LogJacobian = %.17g, want %.17g", got, wantLJ)
	}
	gradcheck.CheckProgram(t, prog)

	if g := graph.New(graph.Options{}); g.LogPrior([]*graph.Param{flat}) != nil || g.LogJacobian(nil) != nil {
		t.Error("no prior, no Params: want nil nodes")
	}
}

// TestSetPriorAndSupport: a LowerTriangular Param refuses a prior (ErrPriorTransform), nil removes one, and
// CheckPriorSupport names the Param and entry outside the support.
func TestSetPriorAndSupport(t *testing.T) {
	tri := mustParam(t, "tri", []float64{1, 0, 0.5, 1}, graph.LowerTriangular{}, 2, 2)
	if err := tri.SetPrior(testNormal{0, 1}); !errors.Is(err, graph.ErrPriorTransform) {
		t.Errorf("LowerTriangular: %v, want ErrPriorTransform", err)
	}
	id := mustParam(t, "id", []float64{0.5, -1}, nil, 2)
	if err := id.SetPrior(testPositiveOnly{}); err != nil {
		t.Fatal(err)
	}
	var se *graph.SupportError
	if err := graph.CheckPriorSupport([]*graph.Param{id}); !errors.As(err, &se) || se.Param != "id" || se.Entry != 1 || se.Value != -1 {
		t.Errorf("CheckPriorSupport: %v, want a *SupportError for id entry 1 = -1", err)
	}
	if err := id.SetPrior(nil); err != nil || id.Prior() != nil {
		t.Errorf("SetPrior(nil): %v, prior %v", err, id.Prior())
	}
	if err := graph.CheckPriorSupport([]*graph.Param{id}); err != nil {
		t.Errorf("no prior: %v", err)
	}
}
