package likelihoods

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// Helpers shared by the likelihoods of this package: configuration checks, operand checks for the graph and for
// the plain-Go predictive methods, and Gauss–Hermite predictive densities.

// likConfigErr returns an error wrapping gp.ErrConfig.
func likConfigErr(format string, args ...any) error {
	return fmt.Errorf("likelihoods: %w: "+format, append([]any{gp.ErrConfig}, args...)...)
}

// quadPointsOrDefault resolves a QuadPoints config field: 0 means ops.DefaultQuadPoints; negative is an error.
func quadPointsOrDefault(lik string, p int) (int, error) {
	switch {
	case p == 0:
		return ops.DefaultQuadPoints, nil
	case p < 0:
		return 0, likConfigErr("%s: QuadPoints %d must be ≥ 0", lik, p)
	}
	return p, nil
}

// positiveOrDefault resolves a positive float config field: 0 means def; anything not finite and > 0 is an error.
func positiveOrDefault(lik, field string, v, def float64) (float64, error) {
	if v == 0 {
		return def, nil
	}
	if !(v > 0) || math.IsInf(v, 1) {
		return 0, likConfigErr("%s: %s %v must be finite and > 0", lik, field, v)
	}
	return v, nil
}

// positiveParam returns a scalar Positive Param with initial value v and floor floor, requiring v > floor.
func positiveParam(lik, name string, v, floor float64) (*graph.Param, error) {
	if !(v > floor) {
		return nil, likConfigErr("%s: %s %v must exceed its floor %v", lik, name, v, floor)
	}
	p, err := graph.NewParam(name, []float64{v}, graph.Positive{Floor: floor})
	if err != nil {
		return nil, fmt.Errorf("likelihoods: %s: %w", lik, err)
	}
	return p, nil
}

// veOperands checks the operands of VariationalExpectations: non-nil nodes of equal [N,L] shape. It returns the
// graph and whether the operands are valid; on failure the error is recorded in the graph (if there is one).
func veOperands(lik string, fMean, fVar, y *graph.Node) (*graph.Graph, bool) {
	g, op, ok := operandGraph(lik, fMean, fVar, y)
	if !ok {
		return g, false
	}
	s := fMean.Shape()
	if len(s) != 2 {
		g.Fail(&ops.ShapeError{Op: op, Want: "fMean [N,L]", Got: fmt.Sprint(s)})
		return g, false
	}
	for _, o := range []struct {
		name string
		n    *graph.Node
	}{{"fVar", fVar}, {"y", y}} {
		if os := o.n.Shape(); len(os) != 2 || os[0] != s[0] || os[1] != s[1] {
			g.Fail(&ops.ShapeError{Op: op, Want: fmt.Sprintf("%s of fMean's shape %v", o.name, s), Got: fmt.Sprint(os)})
			return g, false
		}
	}
	return g, g.Err() == nil
}

// invalidVE returns the result of VariationalExpectations for invalid operands: a poisoned node of g, or nil
// when no operand has a graph.
func invalidVE(g *graph.Graph) *graph.Node {
	if g == nil {
		return nil
	}
	return g.Fail(fmt.Errorf("likelihoods: invalid VariationalExpectations operands"))
}

// checkMarginals validates plain-Go latent marginals fMean, fVar [n,L] (row-major) and returns L.
func checkMarginals(op string, fMean, fVar []float64, n int) (int, error) {
	if n < 1 || len(fMean) == 0 || len(fMean)%n != 0 {
		return 0, &ops.ShapeError{Op: op, Want: fmt.Sprintf("fMean [n,L] with n = %d ≥ 1, L ≥ 1", n), Got: fmt.Sprintf("%d values", len(fMean))}
	}
	if len(fVar) != len(fMean) {
		return 0, &ops.ShapeError{Op: op, Want: fmt.Sprintf("fVar of fMean's %d values", len(fMean)), Got: fmt.Sprint(len(fVar))}
	}
	l := len(fMean) / n
	if err := ops.CheckFinite(op+" fMean", fMean, l); err != nil {
		return 0, err
	}
	if err := ops.CheckFinite(op+" fVar", fVar, l); err != nil {
		return 0, err
	}
	return l, nil
}

// checkObservations validates plain-Go observations y [n,L] against the marginals and returns L.
func checkObservations(op string, fMean, fVar, y []float64, n int) (int, error) {
	l, err := checkMarginals(op, fMean, fVar, n)
	if err != nil {
		return 0, err
	}
	if len(y) != len(fMean) {
		return 0, &ops.ShapeError{Op: op, Want: fmt.Sprintf("y of fMean's %d values", len(fMean)), Got: fmt.Sprint(len(y))}
	}
	if err := ops.CheckFinite(op+" y", y, l); err != nil {
		return 0, err
	}
	return l, nil
}

// rowSums returns, for each of the n rows of the [n,L] operands, Σ_l f(fMean, max(fVar, 0), y).
func rowSums(n, l int, fMean, fVar, y []float64, f func(m, v, y float64) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		s := 0.0
		for j := i * l; j < (i+1)*l; j++ {
			s += f(fMean[j], math.Max(fVar[j], 0), y[j])
		}
		out[i] = s
	}
	return out
}

// quadLogDensity returns the predictive log densities [n] log ∫ p(y|f) N(f; μ, v) df of a scalar model by
// Gauss–Hermite quadrature with the given number of points (summed over each row's columns).
func quadLogDensity(lik ops.ScalarLogLik, points int, theta []float64, n, l int, fMean, fVar, y []float64) ([]float64, error) {
	x, w, err := ops.GaussHermite(points)
	if err != nil {
		return nil, err
	}
	return rowSums(n, l, fMean, fVar, y, func(m, v, yy float64) float64 {
		return ops.GaussHermiteLogExpect(func(f float64) float64 { return lik.LogProb(f, yy, theta) }, m, v, x, w)
	}), nil
}

// fmtConst formats a constant exactly (shortest round-trip form) for names that go into op hashes.
func fmtConst(f float64) string { return fmt.Sprint(f) }

// operandGraph returns the graph of a VariationalExpectations call's operands, the op's name for messages and
// whether all three operands are present (a missing one is recorded in the graph; with no graph at all there is
// nowhere to record it and the caller returns a nil node).
func operandGraph(lik string, fMean, fVar, y *graph.Node) (*graph.Graph, string, bool) {
	var g *graph.Graph
	for _, n := range []*graph.Node{fMean, fVar, y} {
		if g = n.Graph(); g != nil {
			break
		}
	}
	op := lik + ".VariationalExpectations"
	if g == nil {
		return nil, op, false
	}
	if fMean == nil || fVar == nil || y == nil {
		g.Fail(fmt.Errorf("likelihoods: %s: nil operand", op))
		return g, op, false
	}
	return g, op, true
}

// indicatorVariance returns p(1 − p) for each class probability p: the variance of the class indicator, which
// the multiclass likelihoods report as their predictive variance.
func indicatorVariance(probs []float64) []float64 {
	v := make([]float64, len(probs))
	for i, p := range probs {
		v[i] = p * (1 - p)
	}
	return v
}
