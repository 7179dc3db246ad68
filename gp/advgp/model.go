package advgp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// ErrConfig is the sentinel of invalid ADVGP configurations.
var ErrConfig = errors.New("advgp: invalid configuration")

// Config configures New. Zero values mean defaults.
type Config struct {
	// Kernel is the prior covariance (required).
	Kernel gp.Kernel
	// Z are the initial inducing inputs [M,D] (required).
	Z *mat.Dense
	// NoiseVariance is the initial β⁻¹ (default models.DefaultNoiseVariance).
	NoiseVariance float64
	// NumData is n, the size of the whole training set (required).
	NumData int
	// Jitter > 0 is a fixed jitter added to K_mm's diagonal (gp.JitterFixed; layers.DefaultJitter before issue 31);
	// 0, the default, adds none (gp.JitterOnFailure: jitter only if the Cholesky fails; see layers.SVGPConfig).
	Jitter float64
	// FixZ freezes the inducing inputs.
	FixZ bool
}

// Model is ADVGP's weight-space augmented GP regression model (Peng, Zhe & Qi 2017, eqs. 10–15; MATH.md §11):
// f(x) = φ(x)ᵀw + ε̃ with φ(x) = Lᵀk_m(x), K_mm⁻¹ = LLᵀ, prior w ~ N(0, I), q(w) = N(μ, UᵀU) with U upper
// triangular, and y = f + N(0, β⁻¹).
//
// With C the lower Cholesky factor of K_mm, L = C⁻ᵀ, so φ(x) = C⁻¹k_m(x) is exactly the whitened projection of
// a whitened SVGP layer and w its whitened inducing variable v: μ is the layer's q.mu and U = L_qᵀ, the
// transpose of its lower factor q.sqrt0. The model therefore is a whitened single-output SVGP with a Gaussian
// likelihood (SVGP), and −ELBO = Σ_i g_i + h splits into the data terms g_i (ShardTerm, computed by the
// workers) and h = KL[q(w) ‖ N(0, I)] (eq. 15), which only the server's proximal step (Prox) touches.
type Model struct {
	SVGP  *models.SVGP
	Layer *layers.SVGP
	Lik   *likelihoods.Gaussian
}

// New returns a model with q(w) = N(0, I) (μ = 0, U = I, as the paper initialises it).
func New(c Config) (*Model, error) {
	if c.Kernel == nil || c.Z == nil {
		return nil, fmt.Errorf("%w: a Kernel and inducing inputs Z are required", ErrConfig)
	}
	if c.NumData <= 0 {
		return nil, fmt.Errorf("%w: NumData must be positive, got %d", ErrConfig, c.NumData)
	}
	noise := c.NoiseVariance
	if noise == 0 {
		noise = models.DefaultNoiseVariance
	}
	layer, err := layers.NewSVGP(layers.SVGPConfig{Name: "advgp", Kernel: c.Kernel, Z: c.Z, Jitter: c.Jitter, FixZ: c.FixZ})
	if err != nil {
		return nil, err
	}
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: noise})
	if err != nil {
		return nil, err
	}
	s, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: c.NumData})
	if err != nil {
		return nil, err
	}
	return &Model{SVGP: s, Layer: layer, Lik: lik}, nil
}

// FromSVGP views an SVGP model as ADVGP's: it must have a whitened single-output SVGP layer with a full
// (not mean-field) q and a Gaussian likelihood. The Params are shared, not copied.
func FromSVGP(s *models.SVGP) (*Model, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil SVGP", ErrConfig)
	}
	layer, ok := s.Layer.(*layers.SVGP)
	if !ok || !layer.Whitened() || layer.OutputDim() != 1 || layer.Q.Diag || layer.Mean != nil {
		return nil, fmt.Errorf("%w: ADVGP needs a whitened single-output SVGP layer with a full q and no mean function, got %T", ErrConfig, s.Layer)
	}
	lik, ok := s.Likelihood.(*likelihoods.Gaussian)
	if !ok {
		return nil, fmt.Errorf("%w: ADVGP needs a Gaussian likelihood, got %T", ErrConfig, s.Likelihood)
	}
	return &Model{SVGP: s, Layer: layer, Lik: lik}, nil
}

var _ gp.Predictor = (*Model)(nil)

// Predict returns the predictive distribution at x [N,D] (gp.Predictor): the SVGP's, f = φ(x)ᵀw under q(w) and
// y = f + N(0, β⁻¹) (models.SVGP.Predict; o.Full and o.Draws through the layer's full covariance).
func (m *Model) Predict(x *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if m == nil || m.SVGP == nil {
		return nil, fmt.Errorf("%w: Predict with an incomplete model", ErrConfig)
	}
	return m.SVGP.Predict(x, o)
}

// InputDim returns D, the inputs' width (0 for an incomplete model).
func (m *Model) InputDim() int {
	if m == nil {
		return 0
	}
	return m.SVGP.InputDim()
}

// OutputDim returns the output width, 1 (ADVGP models one output).
func (m *Model) OutputDim() int {
	if m == nil {
		return 0
	}
	return m.SVGP.OutputDim()
}

// PredictiveDim returns the SVGP's (1: ADVGP's Gaussian likelihood over one output).
func (m *Model) PredictiveDim() int {
	if m == nil {
		return 0
	}
	return m.SVGP.PredictiveDim()
}

// M returns the number of inducing points (the dimension of w).
func (m *Model) M() int { return m.Layer.NumInducing() }

// Params returns every Param in the SVGP's order: kernel hyperparameters, Z, μ, the factor, the noise.
func (m *Model) Params() []*graph.Param { return m.SVGP.Params() }

// Mu is μ's Param [M,1]; Sqrt the lower factor Uᵀ's Param [M,M] (LowerTriangular transform).
func (m *Model) Mu() *graph.Param { return m.Layer.Q.Mu }

// Sqrt is the Param of the lower factor Uᵀ of Σ [M,M] (LowerTriangular transform: softplus diagonal).
func (m *Model) Sqrt() *graph.Param { return m.Layer.Q.Sqrt[0] }

// ShardTerm is one worker's data term G_k = Σ_{i∈D_k} g_i (eq. 14) of a shard of N points: as a gp.Model its
// Loss is the unbiased batch estimate (N/B) Σ_b g_b, where g_b = −E_q[log N(y_b | f_b, β⁻¹)]
// = −log N(y_b | φ_bᵀμ, β⁻¹) + (β/2)φ_bᵀΣφ_b + (β/2)k̃_bb. h is left out.
type ShardTerm struct {
	m *Model
	n int
}

// ShardTerm returns the data term of a shard of n points.
func (m *Model) ShardTerm(n int) (*ShardTerm, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: shard size must be positive, got %d", ErrConfig, n)
	}
	return &ShardTerm{m: m, n: n}, nil
}

// Loss returns (N/B) Σ_b g_b for the batch x [B,D], y [B,1].
func (s *ShardTerm) Loss(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	b := x.Shape()
	if len(b) != 2 || b[0] > s.n {
		return g.Fail(&ops.ShapeError{Op: "advgp.ShardTerm", Want: fmt.Sprintf("a batch of at most %d rows", s.n), Got: fmt.Sprint(b)})
	}
	fm, fv := s.m.Layer.Predict(x)
	ve := g.Sum(s.m.Lik.VariationalExpectations(fm, fv, y))
	return g.Neg(g.Scale(ve, float64(s.n)/float64(b[0])))
}

// Params returns the model's Params.
func (s *ShardTerm) Params() []*graph.Param { return s.m.Params() }

// H returns h = ½(−ln|Σ| − M + tr Σ + μᵀμ) = KL[q(w) ‖ N(0, I)] (eq. 15) at the current μ and factor.
func (m *Model) H() float64 { return H(m.Mu().Value(), m.Sqrt().Value(), m.M()) }

// H returns h (eq. 15) for μ [M] and a triangular factor l [M,M] (row-major; Uᵀ or U: h depends on
// ln|Σ| = 2Σ ln|l_ii| and tr Σ = ‖l‖²_F only).
func H(mu, l []float64, m int) float64 {
	s := -float64(m)
	for _, v := range mu {
		s += v * v
	}
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			s += l[i*m+j] * l[i*m+j]
		}
		s -= 2 * math.Log(math.Abs(l[i*m+i]))
	}
	return s / 2
}
