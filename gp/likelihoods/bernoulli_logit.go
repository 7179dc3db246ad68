package likelihoods

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KindBernoulliLogit is the Spec kind of a Bernoulli likelihood with the logit link (gp.Spec).
const KindBernoulliLogit = "likelihood/bernoulli-logit"

func init() {
	gp.RegisterKind(KindBernoulliLogit, buildBernoulliLogit)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name:    "bernoulli-logit",
		Kind:    KindBernoulliLogit,
		Doc:     "two class labels, logit link p(y=1) = 1/(1 + e^−f) (as scikit-learn's GP classifier)",
		Classes: true,
		New: func(o gp.LikelihoodOptions) (gp.Likelihood, error) {
			if o.Classes != 2 {
				return nil, likConfigErr("bernoulli-logit needs 2 classes, the target has %d (robustmax or softmax take more)", o.Classes)
			}
			return asLikelihood(NewBernoulliLogit(BernoulliConfig{}))
		},
	})
}

// BernoulliLogit is binary classification with the logit link: p(y = 1 | f) = σ(f) = 1/(1 + e^−f) for labels
// y ∈ {0, 1}, i.e. log p(y | f) = log σ((2y − 1)f) (R&W §3.3). It has no parameters. Its expectations, predictive
// probabilities p(y = 1) = ∫σ(f)N(f; μ, v)df and log densities are by Gauss–Hermite quadrature.
type BernoulliLogit struct {
	points int
}

var (
	_ gp.Likelihood      = (*BernoulliLogit)(nil)
	_ gp.ClassLikelihood = (*BernoulliLogit)(nil)
	_ gp.Describer       = (*BernoulliLogit)(nil)
)

// NewBernoulliLogit returns a logit Bernoulli likelihood (cfg as the probit's: its quadrature points). It returns
// an error wrapping gp.ErrConfig for negative QuadPoints.
func NewBernoulliLogit(cfg BernoulliConfig) (*BernoulliLogit, error) {
	p, err := quadPointsOrDefault("BernoulliLogit", cfg.QuadPoints)
	if err != nil {
		return nil, err
	}
	return &BernoulliLogit{points: p}, nil
}

// LatentDim returns p: one latent function per label column (error for p < 1).
func (*BernoulliLogit) LatentDim(p int) (int, error) {
	if p < 1 {
		return 0, &ops.ShapeError{Op: "BernoulliLogit.LatentDim", Want: "P ≥ 1", Got: fmt.Sprint(p)}
	}
	return p, nil
}

// VariationalExpectations returns [N]: Σ_l E_{N(f; μ, v)}[log σ((2y − 1)f)] by Gauss–Hermite quadrature for
// fMean, fVar, y [N,L] (labels 0 or 1, not checked in the graph).
func (b *BernoulliLogit) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	gr, ok := veOperands("BernoulliLogit", fMean, fVar, y)
	if !ok {
		return invalidVE(gr)
	}
	return gr.QuadratureVE(BernoulliLogitLogLik{}, b.points, fMean, fVar, y)
}

// PredictMeanVar returns p(y = 1) = ∫σ(f)N(f; μ, v)df (Gauss–Hermite) as the mean and p(1 − p) as the variance
// [n,L], given fMean, fVar [n,L]. It returns an error for inconsistent sizes or non-finite values.
func (b *BernoulliLogit) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	if _, err := checkMarginals("BernoulliLogit.PredictMeanVar", fMean, fVar, n); err != nil {
		return nil, nil, err
	}
	x, w, err := ops.GaussHermite(b.points)
	if err != nil {
		return nil, nil, err
	}
	mean = make([]float64, len(fMean))
	variance = make([]float64, len(fMean))
	for i, m := range fMean {
		// p(y = 1) and p(y = 0) each from its own log density, so that neither tail cancels against 1.
		p1 := math.Exp(ops.GaussHermiteLogExpect(func(f float64) float64 { return -ops.SoftplusFloat(-f) }, m, math.Max(fVar[i], 0), x, w))
		p0 := math.Exp(ops.GaussHermiteLogExpect(func(f float64) float64 { return -ops.SoftplusFloat(f) }, m, math.Max(fVar[i], 0), x, w))
		mean[i], variance[i] = p1/(p0+p1), p0*p1/((p0+p1)*(p0+p1))
	}
	return mean, variance, nil
}

// ClassProbs returns [N,2P]: columns 2j and 2j+1 are 1 − p_j and p_j (gp.ClassLikelihood, as the probit's).
func (*BernoulliLogit) ClassProbs(mean *mat.Dense) *mat.Dense {
	return (*Bernoulli)(nil).ClassProbs(mean)
}

// PredictLogDensity returns log ∫ σ((2y − 1)f)N(f; μ, v)df summed over each row's columns [n] (Gauss–Hermite in
// log space). It returns an error for inconsistent sizes, non-finite values, or a label other than 0 and 1.
func (b *BernoulliLogit) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	l, err := checkObservations("BernoulliLogit.PredictLogDensity", fMean, fVar, y, n)
	if err != nil {
		return nil, err
	}
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("likelihoods: BernoulliLogit.PredictLogDensity: label %v at row %d, column %d: want 0 or 1", v, i/l, i%l)
		}
	}
	return quadLogDensity(BernoulliLogitLogLik{}, b.points, nil, n, l, fMean, fVar, y)
}

// Params returns nil: the logit Bernoulli likelihood has no parameters.
func (*BernoulliLogit) Params() []*graph.Param { return nil }

// String names the likelihood.
func (b *BernoulliLogit) String() string {
	return fmt.Sprintf("Bernoulli(logit, quadPoints=%d)", b.points)
}

// ScalarModel returns the logit's scalar model (no parameters), for the exact GP's Laplace and EP approximations.
func (*BernoulliLogit) ScalarModel() (ops.ScalarLogLik, []*graph.Param) {
	return BernoulliLogitLogLik{}, nil
}

// BernoulliLogitLogLik is log σ((2y − 1)f) = −log(1 + e^{−(2y−1)f}) for y ∈ {0, 1} as an ops.LaplaceLogLik (no θ).
type BernoulliLogitLogLik struct{}

var _ ops.LaplaceLogLik = BernoulliLogitLogLik{}

// Name returns "Bernoulli{logit}".
func (BernoulliLogitLogLik) Name() string { return "Bernoulli{logit}" }

// NumTheta returns 0.
func (BernoulliLogitLogLik) NumTheta() int { return 0 }

// LogProb returns −softplus(−(2y − 1)f).
func (BernoulliLogitLogLik) LogProb(f, y float64, _ []float64) float64 {
	return -ops.SoftplusFloat(-(2*y - 1) * f)
}

// logistic returns π = σ(f) and 1 − π = σ(−f), each without cancellation.
func logistic(f float64) (p, q float64) {
	if f >= 0 {
		e := math.Exp(-f)
		return 1 / (1 + e), e / (1 + e)
	}
	e := math.Exp(f)
	return e / (1 + e), 1 / (1 + e)
}

// DLogProbDF returns y − σ(f).
func (BernoulliLogitLogLik) DLogProbDF(f, y float64, _ []float64) float64 {
	p, q := logistic(f)
	if y == 1 {
		return q
	}
	return y - p
}

// DLogProbDTheta does nothing (no θ).
func (BernoulliLogitLogLik) DLogProbDTheta(_, _ float64, _ []float64, _ []float64) {}

// DerivsF returns y − π, −π(1 − π) and −π(1 − π)(1 − 2π), π = σ(f) (R&W eq. 3.15).
func (l BernoulliLogitLogLik) DerivsF(f, y float64, _ []float64) (d1, d2, d3 float64) {
	p, q := logistic(f)
	return l.DLogProbDF(f, y, nil), -p * q, -p * q * (q - p)
}

// DerivsFTheta does nothing (no θ).
func (BernoulliLogitLogLik) DerivsFTheta(_, _ float64, _, _, _ []float64) {}

// LogConcave returns true: log σ is concave.
func (BernoulliLogitLogLik) LogConcave() bool { return true }

// Spec describes b: its number of quadrature points.
func (b *BernoulliLogit) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindBernoulliLogit, bernoulliSpec{QuadPoints: b.points})
}

func buildBernoulliLogit(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c bernoulliSpec
	if err := decodeLeaf(KindBernoulliLogit, raw, children, &c); err != nil {
		return nil, err
	}
	if c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: QuadPoints %d must be > 0", KindBernoulliLogit, c.QuadPoints)
	}
	return NewBernoulliLogit(BernoulliConfig(c))
}
