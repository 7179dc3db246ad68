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

// KindBernoulli is the Spec kind of a Bernoulli likelihood (gp.Spec).
const KindBernoulli = "likelihood/bernoulli"

func init() {
	gp.RegisterKind(KindBernoulli, buildBernoulli)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name:    "bernoulli",
		Kind:    KindBernoulli,
		Doc:     "two class labels, probit link (the default for 2 classes)",
		Classes: true,
		New: func(o gp.LikelihoodOptions) (gp.Likelihood, error) {
			if o.Classes != 2 {
				return nil, likConfigErr("bernoulli needs 2 classes, the target has %d (robustmax or softmax take more)", o.Classes)
			}
			return asLikelihood(NewBernoulli(BernoulliConfig{}))
		},
	})
}

// BernoulliConfig configures a Bernoulli likelihood. Zero values mean defaults.
type BernoulliConfig struct {
	// QuadPoints is the number of Gauss–Hermite nodes of the variational expectations (default
	// ops.DefaultQuadPoints).
	QuadPoints int
}

// Bernoulli is binary classification with the probit link: p(y = 1 | f) = Φ(f) for labels y ∈ {0, 1}, i.e.
// log p(y | f) = log Φ((2y − 1)f) (MATH.md §4). It has no parameters. The expectations use Gauss–Hermite
// quadrature; the predictive distribution is closed form: p(y = 1) = Φ(μ/√(1 + v)).
type Bernoulli struct {
	points int
}

var (
	_ gp.Likelihood      = (*Bernoulli)(nil)
	_ gp.ClassLikelihood = (*Bernoulli)(nil)
)

// NewBernoulli returns a probit Bernoulli likelihood. It returns an error wrapping gp.ErrConfig for negative
// QuadPoints.
func NewBernoulli(cfg BernoulliConfig) (*Bernoulli, error) {
	p, err := quadPointsOrDefault("Bernoulli", cfg.QuadPoints)
	if err != nil {
		return nil, err
	}
	return &Bernoulli{points: p}, nil
}

// LatentDim returns p: one latent function per label column (error for p < 1).
func (*Bernoulli) LatentDim(p int) (int, error) {
	if p < 1 {
		return 0, &ops.ShapeError{Op: "Bernoulli.LatentDim", Want: "P ≥ 1", Got: fmt.Sprint(p)}
	}
	return p, nil
}

// VariationalExpectations returns [N]: Σ_l E_{N(f; μ, v)}[log Φ((2y − 1)f)] by Gauss–Hermite quadrature for
// fMean, fVar, y [N,L]. The labels y must be 0 or 1; inside the graph they are data and are not checked (any
// other value v is used as the sign 2v − 1).
func (b *Bernoulli) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	gr, ok := veOperands("Bernoulli", fMean, fVar, y)
	if !ok {
		return invalidVE(gr)
	}
	return gr.QuadratureVE(BernoulliLogLik{}, b.points, fMean, fVar, y)
}

// PredictMeanVar returns p(y = 1) = Φ(μ/√(1 + v)) as the mean and p(1 − p) as the variance [n,L], given fMean,
// fVar [n,L] (row-major); both tails are computed without cancellation. It returns an error for inconsistent
// sizes or non-finite values.
func (b *Bernoulli) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	if _, err := checkMarginals("Bernoulli.PredictMeanVar", fMean, fVar, n); err != nil {
		return nil, nil, err
	}
	mean = make([]float64, len(fMean))
	variance = make([]float64, len(fMean))
	for i, m := range fMean {
		z := m / math.Sqrt(1+math.Max(fVar[i], 0))
		p, q := math.Exp(ops.LogPhiFloat(z)), math.Exp(ops.LogPhiFloat(-z))
		mean[i], variance[i] = p, p*q
	}
	return mean, variance, nil
}

// ClassProbs returns [N,2P] from the probabilities p(y_j = 1) [N,P] (PredictMeanVar's mean; gp.ClassLikelihood):
// columns 2j and 2j+1 are 1 − p_j and p_j, the probabilities of labels 0 and 1 of column j.
func (*Bernoulli) ClassProbs(mean *mat.Dense) *mat.Dense {
	n, p := mean.Dims()
	out := mat.NewDense(n, 2*p, nil)
	for i := 0; i < n; i++ {
		src, dst := mean.RawRowView(i), out.RawRowView(i)
		for j, v := range src {
			dst[2*j], dst[2*j+1] = 1-v, v
		}
	}
	return out
}

// PredictLogDensity returns log p(y) = log Φ((2y − 1)μ/√(1 + v)) summed over each row's columns [n] (closed
// form, stable for very negative arguments). It returns an error for inconsistent sizes, non-finite values, or a
// label other than 0 and 1.
func (b *Bernoulli) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	l, err := checkObservations("Bernoulli.PredictLogDensity", fMean, fVar, y, n)
	if err != nil {
		return nil, err
	}
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("likelihoods: Bernoulli.PredictLogDensity: label %v at row %d, column %d: want 0 or 1", v, i/l, i%l)
		}
	}
	return rowSums(n, l, fMean, fVar, y, func(m, v, yy float64) float64 {
		return ops.LogPhiFloat((2*yy - 1) * m / math.Sqrt(1+v))
	}), nil
}

// Params returns nil: the probit Bernoulli likelihood has no parameters.
func (*Bernoulli) Params() []*graph.Param { return nil }

// String names the likelihood.
func (b *Bernoulli) String() string { return fmt.Sprintf("Bernoulli(probit, quadPoints=%d)", b.points) }

// BernoulliLogLik is the probit log p(y | f) = log Φ((2y − 1)f) for y ∈ {0, 1} as an ops.ScalarLogLik (no θ).
// log Φ is ops.LogPhiFloat (erfc and a continued fraction: finite for very negative arguments) and its
// derivative ops.LogPhiDerivFloat.
type BernoulliLogLik struct{}

var _ ops.ScalarLogLik = BernoulliLogLik{}

// Name returns "Bernoulli{probit}".
func (BernoulliLogLik) Name() string { return "Bernoulli{probit}" }

// NumTheta returns 0.
func (BernoulliLogLik) NumTheta() int { return 0 }

// LogProb returns log Φ((2y − 1)f).
func (BernoulliLogLik) LogProb(f, y float64, _ []float64) float64 {
	return ops.LogPhiFloat((2*y - 1) * f)
}

// DLogProbDF returns (2y − 1)·φ(s)/Φ(s) with s = (2y − 1)f.
func (BernoulliLogLik) DLogProbDF(f, y float64, _ []float64) float64 {
	s := 2*y - 1
	return s * ops.LogPhiDerivFloat(s*f)
}

// DLogProbDTheta does nothing (no θ).
func (BernoulliLogLik) DLogProbDTheta(_, _ float64, _ []float64, _ []float64) {}

var (
	_ ops.LaplaceLogLik = BernoulliLogLik{}
	_ ops.TiltedLogLik  = BernoulliLogLik{}
)

// DerivsF returns the first three derivatives in f of log Φ(sf), s = 2y − 1 (for the Laplace approximation), with
// r = φ(z)/Φ(z) at z = sf: s·r, −r(z + r) and s·r((z + r)(z + 2r) − 1) (r′ = −r(z + r)).
func (BernoulliLogLik) DerivsF(f, y float64, _ []float64) (d1, d2, d3 float64) {
	s := 2*y - 1
	z := s * f
	r := ops.LogPhiDerivFloat(z)
	zr := z + r
	return s * r, -r * zr, s * r * (zr*(zr+r) - 1)
}

// DerivsFTheta does nothing (no θ).
func (BernoulliLogLik) DerivsFTheta(_, _ float64, _, _, _ []float64) {}

// LogConcave returns true: log Φ is concave.
func (BernoulliLogLik) LogConcave() bool { return true }

// Tilted returns EP's tilted moments in closed form (R&W eq. 3.58): log Ẑ = log Φ(z), z = sμ/√(1 + v), and the
// derivatives of log Ẑ in μ, s·r/√(1 + v) and −r(z + r)/(1 + v) with r = φ(z)/Φ(z).
func (BernoulliLogLik) Tilted(y, mu, v float64, _ []float64) (logZ, d1, d2 float64) {
	s := 2*y - 1
	c := math.Sqrt(1 + v)
	z := s * mu / c
	r := ops.LogPhiDerivFloat(z)
	return ops.LogPhiFloat(z), s * r / c, -r * (z + r) / (1 + v)
}

// ScalarModel returns the probit's scalar model (no parameters): the exact GP's Laplace and EP approximations
// (gp/approx) use it.
func (*Bernoulli) ScalarModel() (ops.ScalarLogLik, []*graph.Param) { return BernoulliLogLik{}, nil }

// bernoulliSpec is the Config of KindBernoulli.
type bernoulliSpec struct {
	QuadPoints int `json:"quad_points"`
}

// Spec describes b: its number of quadrature points.
func (b *Bernoulli) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindBernoulli, bernoulliSpec{QuadPoints: b.points})
}

func buildBernoulli(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c bernoulliSpec
	if err := decodeLeaf(KindBernoulli, raw, children, &c); err != nil {
		return nil, err
	}
	if c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: QuadPoints %d must be > 0", KindBernoulli, c.QuadPoints)
	}
	return NewBernoulli(BernoulliConfig(c))
}

var _ gp.Describer = (*Bernoulli)(nil)
