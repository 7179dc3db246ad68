package main

// The Laplace likelihood: everything gpzoo needs to train, save, load and offer a likelihood it does not have,
// in one file that uses only gpzoo's exported API (a package outside the module would hold the same code).

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindLaplace is the Spec kind of a Laplace likelihood: model files store it, and gp.BuildSpec rebuilds the
// likelihood through the Builder registered under it. Kinds outside gpzoo carry a prefix of their own, so
// that they cannot clash with a built-in added later.
const KindLaplace = "example/likelihood/laplace"

// FamilyLaplace is the name users give the likelihood (`--likelihood example-laplace` in a program built with
// this file; zoo.TrainCustom), prefixed like the kind.
const FamilyLaplace = "example-laplace"

func init() {
	gp.RegisterKind(KindLaplace, buildLaplace) // first: RegisterLikelihood checks that the kind is known
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name: FamilyLaplace,
		Kind: KindLaplace,
		Doc:  "real targets with Laplace-distributed (double-exponential) noise, trainable scale b: robust to outliers, predicts the median (a likelihood, not --inference laplace, the Laplace approximation)",
		New: func(gp.LikelihoodOptions) (gp.Likelihood, error) {
			l, err := NewLaplace(LaplaceConfig{})
			if err != nil {
				return nil, err // a nil interface, not a typed nil
			}
			return l, nil
		},
	})
}

// Defaults of LaplaceConfig.
const (
	// DefaultLaplaceScale is the initial scale b (for standardised targets).
	DefaultLaplaceScale = 1.0
	// DefaultLaplaceScaleFloor is the lower bound of b: the density divides by it.
	DefaultLaplaceScaleFloor = 1e-6
)

// LaplaceConfig configures a Laplace likelihood. Zero values mean defaults.
type LaplaceConfig struct {
	// Scale is the initial scale b > ScaleFloor (default DefaultLaplaceScale).
	Scale float64
	// ScaleFloor is the lower bound of b (default DefaultLaplaceScaleFloor).
	ScaleFloor float64
	// QuadPoints is the number of Gauss–Hermite nodes of the expectations and of the predictive density
	// (default ops.DefaultQuadPoints).
	QuadPoints int
}

// Laplace is the likelihood y = f + ε with ε ~ Laplace(0, b): p(y | f) = exp(−|y − f|/b)/(2b), independently
// for every entry, with one trainable scale b > 0 (a Positive Param "likelihood.scale"). Its tails are
// exponential rather than Gaussian, so an outlier costs |y − f|/b nats instead of (y − f)²/(2σ²): the fit
// follows the bulk of the data (the posterior mean tends to the conditional median).
//
// The variational expectations E_{N(f; μ, v)}[log p(y | f)] and the predictive density log ∫ p(y | f)N(f; μ, v) df
// use Gauss–Hermite quadrature through gpzoo's exported helpers: graph.Graph.QuadratureVE (a differentiable op
// over a plain-Go ops.ScalarLogLik) and ops.GaussHermiteLogExpect: any scalar log-density works this way. Across
// the kink at f = y the rule converges slowly (with 20 nodes E|y − f| is within about 2% of √v of its closed
// form √(2v/π)·e^(−d²/2v) + d·erf(d/√(2v)), d = y − μ; more QuadPoints shrink that roughly as 1/n), which is
// accurate enough to train with; the closed form would be exact, at the price of the derivatives written out.
type Laplace struct {
	scale  *graph.Param // b, scalar, Positive{floor}
	floor  float64
	points int
}

var (
	_ gp.Likelihood = (*Laplace)(nil)
	_ gp.Describer  = (*Laplace)(nil)
)

// NewLaplace returns a Laplace likelihood. It returns an error wrapping gp.ErrConfig for a negative or
// non-finite Scale or ScaleFloor, Scale ≤ ScaleFloor, or negative QuadPoints.
func NewLaplace(cfg LaplaceConfig) (*Laplace, error) {
	floor, b, points := cfg.ScaleFloor, cfg.Scale, cfg.QuadPoints
	if floor == 0 {
		floor = DefaultLaplaceScaleFloor
	}
	if b == 0 {
		b = DefaultLaplaceScale
	}
	if points == 0 {
		points = ops.DefaultQuadPoints
	}
	if !(floor > 0) || math.IsInf(floor, 1) || !(b > floor) || math.IsInf(b, 1) || points < 1 {
		return nil, fmt.Errorf("laplace: %w: Scale %v must exceed ScaleFloor %v > 0 (both finite), QuadPoints %d must be ≥ 0",
			gp.ErrConfig, cfg.Scale, cfg.ScaleFloor, cfg.QuadPoints)
	}
	scale, err := graph.NewParam("likelihood.scale", []float64{b}, graph.Positive{Floor: floor})
	if err != nil {
		return nil, fmt.Errorf("laplace: %w", err)
	}
	return &Laplace{scale: scale, floor: floor, points: points}, nil
}

// Scale returns the current scale b.
func (l *Laplace) Scale() float64 { return l.scale.Value()[0] }

// LatentDim returns p: one latent function per observed column (error for p < 1).
func (*Laplace) LatentDim(p int) (int, error) {
	if p < 1 {
		return 0, &ops.ShapeError{Op: "Laplace.LatentDim", Want: "P ≥ 1", Got: fmt.Sprint(p)}
	}
	return p, nil
}

// VariationalExpectations returns [N]: Σ_l E_{N(f; μ, v)}[log p(y | f)] by Gauss–Hermite quadrature for fMean,
// fVar, y [N,L], differentiable with respect to μ, v and b. Operands of other shapes are errors recorded in
// the graph (by the op).
func (l *Laplace) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	for _, n := range []*graph.Node{fMean, fVar, y} {
		if g := n.Graph(); g != nil {
			return g.QuadratureVE(LaplaceLogLik{}, l.points, fMean, fVar, y, g.Param(l.scale))
		}
	}
	return nil // no graph to record an error in
}

// PredictMeanVar returns the predictive mean μ and variance v + 2b² of y [n,L] given fMean, fVar [n,L]
// (row-major). It returns an error for inconsistent sizes or non-finite values.
func (l *Laplace) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	if err := checkMarginals("Laplace.PredictMeanVar", fMean, fVar, nil, n); err != nil {
		return nil, nil, err
	}
	b := l.Scale()
	mean = append([]float64(nil), fMean...)
	variance = make([]float64, len(fVar))
	for i, v := range fVar {
		variance[i] = math.Max(v, 0) + 2*b*b
	}
	return mean, variance, nil
}

// PredictLogDensity returns log ∫ p(y | f) N(f; μ, v) df summed over each row's columns [n], by Gauss–Hermite
// quadrature in log space (the same nodes as the expectations). It returns an error for inconsistent sizes or
// non-finite values.
func (l *Laplace) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	if err := checkMarginals("Laplace.PredictLogDensity", fMean, fVar, y, n); err != nil {
		return nil, err
	}
	x, w, err := ops.GaussHermite(l.points)
	if err != nil {
		return nil, err
	}
	theta := []float64{l.Scale()}
	cols := len(fMean) / n
	out := make([]float64, n)
	for i := range out {
		for j := i * cols; j < (i+1)*cols; j++ {
			yj := y[j]
			out[i] += ops.GaussHermiteLogExpect(func(f float64) float64 {
				return LaplaceLogLik{}.LogProb(f, yj, theta)
			}, fMean[j], math.Max(fVar[j], 0), x, w)
		}
	}
	return out, nil
}

// checkMarginals returns a *ops.ShapeError unless fMean, fVar (and y, when not nil) hold n ≥ 1 rows of the
// same L ≥ 1 columns, and a *ops.NonFiniteError for a NaN or ±Inf.
func checkMarginals(op string, fMean, fVar, y []float64, n int) error {
	if n < 1 || len(fMean) == 0 || len(fMean)%n != 0 || len(fVar) != len(fMean) || (y != nil && len(y) != len(fMean)) {
		return &ops.ShapeError{Op: op, Want: fmt.Sprintf("fMean, fVar (and y) of n = %d ≥ 1 equal rows", n),
			Got: fmt.Sprintf("%d, %d and %d values", len(fMean), len(fVar), len(y))}
	}
	cols := len(fMean) / n
	for _, a := range []struct {
		name string
		v    []float64
	}{{"fMean", fMean}, {"fVar", fVar}, {"y", y}} {
		if err := ops.CheckFinite(op+" "+a.name, a.v, cols); err != nil {
			return err
		}
	}
	return nil
}

// Params returns the scale Param.
func (l *Laplace) Params() []*graph.Param { return []*graph.Param{l.scale} }

// String names the likelihood and its current scale.
func (l *Laplace) String() string {
	return fmt.Sprintf("Laplace(scale=%.6g, quadPoints=%d)", l.Scale(), l.points)
}

// LaplaceLogLik is log p(y | f, b) = −|y − f|/b − log 2b as an ops.ScalarLogLik with θ = [b]: the plain-Go
// scalar model graph.Graph.QuadratureVE integrates (and differentiates) against N(f; μ, v).
type LaplaceLogLik struct{}

var _ ops.ScalarLogLik = LaplaceLogLik{}

// Name returns "example.Laplace" (it goes into the op's hash; there are no constants to add).
func (LaplaceLogLik) Name() string { return "example.Laplace" }

// NumTheta returns 1 (b).
func (LaplaceLogLik) NumTheta() int { return 1 }

// LogProb returns −|y − f|/b − log 2b.
func (LaplaceLogLik) LogProb(f, y float64, theta []float64) float64 {
	b := theta[0]
	return -math.Abs(y-f)/b - math.Log(2*b)
}

// DLogProbDF returns sign(y − f)/b (0 at the kink f = y).
func (LaplaceLogLik) DLogProbDF(f, y float64, theta []float64) float64 {
	switch b := theta[0]; {
	case y > f:
		return 1 / b
	case y < f:
		return -1 / b
	}
	return 0
}

// DLogProbDTheta writes ∂/∂b = |y − f|/b² − 1/b.
func (LaplaceLogLik) DLogProbDTheta(f, y float64, theta []float64, dst []float64) {
	b := theta[0]
	dst[0] = math.Abs(y-f)/(b*b) - 1/b
}

// laplaceSpec is the Config of KindLaplace: the structure only. b is a Param, whose trained value model files
// store and restore after gp.BuildSpec.
type laplaceSpec struct {
	ScaleFloor float64 `json:"scale_floor"`
	QuadPoints int     `json:"quad_points"`
}

// Spec describes l: its scale floor and number of quadrature points.
func (l *Laplace) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindLaplace, laplaceSpec{ScaleFloor: l.floor, QuadPoints: l.points})
}

// buildLaplace is the gp.Builder of KindLaplace: a likelihood with the described structure and a placeholder
// scale (the model file then restores b).
func buildLaplace(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	if len(children) != 0 {
		return nil, fmt.Errorf("%s: %w: takes no children, got %d", KindLaplace, gp.ErrConfig, len(children))
	}
	var c laplaceSpec
	if err := gp.DecodeConfig(KindLaplace, raw, &c); err != nil {
		return nil, err
	}
	if !(c.ScaleFloor > 0) || c.QuadPoints < 1 {
		return nil, fmt.Errorf("%s: %w: scale floor %v and quad points %d must be > 0", KindLaplace, gp.ErrConfig, c.ScaleFloor, c.QuadPoints)
	}
	l, err := NewLaplace(LaplaceConfig{ScaleFloor: c.ScaleFloor, Scale: 2*c.ScaleFloor + 1, QuadPoints: c.QuadPoints})
	if err != nil {
		return nil, err
	}
	return l, nil
}
