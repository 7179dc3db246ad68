package likelihoods

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mathext"
)

// KindStudentT is the Spec kind of a Student-t likelihood (gp.Spec).
const KindStudentT = "likelihood/studentt"

func init() {
	gp.RegisterKind(KindStudentT, buildStudentT)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name:           "studentt",
		Kind:           KindStudentT,
		MissingTargets: true,
		Doc:            "real targets with heavy-tailed Student-t noise (ν = 3): robust to outliers",
		New: func(gp.LikelihoodOptions) (gp.Likelihood, error) {
			return asLikelihood(NewStudentT(StudentTConfig{}))
		},
	})
}

// Defaults of StudentTConfig.
const (
	// DefaultStudentTScale is the initial scale σ (not a variance).
	DefaultStudentTScale = 1.0
	// DefaultStudentTScaleFloor is the lower bound of σ: the density divides by it.
	DefaultStudentTScaleFloor = 1e-6
	// DefaultStudentTDF is the degrees of freedom ν: 3 is the smallest integer with a finite variance, heavy
	// tails without being Cauchy (GPflow's default).
	DefaultStudentTDF = 3.0
	// DefaultStudentTDFFloor is the lower bound of ν when it is trained.
	DefaultStudentTDFFloor = 1e-6
)

// StudentTConfig configures a Student-t likelihood. Zero values mean defaults.
type StudentTConfig struct {
	// Scale is the initial scale σ (default DefaultStudentTScale).
	Scale float64
	// ScaleFloor is the lower bound of σ (default DefaultStudentTScaleFloor); Scale must exceed it.
	ScaleFloor float64
	// DF is the degrees of freedom ν (default DefaultStudentTDF). It is a Param that is frozen (not trainable)
	// unless TrainDF is set: ν and σ are poorly identified from data, so ν is usually fixed.
	DF float64
	// TrainDF makes the DF Param trainable.
	TrainDF bool
	// QuadPoints is the number of Gauss–Hermite nodes (default ops.DefaultQuadPoints).
	QuadPoints int
}

// StudentT is the likelihood y = f + σ·t_ν: p(y | f) = Γ((ν+1)/2)/(Γ(ν/2)√(νπ)σ) · (1 + (y − f)²/(νσ²))^(−(ν+1)/2),
// independently for every entry. Expectations and the predictive log density use Gauss–Hermite quadrature.
type StudentT struct {
	scale, df *graph.Param // σ and ν, scalars, Positive
	points    int
}

var _ gp.Likelihood = (*StudentT)(nil)

// NewStudentT returns a Student-t likelihood with Params "likelihood.scale" (trainable) and "likelihood.df"
// (frozen unless cfg.TrainDF). It returns an error wrapping gp.ErrConfig for a negative or non-finite Scale,
// ScaleFloor or DF, Scale ≤ ScaleFloor, DF ≤ DefaultStudentTDFFloor, or negative QuadPoints.
func NewStudentT(cfg StudentTConfig) (*StudentT, error) {
	points, err := quadPointsOrDefault("StudentT", cfg.QuadPoints)
	if err != nil {
		return nil, err
	}
	floor, err := positiveOrDefault("StudentT", "ScaleFloor", cfg.ScaleFloor, DefaultStudentTScaleFloor)
	if err != nil {
		return nil, err
	}
	sigma, err := positiveOrDefault("StudentT", "Scale", cfg.Scale, DefaultStudentTScale)
	if err != nil {
		return nil, err
	}
	nu, err := positiveOrDefault("StudentT", "DF", cfg.DF, DefaultStudentTDF)
	if err != nil {
		return nil, err
	}
	scale, err := positiveParam("StudentT", "likelihood.scale", sigma, floor)
	if err != nil {
		return nil, err
	}
	df, err := positiveParam("StudentT", "likelihood.df", nu, DefaultStudentTDFFloor)
	if err != nil {
		return nil, err
	}
	df.SetTrainable(cfg.TrainDF)
	return &StudentT{scale: scale, df: df, points: points}, nil
}

// LatentDim returns p: one latent function per observed column (error for p < 1).
func (*StudentT) LatentDim(p int) (int, error) {
	if p < 1 {
		return 0, &ops.ShapeError{Op: "StudentT.LatentDim", Want: "P ≥ 1", Got: fmt.Sprint(p)}
	}
	return p, nil
}

// Scale returns the current scale σ.
func (s *StudentT) Scale() float64 { return s.scale.Value()[0] }

// DF returns the current degrees of freedom ν.
func (s *StudentT) DF() float64 { return s.df.Value()[0] }

// VariationalExpectations returns [N]: Σ_l E_{N(f; μ, v)}[log p(y | f)] by Gauss–Hermite quadrature for fMean,
// fVar, y [N,L], differentiable with respect to σ (and ν when trainable).
func (s *StudentT) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	gr, ok := veOperands("StudentT", fMean, fVar, y)
	if !ok {
		return invalidVE(gr)
	}
	return gr.QuadratureVE(StudentTLogLik{}, s.points, fMean, fVar, y, gr.Param(s.scale), gr.Param(s.df))
}

// PredictMeanVar returns the predictive mean μ and variance v + σ²ν/(ν − 2) of y [n,L] given fMean, fVar [n,L]
// (row-major). For ν ≤ 2 the Student-t variance does not exist and the variance is +Inf (for ν ≤ 1 the mean
// does not exist either; μ is still returned, the median). It returns an error for inconsistent sizes or
// non-finite values.
func (s *StudentT) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	if _, err := checkMarginals("StudentT.PredictMeanVar", fMean, fVar, n); err != nil {
		return nil, nil, err
	}
	sigma, nu := s.Scale(), s.DF()
	noise := math.Inf(1)
	if nu > 2 {
		noise = sigma * sigma * nu / (nu - 2)
	}
	mean = append([]float64(nil), fMean...)
	variance = make([]float64, len(fVar))
	for i, v := range fVar {
		variance[i] = math.Max(v, 0) + noise
	}
	return mean, variance, nil
}

// PredictLogDensity returns log ∫ p(y | f) N(f; μ, v) df summed over each row's columns [n], by Gauss–Hermite
// quadrature in log space (ops.GaussHermiteLogExpect). It returns an error for inconsistent sizes or non-finite
// values.
func (s *StudentT) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	l, err := checkObservations("StudentT.PredictLogDensity", fMean, fVar, y, n)
	if err != nil {
		return nil, err
	}
	return quadLogDensity(StudentTLogLik{}, s.points, []float64{s.Scale(), s.DF()}, n, l, fMean, fVar, y)
}

// Params returns the scale and the degrees-of-freedom Params (the latter frozen by default).
func (s *StudentT) Params() []*graph.Param { return []*graph.Param{s.scale, s.df} }

// String names the likelihood and its current parameters.
func (s *StudentT) String() string {
	return fmt.Sprintf("StudentT(scale=%.6g, df=%.6g, quadPoints=%d)", s.Scale(), s.DF(), s.points)
}

// StudentTLogLik is the Student-t log p(y | f, σ, ν) with location f and θ = [σ, ν] (scale, degrees of
// freedom) as an ops.ScalarLogLik.
type StudentTLogLik struct{}

var _ ops.ScalarLogLik = StudentTLogLik{}

// Name returns "StudentT".
func (StudentTLogLik) Name() string { return "StudentT" }

// NumTheta returns 2 (σ, ν).
func (StudentTLogLik) NumTheta() int { return 2 }

// LogProb returns log Γ((ν+1)/2) − log Γ(ν/2) − ½log(νπ) − log σ − ((ν+1)/2)·log(1 + (y − f)²/(νσ²)).
func (StudentTLogLik) LogProb(f, y float64, theta []float64) float64 {
	sigma, nu := theta[0], theta[1]
	a, _ := math.Lgamma((nu + 1) / 2)
	b, _ := math.Lgamma(nu / 2)
	r := (y - f) / sigma
	return a - b - 0.5*math.Log(nu*math.Pi) - math.Log(sigma) - 0.5*(nu+1)*math.Log1p(r*r/nu)
}

// DLogProbDF returns (ν + 1)(y − f)/(νσ² + (y − f)²).
func (StudentTLogLik) DLogProbDF(f, y float64, theta []float64) float64 {
	sigma, nu := theta[0], theta[1]
	r := y - f
	return (nu + 1) * r / (nu*sigma*sigma + r*r)
}

// DLogProbDTheta writes ∂/∂σ = −1/σ + (ν + 1)r²/(σ(νσ² + r²)) and
// ∂/∂ν = ½[ψ((ν+1)/2) − ψ(ν/2)] − 1/(2ν) − ½log(1 + r²/(νσ²)) + (ν + 1)r²/(2ν(νσ² + r²)), r = y − f.
func (StudentTLogLik) DLogProbDTheta(f, y float64, theta []float64, dst []float64) {
	sigma, nu := theta[0], theta[1]
	r := y - f
	r2 := r * r
	den := nu*sigma*sigma + r2
	dst[0] = -1/sigma + (nu+1)*r2/(sigma*den)
	dst[1] = 0.5*(mathext.Digamma((nu+1)/2)-mathext.Digamma(nu/2)) - 0.5/nu -
		0.5*math.Log1p(r2/(nu*sigma*sigma)) + (nu+1)*r2/(2*nu*den)
}

var _ ops.LaplaceLogLik = StudentTLogLik{}

// DerivsF returns the first three derivatives in f of log p, with r = y − f and D = νσ² + r²:
// (ν + 1)r/D, (ν + 1)(r² − νσ²)/D² and 2(ν + 1)r(r² − 3νσ²)/D³. The second is positive for r² > νσ² (W < 0: the
// likelihood is not log-concave, Jylänki, Vanhatalo & Vehtari 2011).
func (StudentTLogLik) DerivsF(f, y float64, theta []float64) (d1, d2, d3 float64) {
	sigma, nu := theta[0], theta[1]
	r := y - f
	s2 := nu * sigma * sigma
	d := s2 + r*r
	return (nu + 1) * r / d, (nu + 1) * (r*r - s2) / (d * d), 2 * (nu + 1) * r * (r*r - 3*s2) / (d * d * d)
}

// DerivsFTheta writes ∂/∂σ and ∂/∂ν of ∂log p/∂f and ∂²log p/∂f² into d1 and d2 (r = y − f, D = νσ² + r²):
// ∂d₁/∂σ = −2νσ(ν + 1)r/D², ∂d₁/∂ν = r(r² − σ²)/D², ∂d₂/∂σ = −2νσ(ν + 1)(3r² − νσ²)/D³ and
// ∂d₂/∂ν = [(r² − (2ν + 1)σ²)D − 2σ²(ν + 1)(r² − νσ²)]/D³.
func (StudentTLogLik) DerivsFTheta(f, y float64, theta []float64, d1, d2 []float64) {
	sigma, nu := theta[0], theta[1]
	r := y - f
	r2, sg2 := r*r, sigma*sigma
	d := nu*sg2 + r2
	d2s, d3s := d*d, d*d*d
	d1[0] = -2 * nu * sigma * (nu + 1) * r / d2s
	d1[1] = r * (r2 - sg2) / d2s
	d2[0] = -2 * nu * sigma * (nu + 1) * (3*r2 - nu*sg2) / d3s
	d2[1] = ((r2-(2*nu+1)*sg2)*d - 2*sg2*(nu+1)*(r2-nu*sg2)) / d3s
}

// LogConcave returns false: the Student-t density has heavy tails.
func (StudentTLogLik) LogConcave() bool { return false }

// ScalarModel returns the scalar model and its parameters [σ, ν] (ν frozen unless trained), for the exact GP's
// Laplace and EP approximations.
func (s *StudentT) ScalarModel() (ops.ScalarLogLik, []*graph.Param) {
	return StudentTLogLik{}, []*graph.Param{s.scale, s.df}
}

// studentTSpec is the Config of KindStudentT: structure only (σ and ν are Params, which model files restore
// after gp.BuildSpec).
type studentTSpec struct {
	ScaleFloor float64 `json:"scale_floor"`
	TrainDF    bool    `json:"train_df"`
	QuadPoints int     `json:"quad_points"`
}

// Spec describes s: its scale floor, whether ν is trainable and its number of quadrature points (σ and ν are
// Params).
func (s *StudentT) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindStudentT, studentTSpec{ScaleFloor: positiveFloor(s.scale), TrainDF: s.df.Trainable(), QuadPoints: s.points})
}

func buildStudentT(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c studentTSpec
	if err := decodeLeaf(KindStudentT, raw, children, &c); err != nil {
		return nil, err
	}
	if c.ScaleFloor <= 0 || c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: scale floor %v and QuadPoints %d must be > 0", KindStudentT, c.ScaleFloor, c.QuadPoints)
	}
	return NewStudentT(StudentTConfig{ScaleFloor: c.ScaleFloor, Scale: placeholderAbove(c.ScaleFloor), TrainDF: c.TrainDF, QuadPoints: c.QuadPoints})
}

var _ gp.Describer = (*StudentT)(nil)
