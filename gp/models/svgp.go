package models

import (
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// SVGPConfig configures an SVGP model.
type SVGPConfig struct {
	Layer      gp.Layer      // required
	Likelihood gp.Likelihood // required; its LatentDim must equal the layer's OutputDim
	NumData    int           // required: N, the size of the training set (the minibatch scale is N/B)
}

// SVGP is the sparse variational GP model (Hensman et al. 2013, 2015): one layer and a likelihood, trained on
// the minibatch ELBO (N/B) Σ_b E_q[log p(y_b | f_b)] − KL[q(u) ‖ p(u)] (MATH.md §3).
type SVGP struct {
	Layer      gp.Layer
	Likelihood gp.Likelihood
	NumData    int
}

var _ gp.Predictor = (*SVGP)(nil)

// NewSVGP validates the configuration and returns the model.
func NewSVGP(c SVGPConfig) (*SVGP, error) {
	if c.Layer == nil || c.Likelihood == nil {
		return nil, fmt.Errorf("models: SVGP needs a Layer and a Likelihood")
	}
	if c.NumData <= 0 {
		return nil, fmt.Errorf("models: SVGP: NumData must be positive, got %d", c.NumData)
	}
	return &SVGP{Layer: c.Layer, Likelihood: c.Likelihood, NumData: c.NumData}, nil
}

// ELBO returns the whole-data-set ELBO estimated from the batch x [B,D], y [B,P] (scalar).
func (m *SVGP) ELBO(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	b := x.Shape()
	if len(b) != 2 || b[0] > m.NumData {
		return g.Fail(&ops.ShapeError{Op: "models.SVGP", Want: fmt.Sprintf("a batch of at most NumData = %d rows", m.NumData), Got: fmt.Sprint(b)})
	}
	return g.Sub(g.Scale(m.expectedLogLik(x, y), float64(m.NumData)/float64(b[0])), m.Layer.KL(g))
}

// Loss returns −ELBO.
func (m *SVGP) Loss(x, y *graph.Node) *graph.Node { return x.Graph().Neg(m.ELBO(x, y)) }

// DataLoss returns −Σ_b E_q[log p(y_b | f_b)] over the batch's rows (gp.RowSum).
func (m *SVGP) DataLoss(x, y *graph.Node) *graph.Node { return x.Graph().Neg(m.expectedLogLik(x, y)) }

// expectedLogLik returns Σ_b E_q[log p(y_b | f_b)] over the batch's rows: the ELBO's and DataLoss's data term.
func (m *SVGP) expectedLogLik(x, y *graph.Node) *graph.Node {
	fm, fv := m.Layer.Predict(x)
	return x.Graph().Sum(m.Likelihood.VariationalExpectations(fm, fv, y))
}

// GlobalLoss returns the layer's KL divergence (gp.RowSum).
func (m *SVGP) GlobalLoss(g *graph.Graph) *graph.Node { return m.Layer.KL(g) }

// DataSize returns NumData (gp.RowSum).
func (m *SVGP) DataSize() int { return m.NumData }

// Params returns the layer's and the likelihood's parameters.
func (m *SVGP) Params() []*graph.Param {
	return gp.UniqueParams(m.Layer.Params(), m.Likelihood.Params())
}

// Predict returns the predictive distribution at x [N,D] (gp.Predictor): the layer's marginals of f [N,L] in
// chunks of o.ChunkRows (default DefaultChunk) and the likelihood's predictive mean and variance of y (class
// probabilities for classifiers, with Probs), a Monte-Carlo likelihood drawing from o.Rand; o.Full adds the
// layer's full covariance of each output and o.Draws joint samples of f from it (across the outputs too for a
// gp.CorrelatedLayer, through its SampleJoint); o.OutputCov adds the covariance between the outputs at each row
// (a correlated layer's PredictOutputCov, else diagonal).
func (m *SVGP) Predict(x *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if m == nil {
		return nil, fmt.Errorf("models: SVGP.Predict: nil model")
	}
	return predictLayerModel("models.SVGP.Predict", m.Layer, m.Likelihood, x, o)
}

// InputDim returns the layer's input dimension D (0 without a layer).
func (m *SVGP) InputDim() int {
	if m == nil || m.Layer == nil {
		return 0
	}
	return m.Layer.InputDim()
}

// OutputDim returns L, the layer's output dimension (the likelihood's latent functions; 0 without a layer).
func (m *SVGP) OutputDim() int {
	if m == nil || m.Layer == nil {
		return 0
	}
	return m.Layer.OutputDim()
}

// PredictiveDim returns Y, the width of the predictive YMean and YVar: gp.PredictiveDim of the likelihood and
// OutputDim (0 without a layer or a likelihood, or when the likelihood does not take OutputDim latents).
func (m *SVGP) PredictiveDim() int {
	if m == nil || m.Likelihood == nil || m.OutputDim() == 0 {
		return 0
	}
	y, err := gp.PredictiveDim(m.Likelihood, m.OutputDim())
	if err != nil {
		return 0
	}
	return y
}

// LogDensity returns log p(y_n | x_n) for each test row, in the units of y. A Monte-Carlo likelihood draws from
// o.Rand when it is set, from its own generator otherwise.
func (m *SVGP) LogDensity(x, y *mat.Dense, o gp.PredictOptions) ([]float64, error) {
	lik := m.Likelihood
	if o.Rand != nil {
		var err error
		if lik, err = gp.LikelihoodWithRand(lik, o.Rand); err != nil {
			return nil, err
		}
	}
	fm, fv, err := PredictLayer(m.Layer, x, o)
	if err != nil {
		return nil, err
	}
	n, _ := fm.Dims()
	if ny, _ := y.Dims(); ny != n {
		return nil, &ops.ShapeError{Op: "models.SVGP.LogDensity", Want: fmt.Sprintf("%d target rows", n), Got: fmt.Sprint(ny)}
	}
	return lik.PredictLogDensity(fm.RawMatrix().Data, fv.RawMatrix().Data, mat.DenseCopyOf(y).RawMatrix().Data, n)
}
