package ops

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mathext"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ScalarLogLik is a scalar observation model log p(y | f, θ) in plain Go: one latent value f, one observation y
// and NumTheta scalar parameters θ (already constrained). QuadratureVE integrates it against a normal q(f).
//
// Implementations must be pure functions of their arguments and of constants fixed at construction: the
// constants must be written into Name (e.g. "Poisson{binSize=0.5}"), which goes into the op's hash, so two
// models that differ only in a constant are never merged into one graph node.
type ScalarLogLik interface {
	// Name names the model together with every constant that changes its meaning.
	Name() string
	// NumTheta is the number of scalar parameters θ.
	NumTheta() int
	// LogProb returns log p(y | f, θ).
	LogProb(f, y float64, theta []float64) float64
	// DLogProbDF returns ∂/∂f log p(y | f, θ).
	DLogProbDF(f, y float64, theta []float64) float64
	// DLogProbDTheta writes ∂/∂θ_j log p(y | f, θ) into dst[j] (len(dst) = NumTheta).
	DLogProbDTheta(f, y float64, theta []float64, dst []float64)
}

// QuadVarGradFloor is the smallest variance at which QuadratureVE evaluates its gradient with respect to v. The
// chain rule through fᵢ = μ + √(2v)·xᵢ gives ∂/∂v = Σᵢ (wᵢ/√π) g′(fᵢ)·xᵢ/√(2v), a ratio 0/0 at v = 0 (its limit
// is ½E[g″]). For v < QuadVarGradFloor the backward pass uses the derivative at v = QuadVarGradFloor, nodes
// included: finite, and the continuous extension of the exact value. At the floor √(2v) ≈ 1.4e−6, so the round-off
// of the sum (≈ 1e−16·|g′|) costs a relative error of only ≈ 1e−10 after the division.
const QuadVarGradFloor = 1e-12

// quadK is the variational expectation of a scalar likelihood by Gauss–Hermite quadrature.
// Inputs: mu [N,L], v [N,L], y [N,L], θ_0 … θ_{T−1} scalars. Output [N]: the sum over l of
// E_{N(f; mu[n,l], v[n,l])}[log p(y[n,l] | f, θ)].
type quadK struct {
	lik    ScalarLogLik
	ntheta int
	rule   *ghRule
}

func (k quadK) name() string { return "QuadratureVE" }
func (k quadK) params(w io.Writer) {
	fmt.Fprintf(w, "lik=%s,ntheta=%d,points=%d", k.lik.Name(), k.ntheta, len(k.rule.x))
}
func (k quadK) arity() int { return 3 + k.ntheta }
func (k quadK) diff() []bool {
	d := make([]bool, 3+k.ntheta)
	for i := range d {
		d[i] = i != 2 // y is data
	}
	return d
}

func (k quadK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	mu := in[0]
	if len(mu) != 2 {
		return nil, &ShapeError{Op: "QuadratureVE", Want: "mu [N,L]", Got: fmt.Sprint(mu)}
	}
	for i, name := range []string{"v", "y"} {
		if !in[1+i].Eq(mu) {
			return nil, &ShapeError{Op: "QuadratureVE", Want: fmt.Sprintf("%s of mu's shape %v", name, mu), Got: fmt.Sprint(in[1+i])}
		}
	}
	for j := 0; j < k.ntheta; j++ {
		if s := in[3+j]; len(s) != 0 {
			return nil, &ShapeError{Op: "QuadratureVE", Want: fmt.Sprintf("scalar theta %d", j), Got: fmt.Sprint(s)}
		}
	}
	return tensor.Shape{mu[0]}, nil
}

func (k quadK) theta(in []arg) []float64 {
	th := make([]float64, k.ntheta)
	for j := range th {
		th[j] = in[3+j].scalar()
	}
	return th
}

// sd returns √(2v) for the forward pass: negative variances (round-off in Knn − AᵀA) count as 0.
func sdForward(v float64) float64 { return math.Sqrt(2 * math.Max(v, 0)) }

func (k quadK) forward(in []arg, out []float64) error {
	mu, v, y := in[0], in[1], in[2]
	th := k.theta(in)
	l := mu.cols()
	x, w := k.rule.x, k.rule.w
	for n := range out {
		s := 0.0
		for j := n * l; j < (n+1)*l; j++ {
			m, sd, yj := mu.data[j], sdForward(v.data[j]), y.data[j]
			for i, xi := range x {
				s += w[i] * k.lik.LogProb(m+sd*xi, yj, th)
			}
		}
		out[n] = s
	}
	return nil
}

func (k quadK) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	mu, v, y := in[0], in[1], in[2]
	th := k.theta(in)
	l := mu.cols()
	x, w := k.rule.x, k.rule.w
	switch wrt {
	case 0: // ∂/∂μ = Σᵢ (wᵢ/√π) g′(fᵢ)
		for j := range dst {
			m, sd, yj := mu.data[j], sdForward(v.data[j]), y.data[j]
			s := 0.0
			for i, xi := range x {
				s += w[i] * k.lik.DLogProbDF(m+sd*xi, yj, th)
			}
			dst[j] = g.data[j/l] * s
		}
	case 1: // ∂/∂v = Σᵢ (wᵢ/√π) g′(fᵢ)·xᵢ/√(2v), at v ≥ QuadVarGradFloor
		for j := range dst {
			m, sd, yj := mu.data[j], math.Sqrt(2*math.Max(v.data[j], QuadVarGradFloor)), y.data[j]
			s := 0.0
			for i, xi := range x {
				s += w[i] * xi * k.lik.DLogProbDF(m+sd*xi, yj, th)
			}
			dst[j] = g.data[j/l] * s / sd
		}
	default: // ∂/∂θ_t = Σ_{n,l} g_n Σᵢ (wᵢ/√π) ∂g/∂θ_t(fᵢ)
		t := wrt - 3
		tmp := make([]float64, k.ntheta)
		s := 0.0
		for j := range mu.data {
			m, sd, yj := mu.data[j], sdForward(v.data[j]), y.data[j]
			sj := 0.0
			for i, xi := range x {
				k.lik.DLogProbDTheta(m+sd*xi, yj, th, tmp)
				sj += w[i] * tmp[t]
			}
			s += g.data[j/l] * sj
		}
		dst[0] = s
	}
	return nil
}

// QuadratureVE returns the variational expectations [N]: Σ_l E_{N(f; mu[n,l], v[n,l])}[log p(y[n,l] | f, θ)] by
// Gauss–Hermite quadrature with points nodes (MATH.md §4). mu, v and y are [N,L]; theta are scalar nodes, the
// already-constrained parameters of lik, in lik's order (len(theta) = lik.NumTheta()). Negative entries of v
// (round-off) are treated as 0.
//
// Gradients flow to mu (Σᵢ (wᵢ/√π) g′(fᵢ)), v (Σᵢ (wᵢ/√π) g′(fᵢ)·xᵢ/√(2v), with v floored at QuadVarGradFloor)
// and every θ; y gets none. The op's hash holds lik.Name() and points.
//
// It returns an error for a nil lik, points < 1, a theta count other than lik.NumTheta(), and a *ShapeError for
// operands of the wrong shapes.
func QuadratureVE(lik ScalarLogLik, points int, mu, v, y *G.Node, theta ...*G.Node) (*G.Node, error) {
	if lik == nil {
		return nil, fmt.Errorf("ops: QuadratureVE: nil likelihood")
	}
	rule, err := gaussHermiteRule(points)
	if err != nil {
		return nil, fmt.Errorf("ops: QuadratureVE(%s): %w", lik.Name(), err)
	}
	nt := lik.NumTheta()
	if nt < 0 || len(theta) != nt {
		return nil, &ShapeError{Op: "QuadratureVE(" + lik.Name() + ")", Want: fmt.Sprintf("%d theta operands", nt), Got: fmt.Sprint(len(theta))}
	}
	return apply(quadK{lik: lik, ntheta: nt, rule: rule}, append([]*G.Node{mu, v, y}, theta...)...)
}

// LogPhiDerivFloat returns d/dx log Φ(x) = φ(x)/Φ(x), the derivative of LogPhiFloat, stably: for x < −3 from a
// continued fraction for φ/Φ (≈ −x, no ratio of underflowing quantities), φ(x)/Φ(x) above (→ 0 as x → ∞). It is
// the derivative the LogPhi op uses.
func LogPhiDerivFloat(x float64) float64 { return logPhiDeriv(x) }

// logGammaK is log|Γ(x)| elementwise, with derivative ψ(x) (digamma).
type logGammaK struct{}

func (logGammaK) name() string     { return "LogGamma" }
func (logGammaK) params(io.Writer) {}
func (logGammaK) arity() int       { return 1 }
func (logGammaK) diff() []bool     { return []bool{true} }
func (logGammaK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	return in[0].Clone(), nil
}
func (logGammaK) forward(in []arg, out []float64) error {
	for i, x := range in[0].data {
		out[i], _ = math.Lgamma(x)
	}
	return nil
}
func (logGammaK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	for i, x := range in[0].data {
		dst[i] = g.data[i] * mathext.Digamma(x)
	}
	return nil
}

// LogGamma returns log|Γ(x)| elementwise (so log x! = LogGamma(x + 1) for counts); the derivative is the
// digamma function ψ(x). Poles (x = 0, −1, −2, …) give +Inf. Shape: any → same.
func LogGamma(x *G.Node) (*G.Node, error) { return apply(logGammaK{}, x) }
