package vbks

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Synthetic data of the paper's kernel-selection experiments: Teng, Chen, Zhang & Low (2020), "Scalable
// Variational Bayesian Kernel Selection for Sparse Gaussian Process Regression", AAAI, Sec. 6.1 and App. E.1
// (MATH.md §12).

// The canonical names of the paper's two true kernels (App. E.1). They equal the gp/grammar canonical strings of
// the same expressions.
const (
	// TruthPerLinRQ is PER×LIN×RQ with PER(ℓ=1, p=2π, σ²=0.1²), LIN(σ²=1/3²), RQ(ℓ=8, α=1, σ²=0.1²).
	TruthPerLinRQ = "PER*LIN*RQ"
	// TruthPerRQLin is (PER+RQ)×LIN with PER(ℓ=2, p=2π, σ²=0.1²), RQ(ℓ=3, α=1, σ²=0.1²), LIN(σ²=1/5²).
	TruthPerRQLin = "(PER+RQ)*LIN"
)

// Defaults of Synthetic: the paper's settings (Sec. 6.1).
const (
	// DefaultSyntheticNPrior is |D0|, the number of inputs whose outputs are drawn from the GP prior.
	DefaultSyntheticNPrior = 256
	// DefaultSyntheticN is |D1|, the size of the data set (the posterior-mean points).
	DefaultSyntheticN = 1000
	// DefaultSyntheticLow and DefaultSyntheticHigh bound the 1-D input domain 𝒳 = [−10, 10].
	DefaultSyntheticLow  = -10.0
	DefaultSyntheticHigh = 10.0
	// DefaultSyntheticNoiseRatio is σn² / mean(diag K00) when NoiseVariance is zero: a signal-to-noise ratio of
	// 100. The paper does not state σn²; this is our choice.
	DefaultSyntheticNoiseRatio = 1e-2
	// SyntheticPCGStream is the fixed second PCG word of the generator: Generate draws from
	// rand.New(rand.NewPCG(Synthetic.Seed, SyntheticPCGStream)). (0x56424b53 is "VBKS" in ASCII.)
	SyntheticPCGStream uint64 = 0x56424b53
)

// syntheticJitter is the Cholesky policy of the prior draw: a plain try, then jitters 1e-10·s, 1e-9·s, …, 1e-4·s
// with s = mean(diag K00) (see ops.JitterPolicy).
var syntheticJitter = ops.JitterPolicy{Initial: 1e-10, MaxTries: 7}

// Errors of the synthetic generator.
var (
	// ErrUnknownTruth reports a true-kernel name other than TruthPerLinRQ and TruthPerRQLin.
	ErrUnknownTruth = errors.New("vbks: unknown true kernel")
	// ErrSyntheticConfig reports an invalid Synthetic configuration.
	ErrSyntheticConfig = errors.New("vbks: invalid synthetic configuration")
)

// Truths returns the names of the paper's two true kernels: TruthPerLinRQ, then TruthPerRQLin.
func Truths() []string { return []string{TruthPerLinRQ, TruthPerRQLin} }

// TrueKernel returns a fresh 1-D instance of the named true kernel with the fixed hyperparameters of App. E.1:
//
//	TruthPerRQLin: k_PER = 0.1² exp(−2 sin²(π|x−x'|/2π)/2²), k_RQ = 0.1² (1 + (x−x')²/(2·1·3²))⁻¹, k_LIN = x x'/5²
//	TruthPerLinRQ: k_PER = 0.1² exp(−2 sin²(π|x−x'|/2π)/1²), k_RQ = 0.1² (1 + (x−x')²/(2·1·8²))⁻¹, k_LIN = x x'/3²
//
// built from gp.NewPeriodic (period 2π), gp.NewRationalQuadratic (α = 1), gp.NewLinear, gp.NewSum and
// gp.NewProduct. The error wraps ErrUnknownTruth for any other name.
func TrueKernel(truth string) (gp.Kernel, error) {
	var perLS, rqLS, linVar float64
	switch truth {
	case TruthPerLinRQ:
		perLS, rqLS, linVar = 1, 8, 1.0/9
	case TruthPerRQLin:
		perLS, rqLS, linVar = 2, 3, 1.0/25
	default:
		return nil, fmt.Errorf("%w %q (want %q or %q)", ErrUnknownTruth, truth, TruthPerLinRQ, TruthPerRQLin)
	}
	const baseVariance = 0.1 * 0.1 // σ² of PER and RQ in both true kernels
	per, err := gp.NewPeriodic(gp.KernelConfig{Name: "per", InputDim: 1, Variance: baseVariance,
		Lengthscales: []float64{perLS}, Period: 2 * math.Pi})
	if err != nil {
		return nil, fmt.Errorf("vbks: TrueKernel %q: %w", truth, err)
	}
	rq, err := gp.NewRationalQuadratic(gp.KernelConfig{Name: "rq", InputDim: 1, Variance: baseVariance,
		Lengthscales: []float64{rqLS}, Alpha: 1})
	if err != nil {
		return nil, fmt.Errorf("vbks: TrueKernel %q: %w", truth, err)
	}
	lin, err := gp.NewLinear(gp.KernelConfig{Name: "lin", InputDim: 1, Variance: linVar})
	if err != nil {
		return nil, fmt.Errorf("vbks: TrueKernel %q: %w", truth, err)
	}
	var k gp.Kernel
	if truth == TruthPerLinRQ {
		k, err = gp.NewProduct(per, lin, rq)
	} else {
		var s *gp.Sum
		if s, err = gp.NewSum(per, rq); err == nil {
			k, err = gp.NewProduct(s, lin)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("vbks: TrueKernel %q: %w", truth, err)
	}
	return k, nil
}

// Synthetic configures the synthetic data generator of Sec. 6.1 / App. E.1. Zero values mean the paper's
// settings.
//
// The protocol: draw NPrior inputs D0 uniformly on [Low, High]; draw y0 = L z + σn ε from the full-rank GP prior
// with the true kernel plus Gaussian noise of variance σn² (L the lower Cholesky factor of K00 + jitter·I, z and ε
// standard normal); draw N inputs D1 uniformly; the data set is (D1, μ) with μ the GP predictive mean of eq. (1),
// μ = K10 (K00 + σn² I)⁻¹ y0, computed with a Cholesky solve. NTest further inputs, drawn after D1, give a
// held-out test set with the same posterior mean.
type Synthetic struct {
	// Truth is TruthPerLinRQ or TruthPerRQLin (required).
	Truth string
	// NPrior is |D0| (default DefaultSyntheticNPrior = 256).
	NPrior int
	// N is |D1|, the training set size (default DefaultSyntheticN = 1000).
	N int
	// NTest is the number of extra inputs, drawn after D1, whose posterior means form a held-out test set
	// (default 0: no test set). Changing NTest does not change the training set.
	NTest int
	// Low and High bound the input domain; when both are zero the domain is [DefaultSyntheticLow,
	// DefaultSyntheticHigh] = [−10, 10]. Otherwise they are used as given and must satisfy Low < High.
	Low, High float64
	// NoiseVariance is σn², the noise variance of the prior draw and of eq. (1). Zero means
	// DefaultSyntheticNoiseRatio × mean(diag K00) (a signal-to-noise ratio of 100); it must not be negative.
	NoiseVariance float64
	// Seed seeds the generator rand.New(rand.NewPCG(Seed, SyntheticPCGStream)). The draw order is D0, z, ε, D1,
	// then the test inputs.
	Seed uint64
}

// withDefaults returns s with its zero fields replaced by the defaults, after validating it.
func (s Synthetic) withDefaults() (Synthetic, error) {
	bad := func(format string, args ...any) (Synthetic, error) {
		return s, fmt.Errorf("%w: "+format, append([]any{ErrSyntheticConfig}, args...)...)
	}
	if s.Truth != TruthPerLinRQ && s.Truth != TruthPerRQLin {
		return s, fmt.Errorf("%w: %w %q (want %q or %q)", ErrSyntheticConfig, ErrUnknownTruth, s.Truth, TruthPerLinRQ, TruthPerRQLin)
	}
	if s.NPrior == 0 {
		s.NPrior = DefaultSyntheticNPrior
	}
	if s.N == 0 {
		s.N = DefaultSyntheticN
	}
	if s.Low == 0 && s.High == 0 {
		s.Low, s.High = DefaultSyntheticLow, DefaultSyntheticHigh
	}
	switch {
	case s.NPrior < 0:
		return bad("NPrior must be positive, got %d", s.NPrior)
	case s.N < 0:
		return bad("N must be positive, got %d", s.N)
	case s.NTest < 0:
		return bad("NTest must not be negative, got %d", s.NTest)
	case math.IsNaN(s.Low) || math.IsInf(s.Low, 0) || math.IsNaN(s.High) || math.IsInf(s.High, 0):
		return bad("the domain bounds must be finite, got [%v, %v]", s.Low, s.High)
	case !(s.Low < s.High):
		return bad("Low must be less than High, got [%v, %v]", s.Low, s.High)
	case math.IsInf(s.High-s.Low, 0):
		return bad("the domain [%v, %v] is too wide (its width overflows)", s.Low, s.High)
	case math.IsNaN(s.NoiseVariance) || math.IsInf(s.NoiseVariance, 0) || s.NoiseVariance < 0:
		return bad("NoiseVariance must be finite and non-negative, got %v", s.NoiseVariance)
	}
	return s, nil
}

// Generate draws the data set of Sec. 6.1 (see Synthetic for the protocol) and returns the training inputs x
// [N,1], their outputs y [N,1] (posterior means, eq. 1), and the test set xTest [NTest,1], yTest [NTest,1] (both
// nil when NTest = 0). The result is a deterministic function of the configuration.
//
// Errors: one wrapping ErrSyntheticConfig (and ErrUnknownTruth for an unknown Truth) for an invalid
// configuration, including mean(diag K00) not positive and finite when NoiseVariance must be derived from it;
// one wrapping *ops.NotPDError when K00 + jitter·I stays not positive definite for every jitter up to 1e-4 ×
// mean(diag K00), or when K00 + σn² I is not positive definite; errors of gp.KernelMatrix.
//
// Cost: O(NPrior³ + (N + NTest)·NPrior) time, O(NPrior·(NPrior + N + NTest)) memory.
func (s Synthetic) Generate() (x, y, xTest, yTest *mat.Dense, err error) {
	c, err := s.withDefaults()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	k, err := TrueKernel(c.Truth)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, SyntheticPCGStream))
	n0 := c.NPrior

	// D0 and the prior draw y0 = L z + σn ε.
	x0 := c.uniformInputs(rng, n0)
	k00, err := gp.KernelMatrix(k, x0, x0)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("vbks: synthetic K00: %w", err)
	}
	k00Data := k00.RawMatrix().Data // [n0,n0], row-major, stride n0 (fresh from KernelMatrix)
	meanDiag := 0.0
	for i := 0; i < n0; i++ {
		meanDiag += k00Data[i*n0+i]
	}
	meanDiag /= float64(n0)
	noise := c.NoiseVariance
	if noise == 0 {
		if !(meanDiag > 0) || math.IsInf(meanDiag, 0) {
			return nil, nil, nil, nil, fmt.Errorf("%w: mean prior variance %v is not positive and finite; set NoiseVariance",
				ErrSyntheticConfig, meanDiag)
		}
		noise = DefaultSyntheticNoiseRatio * meanDiag
	}
	l := make([]float64, n0*n0)
	if _, err := ops.CholeskyLower(l, k00Data, n0, syntheticJitter); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("vbks: synthetic prior draw: %w", err)
	}
	z := make([]float64, n0)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	y0 := mat.NewVecDense(n0, nil)
	y0.MulVec(mat.NewTriDense(n0, mat.Lower, l), mat.NewVecDense(n0, z)) // L z
	sn := math.Sqrt(noise)
	for i := 0; i < n0; i++ {
		y0.SetVec(i, y0.AtVec(i)+sn*rng.NormFloat64())
	}

	// α = (K00 + σn² I)⁻¹ y0 by a Cholesky solve (eq. 1).
	a := make([]float64, n0*n0)
	copy(a, k00Data)
	for i := 0; i < n0; i++ {
		a[i*n0+i] += noise
	}
	ln := make([]float64, n0*n0)
	if _, err := ops.CholeskyLower(ln, a, n0, ops.JitterPolicy{MaxTries: -1}); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("vbks: synthetic posterior (K00 + σn²I, σn² = %g): %w", noise, err)
	}
	alpha := make([]float64, n0)
	ops.CholSolveTo(alpha, ln, y0.RawVector().Data, n0, 1)
	alphaVec := mat.NewVecDense(n0, alpha)

	// D1 and then the test inputs, each with its posterior mean μ = K·0 α. The two kernel matrices are computed
	// separately so that the training set does not depend on NTest.
	x, y, err = c.posteriorMean(k, rng, c.N, x0, alphaVec)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if c.NTest > 0 {
		if xTest, yTest, err = c.posteriorMean(k, rng, c.NTest, x0, alphaVec); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return x, y, xTest, yTest, nil
}

// uniformInputs draws n inputs uniformly on [Low, High] as an [n,1] matrix.
func (s Synthetic) uniformInputs(rng *rand.Rand, n int) *mat.Dense {
	d := make([]float64, n)
	w := s.High - s.Low
	for i := range d {
		d[i] = min(s.Low+w*rng.Float64(), s.High)
	}
	return mat.NewDense(n, 1, d)
}

// posteriorMean draws n inputs and returns them [n,1] with their predictive means K(x, x0) α [n,1].
func (s Synthetic) posteriorMean(k gp.Kernel, rng *rand.Rand, n int, x0 *mat.Dense, alpha *mat.VecDense) (x, mu *mat.Dense, err error) {
	x = s.uniformInputs(rng, n)
	kx0, err := gp.KernelMatrix(k, x, x0) // [n,n0]
	if err != nil {
		return nil, nil, fmt.Errorf("vbks: synthetic cross-covariance: %w", err)
	}
	m := mat.NewVecDense(n, nil)
	m.MulVec(kx0, alpha)
	return x, mat.NewDense(n, 1, m.RawVector().Data), nil
}
