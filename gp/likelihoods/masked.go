package likelihoods

import (
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// Masked is a likelihood for targets with missing cells (gpzoo train --targets with empty cells): it wraps a
// likelihood whose expected log density is a sum over the target columns, one latent function per column (the
// families registered with MissingTargets: gaussian, studentt, poisson), and trains on y = [values | mask]
// [N, 2P] (datasets.PackObserved: the mask is 1 for an observed cell, 0 for a missing one, whose value is
// ignored), so that the minibatch gathers the mask with the targets. Its expected log density sums only the
// observed cells,
//
//	Σ_p m_np E_{q(f_np)}[log p(y_np | f_np)],
//
// the log likelihood of the observed cells (the missing ones integrated out, as for a partially observed
// multi-output GP: Álvarez, Rosasco & Lawrence 2012, §4; GPflow's and GPyTorch's masked multi-output
// likelihoods): a missing cell contributes nothing to the ELBO or its gradients, and its row still informs the
// other outputs. The model's N/B scaling stays per row. Prediction is the inner likelihood's (targets [N, P], no
// mask), and Spec is the inner likelihood's: a saved model holds the plain likelihood.
type Masked struct {
	// Inner is the wrapped likelihood.
	Inner gp.Likelihood
}

var (
	_ gp.Likelihood = (*Masked)(nil)
	_ gp.Describer  = (*Masked)(nil)
)

// NewMasked wraps inner. It returns an error wrapping gp.ErrConfig for a nil inner likelihood or one that does not
// have one latent function per target column (LatentDim(p) ≠ p for p = 1, 2).
func NewMasked(inner gp.Likelihood) (*Masked, error) {
	if inner == nil {
		return nil, likConfigErr("Masked: nil likelihood")
	}
	for _, p := range []int{1, 2} {
		if l, err := inner.LatentDim(p); err != nil || l != p {
			return nil, likConfigErr("Masked: %s does not have one latent function per target column (LatentDim(%d) = %d, %v)", inner, p, l, err)
		}
	}
	return &Masked{Inner: inner}, nil
}

// LatentDim returns the inner likelihood's: p for p target columns (the training targets are 2p wide: values and
// mask).
func (m *Masked) LatentDim(p int) (int, error) { return m.Inner.LatentDim(p) }

// VariationalExpectations returns [N]: Σ_p mask_np · E_q[log p(y_np | f_np)] for fMean, fVar [N,P] and y [N,2P]
// (values, then the mask), each column's expectation the inner likelihood's on that column alone.
func (m *Masked) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	g, op, ok := operandGraph("Masked", fMean, fVar, y)
	if !ok {
		return invalidVE(g)
	}
	s, sv, sy := fMean.Shape(), fVar.Shape(), y.Shape()
	if len(s) != 2 || len(sv) != 2 || len(sy) != 2 || sv[0] != s[0] || sv[1] != s[1] || sy[0] != s[0] || sy[1] != 2*s[1] {
		g.Fail(&ops.ShapeError{Op: op, Want: "fMean, fVar [N,P] and y [N,2P] (the targets, then their mask)",
			Got: fmt.Sprintf("fMean %v, fVar %v, y %v", s, sv, sy)})
		return invalidVE(g)
	}
	p := s[1]
	var sum *graph.Node
	for j := range p {
		col := func(x *graph.Node, k int) *graph.Node { return g.StackCols(g.Col(x, k)) } // [N,1]
		ve := g.Mul(m.Inner.VariationalExpectations(col(fMean, j), col(fVar, j), col(y, j)), g.Col(y, p+j))
		if sum == nil {
			sum = ve
		} else {
			sum = g.Add(sum, ve)
		}
	}
	return sum
}

// PredictMeanVar is the inner likelihood's.
func (m *Masked) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	return m.Inner.PredictMeanVar(fMean, fVar, n)
}

// PredictLogDensity is the inner likelihood's (targets [n,P], every cell observed).
func (m *Masked) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	return m.Inner.PredictLogDensity(fMean, fVar, y, n)
}

// Params returns the inner likelihood's parameters.
func (m *Masked) Params() []*graph.Param { return m.Inner.Params() }

// String names the inner likelihood.
func (m *Masked) String() string { return "Masked(" + m.Inner.String() + ")" }

// Spec is the inner likelihood's: the mask belongs to the training data, not to the model.
func (m *Masked) Spec() (gp.Spec, error) {
	d, ok := m.Inner.(gp.Describer)
	if !ok {
		return gp.Spec{}, fmt.Errorf("likelihoods: Masked: %s cannot describe itself (no Spec)", m.Inner)
	}
	return d.Spec()
}
