package likelihoods

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindPoisson is the Spec kind of a Poisson likelihood (gp.Spec).
const KindPoisson = "likelihood/poisson"

func init() {
	gp.RegisterKind(KindPoisson, buildPoisson)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name:        "poisson",
		Kind:        KindPoisson,
		Doc:         "non-negative integer counts, exp link; predicted in counts (never standardised)",
		RawTargets:  true,
		CheckTarget: CheckCount,
		New: func(gp.LikelihoodOptions) (gp.Likelihood, error) {
			return asLikelihood(NewPoisson(PoissonConfig{}))
		},
	})
}

// CheckCount returns nil when y is a count (a finite non-negative integer), the observations of a Poisson
// likelihood, and an error saying so otherwise.
func CheckCount(y float64) error {
	if !(y >= 0) || math.IsInf(y, 0) || y != math.Trunc(y) {
		return fmt.Errorf("%v is not a count (want a non-negative integer)", y)
	}
	return nil
}

// DefaultPoissonBinSize is the exposure b multiplying the rate when PoissonConfig.BinSize is zero.
const DefaultPoissonBinSize = 1.0

// PoissonConfig configures a Poisson likelihood. Zero values mean defaults.
type PoissonConfig struct {
	// BinSize is the exposure b: the rate is b·exp(f) (default DefaultPoissonBinSize). Must be finite and > 0.
	BinSize float64
	// QuadPoints is the number of Gauss–Hermite nodes of the predictive log density (default
	// ops.DefaultQuadPoints).
	QuadPoints int
}

// Poisson is the count likelihood y ~ Poisson(b·exp(f)), y ∈ {0, 1, 2, …}, with the exponential link and a
// fixed bin size b. It has no trainable parameters. Its expectations and predictive moments are closed form
// (E[e^f] = e^(μ+v/2) under N(μ, v)); the predictive log density uses Gauss–Hermite quadrature.
type Poisson struct {
	binSize float64
	points  int
}

var _ gp.Likelihood = (*Poisson)(nil)

// NewPoisson returns a Poisson likelihood. It returns an error wrapping gp.ErrConfig for a negative or
// non-finite BinSize or negative QuadPoints.
func NewPoisson(cfg PoissonConfig) (*Poisson, error) {
	b, err := positiveOrDefault("Poisson", "BinSize", cfg.BinSize, DefaultPoissonBinSize)
	if err != nil {
		return nil, err
	}
	points, err := quadPointsOrDefault("Poisson", cfg.QuadPoints)
	if err != nil {
		return nil, err
	}
	return &Poisson{binSize: b, points: points}, nil
}

// LatentDim returns p: one latent function per observed column (error for p < 1).
func (*Poisson) LatentDim(p int) (int, error) {
	if p < 1 {
		return 0, &ops.ShapeError{Op: "Poisson.LatentDim", Want: "P ≥ 1", Got: fmt.Sprint(p)}
	}
	return p, nil
}

// BinSize returns the exposure b.
func (p *Poisson) BinSize() float64 { return p.binSize }

// ScalarLogLik returns the scalar model of p (for quadrature).
func (p *Poisson) ScalarLogLik() PoissonLogLik { return PoissonLogLik{BinSize: p.binSize} }

// VariationalExpectations returns [N]: Σ_l y(μ + log b) − b·exp(μ + v/2) − log y!, the exact
// E_{N(f; μ, v)}[log Poisson(y | b·e^f)] for fMean, fVar, y [N,L], built from graph ops. The counts y are data
// and are not checked in the graph: pass non-negative integers.
func (p *Poisson) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	gr, ok := veOperands("Poisson", fMean, fVar, y)
	if !ok {
		return invalidVE(gr)
	}
	lin := gr.Mul(y, gr.AddConst(fMean, math.Log(p.binSize)))               // y(μ + log b)
	rate := gr.Scale(gr.Exp(gr.Add(fMean, gr.Scale(fVar, 0.5))), p.binSize) // b·e^(μ+v/2)
	logFact := gr.LogGamma(gr.AddConst(y, 1))                               // log y!
	return gr.SumCols(gr.Sub(gr.Sub(lin, rate), logFact))
}

// PredictMeanVar returns the predictive mean b·e^(μ+v/2) and variance mean + b²(e^v − 1)e^(2μ+v) of y [n,L]
// given fMean, fVar [n,L] (row-major). It returns an error for inconsistent sizes or non-finite values.
func (p *Poisson) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	if _, err := checkMarginals("Poisson.PredictMeanVar", fMean, fVar, n); err != nil {
		return nil, nil, err
	}
	b := p.binSize
	mean = make([]float64, len(fMean))
	variance = make([]float64, len(fMean))
	for i, m := range fMean {
		v := math.Max(fVar[i], 0)
		mean[i] = b * math.Exp(m+v/2)
		variance[i] = mean[i] + b*b*math.Expm1(v)*math.Exp(2*m+v)
	}
	return mean, variance, nil
}

// PredictLogDensity returns log ∫ Poisson(y | b·e^f) N(f; μ, v) df summed over each row's columns [n], by
// Gauss–Hermite quadrature in log space (ops.GaussHermiteLogExpect). It returns an error for inconsistent sizes,
// non-finite values, or a y that is not a non-negative integer.
func (p *Poisson) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	l, err := checkObservations("Poisson.PredictLogDensity", fMean, fVar, y, n)
	if err != nil {
		return nil, err
	}
	for i, v := range y {
		if v < 0 || v != math.Trunc(v) {
			return nil, fmt.Errorf("likelihoods: Poisson.PredictLogDensity: count %v at row %d, column %d: want a non-negative integer", v, i/l, i%l)
		}
	}
	return quadLogDensity(p.ScalarLogLik(), p.points, nil, n, l, fMean, fVar, y)
}

// Params returns nil: the bin size is a fixed constant.
func (*Poisson) Params() []*graph.Param { return nil }

// String names the likelihood and its bin size.
func (p *Poisson) String() string {
	return fmt.Sprintf("Poisson(exp link, binSize=%s, quadPoints=%d)", fmtConst(p.binSize), p.points)
}

// PoissonLogLik is log Poisson(y | b·e^f) = y(f + log b) − b·e^f − log y! as an ops.ScalarLogLik (no θ); b is
// BinSize (0 means DefaultPoissonBinSize) and goes into Name, hence into the op hash.
type PoissonLogLik struct {
	BinSize float64
}

var _ ops.ScalarLogLik = PoissonLogLik{}

func (p PoissonLogLik) bin() float64 {
	if p.BinSize == 0 {
		return DefaultPoissonBinSize
	}
	return p.BinSize
}

// Name returns "Poisson{binSize=b}".
func (p PoissonLogLik) Name() string { return "Poisson{binSize=" + fmtConst(p.bin()) + "}" }

// NumTheta returns 0.
func (PoissonLogLik) NumTheta() int { return 0 }

// LogProb returns y(f + log b) − b·e^f − log y!.
func (p PoissonLogLik) LogProb(f, y float64, _ []float64) float64 {
	lf, _ := math.Lgamma(y + 1)
	b := p.bin()
	return y*(f+math.Log(b)) - b*math.Exp(f) - lf
}

// DLogProbDF returns y − b·e^f.
func (p PoissonLogLik) DLogProbDF(f, y float64, _ []float64) float64 { return y - p.bin()*math.Exp(f) }

// DLogProbDTheta does nothing (no θ).
func (PoissonLogLik) DLogProbDTheta(_, _ float64, _ []float64, _ []float64) {}

var _ ops.LaplaceLogLik = PoissonLogLik{}

// DerivsF returns y − b·e^f, −b·e^f and −b·e^f (for the Laplace approximation).
func (p PoissonLogLik) DerivsF(f, y float64, _ []float64) (d1, d2, d3 float64) {
	r := p.bin() * math.Exp(f)
	return y - r, -r, -r
}

// DerivsFTheta does nothing (no θ).
func (PoissonLogLik) DerivsFTheta(_, _ float64, _, _, _ []float64) {}

// LogConcave returns true: y·f − b·e^f is concave.
func (PoissonLogLik) LogConcave() bool { return true }

// ScalarModel returns the scalar model (no parameters), for the exact GP's Laplace and EP approximations.
func (p *Poisson) ScalarModel() (ops.ScalarLogLik, []*graph.Param) { return p.ScalarLogLik(), nil }

// poissonSpec is the Config of KindPoisson.
type poissonSpec struct {
	BinSize    float64 `json:"bin_size"`
	QuadPoints int     `json:"quad_points"`
}

// Spec describes p: its bin size (fixed data) and number of quadrature points.
func (p *Poisson) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindPoisson, poissonSpec{BinSize: p.binSize, QuadPoints: p.points})
}

func buildPoisson(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c poissonSpec
	if err := decodeLeaf(KindPoisson, raw, children, &c); err != nil {
		return nil, err
	}
	if c.BinSize <= 0 || c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: BinSize %v and QuadPoints %d must be > 0", KindPoisson, c.BinSize, c.QuadPoints)
	}
	return NewPoisson(PoissonConfig(c))
}

var _ gp.Describer = (*Poisson)(nil)
