package likelihoods

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindGaussian is the Spec kind of a Gaussian likelihood (gp.Spec).
const KindGaussian = "likelihood/gaussian"

func init() {
	gp.RegisterKind(KindGaussian, buildGaussian)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name:           "gaussian",
		Kind:           KindGaussian,
		MissingTargets: true,
		Doc:            "real targets with Gaussian noise, closed form (the default for regression)",
		New: func(o gp.LikelihoodOptions) (gp.Likelihood, error) {
			return asLikelihood(NewGaussian(GaussianConfig{Variance: o.NoiseVariance}))
		},
	})
}

// Defaults of GaussianConfig.
const (
	// DefaultGaussianVariance is the initial noise variance σ² (suited to standardised targets).
	DefaultGaussianVariance = 1.0
	// DefaultGaussianVarianceFloor is the lower bound of σ²: the expectations divide by it.
	DefaultGaussianVarianceFloor = 1e-6
)

const log2Pi = 1.8378770664093454835606594728112352797227949472756 // log 2π

// GaussianConfig configures a Gaussian likelihood. Zero values mean defaults.
type GaussianConfig struct {
	// Variance is the initial noise variance σ² (not the standard deviation; default DefaultGaussianVariance).
	Variance float64
	// VarianceFloor is the lower bound of σ² (default DefaultGaussianVarianceFloor); Variance must exceed it.
	VarianceFloor float64
}

// Gaussian is the likelihood y = f + ε, ε ~ N(0, σ²), independently for every entry. Its expectations and
// predictive distribution are closed form (MATH.md §4); no quadrature is involved.
type Gaussian struct {
	variance *graph.Param // σ², scalar, Positive{floor}
}

var _ gp.Likelihood = (*Gaussian)(nil)

// NewGaussian returns a Gaussian likelihood with a trainable variance Param "likelihood.variance". It returns an
// error wrapping gp.ErrConfig if Variance or VarianceFloor is negative or not finite, or Variance ≤ VarianceFloor.
func NewGaussian(cfg GaussianConfig) (*Gaussian, error) {
	floor, err := positiveOrDefault("Gaussian", "VarianceFloor", cfg.VarianceFloor, DefaultGaussianVarianceFloor)
	if err != nil {
		return nil, err
	}
	v, err := positiveOrDefault("Gaussian", "Variance", cfg.Variance, DefaultGaussianVariance)
	if err != nil {
		return nil, err
	}
	p, err := positiveParam("Gaussian", "likelihood.variance", v, floor)
	if err != nil {
		return nil, err
	}
	return &Gaussian{variance: p}, nil
}

// LatentDim returns p: one latent function per observed column (error for p < 1).
func (*Gaussian) LatentDim(p int) (int, error) {
	if p < 1 {
		return 0, &ops.ShapeError{Op: "Gaussian.LatentDim", Want: "P ≥ 1", Got: fmt.Sprint(p)}
	}
	return p, nil
}

// VarianceNode returns the constrained noise variance σ² (a scalar node of gr), e.g. for SGPR's bound.
func (g *Gaussian) VarianceNode(gr *graph.Graph) *graph.Node { return gr.Param(g.variance) }

// Variance returns the current noise variance σ².
func (g *Gaussian) Variance() float64 { return g.variance.Value()[0] }

// VariationalExpectations returns [N]: Σ_l −½log 2πσ² − ((y−μ)² + v)/(2σ²), the exact E_q[log N(y | f, σ²)] for
// fMean, fVar, y [N,L] (MATH.md §4), built from graph ops.
func (g *Gaussian) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	gr, ok := veOperands("Gaussian", fMean, fVar, y)
	if !ok {
		return invalidVE(gr)
	}
	l := float64(fMean.Shape()[1])
	s2 := gr.Param(g.variance)
	r := gr.Sub(y, fMean)
	quad := gr.SumCols(gr.Div(gr.Add(gr.Square(r), fVar), s2)) // [N]: Σ_l ((y−μ)² + v)/σ²
	c := gr.Scale(gr.AddConst(gr.Log(s2), log2Pi), -0.5*l)     // scalar: −(L/2) log 2πσ²
	return gr.Add(gr.Scale(quad, -0.5), c)
}

// PredictMeanVar returns the predictive mean μ and variance v + σ² of y [n,L] given fMean, fVar [n,L]
// (row-major). It returns an error for inconsistent sizes or non-finite values.
func (g *Gaussian) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	if _, err := checkMarginals("Gaussian.PredictMeanVar", fMean, fVar, n); err != nil {
		return nil, nil, err
	}
	s2 := g.Variance()
	mean = append([]float64(nil), fMean...)
	variance = make([]float64, len(fVar))
	for i, v := range fVar {
		variance[i] = math.Max(v, 0) + s2
	}
	return mean, variance, nil
}

// PredictLogDensity returns log N(y | μ, v + σ²) summed over each row's columns [n] (closed form). It returns an
// error for inconsistent sizes or non-finite values.
func (g *Gaussian) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	l, err := checkObservations("Gaussian.PredictLogDensity", fMean, fVar, y, n)
	if err != nil {
		return nil, err
	}
	s2 := g.Variance()
	return rowSums(n, l, fMean, fVar, y, func(m, v, yy float64) float64 {
		t := v + s2
		r := yy - m
		return -0.5*(log2Pi+math.Log(t)) - 0.5*r*r/t
	}), nil
}

// Params returns the noise variance Param.
func (g *Gaussian) Params() []*graph.Param { return []*graph.Param{g.variance} }

// String names the likelihood and its current variance.
func (g *Gaussian) String() string { return fmt.Sprintf("Gaussian(variance=%.6g)", g.Variance()) }

// GaussianLogLik is log N(y | f, σ²) with θ = [σ²] (the variance) as an ops.ScalarLogLik. Gaussian does not
// need it (its expectations are closed form); it is the reference for testing quadrature against closed forms.
type GaussianLogLik struct{}

var _ ops.ScalarLogLik = GaussianLogLik{}

// Name returns "Gaussian".
func (GaussianLogLik) Name() string { return "Gaussian" }

// NumTheta returns 1 (σ²).
func (GaussianLogLik) NumTheta() int { return 1 }

// LogProb returns −½log 2πσ² − (y − f)²/(2σ²).
func (GaussianLogLik) LogProb(f, y float64, theta []float64) float64 {
	r := y - f
	return -0.5*(log2Pi+math.Log(theta[0])) - 0.5*r*r/theta[0]
}

// DLogProbDF returns (y − f)/σ².
func (GaussianLogLik) DLogProbDF(f, y float64, theta []float64) float64 { return (y - f) / theta[0] }

// DLogProbDTheta writes ∂/∂σ² = −1/(2σ²) + (y − f)²/(2σ⁴).
func (GaussianLogLik) DLogProbDTheta(f, y float64, theta []float64, dst []float64) {
	r := y - f
	s2 := theta[0]
	dst[0] = -0.5/s2 + 0.5*r*r/(s2*s2)
}

// gaussianSpec is the Config of KindGaussian: structure only (σ² is a Param, which model files restore after
// gp.BuildSpec).
type gaussianSpec struct {
	VarianceFloor float64 `json:"variance_floor"`
}

// Spec describes g: its variance floor (σ² itself is a Param).
func (g *Gaussian) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindGaussian, gaussianSpec{VarianceFloor: positiveFloor(g.variance)})
}

func buildGaussian(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c gaussianSpec
	if err := decodeLeaf(KindGaussian, raw, children, &c); err != nil {
		return nil, err
	}
	if c.VarianceFloor <= 0 {
		return nil, likConfigErr("%s: variance floor %v must be > 0", KindGaussian, c.VarianceFloor)
	}
	return NewGaussian(GaussianConfig{VarianceFloor: c.VarianceFloor, Variance: placeholderAbove(c.VarianceFloor)})
}

var _ gp.Describer = (*Gaussian)(nil)
