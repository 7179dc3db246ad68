package main

// The polynomial kernel, defined outside gpzoo with its exported API only: its covariance function (the maths,
// on plain slices, with analytic gradients), the gp.Kernel that applies it through the fused covariance op, its
// Spec kind and Builder (so that model files rebuild it), and one init registering the kind and the families
// users name ("poly2", "poly3": a kernel expression such as "se+poly2" can then use them).

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindPolynomial is the Spec kind of Polynomial.
const KindPolynomial = "example/kernel/polynomial"

// MaxDegree bounds the degree of a Polynomial.
const MaxDegree = 20

func init() {
	gp.RegisterKind(KindPolynomial, buildPolynomial) // first: RegisterKernel checks that the kind is known
	for _, d := range []int{2, 3} {
		gp.RegisterKernel(gp.KernelFamily{
			Name: fmt.Sprintf("poly%d", d),
			Kind: KindPolynomial,
			Doc:  fmt.Sprintf("polynomial of degree %d σ²(xᵀx'/ℓ² + c)^%d, trainable σ², ℓ, c; not stationary (examples/customkernel)", d, d),
			New: func(o gp.KernelOptions) (gp.Kernel, error) {
				return NewPolynomial(PolynomialConfig{Name: o.Name, InputDim: o.InputDim, Degree: d})
			},
		})
	}
}

// PolynomialCov is the covariance function k(x, x') = σ²(xᵀx'/ℓ² + c)^d of a fixed integer degree d ≥ 1. Its
// hyperparameters (already constrained, scalars) are σ², ℓ and c.
type PolynomialCov struct{ Degree int }

// Name includes the degree: it enters the fused op's hash, so two degrees are two different ops.
func (f PolynomialCov) Name() string { return fmt.Sprintf("Polynomial(degree=%d)", f.Degree) }

// Hypers returns σ², ℓ and c, all scalars.
func (PolynomialCov) Hypers() []ops.CovHyper {
	return []ops.CovHyper{{Name: "variance"}, {Name: "lengthscale"}, {Name: "offset"}}
}

// ipow returns s^n for n ≥ 0 by repeated multiplication (exact for a negative s, unlike a real power).
func ipow(s float64, n int) float64 {
	p := 1.0
	for range n {
		p *= s
	}
	return p
}

func dot(a, b []float64) float64 {
	s := 0.0
	for k, v := range a {
		s += v * b[k]
	}
	return s
}

// hypers returns σ², ℓ, c.
func hypers(h []ops.CovInput) (v, l, c float64) { return h[0].Scalar(), h[1].Scalar(), h[2].Scalar() }

// Matrix writes K_ij = σ²(x1_i·x2_j/ℓ² + c)^d.
func (f PolynomialCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	v, l, c := hypers(h)
	for i := 0; i < n; i++ {
		a := x1.Data[i*d : (i+1)*d]
		for j := 0; j < m; j++ {
			out[i*m+j] = v * ipow(dot(a, x2.Data[j*d:(j+1)*d])/(l*l)+c, f.Degree)
		}
	}
}

// MatrixGrad: with s_ij = x1_i·x2_j/ℓ² + c and t_ij = G_ij σ² d s_ij^(d−1) (the gradient with respect to s):
// ∂/∂x1_i = Σ_j t_ij x2_j/ℓ², ∂/∂x2_j = Σ_i t_ij x1_i/ℓ², ∂/∂σ² = Σ G_ij s_ij^d, ∂/∂ℓ = Σ t_ij (−2 x1_i·x2_j/ℓ³),
// ∂/∂c = Σ t_ij.
func (f PolynomialCov) MatrixGrad(wrt int, x1, x2 ops.CovInput, h []ops.CovInput, _, g, dst []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	v, l, c := hypers(h)
	clear(dst)
	for i := 0; i < n; i++ {
		a := x1.Data[i*d : (i+1)*d]
		for j := 0; j < m; j++ {
			b := x2.Data[j*d : (j+1)*d]
			p := dot(a, b)
			s := p/(l*l) + c
			gij := g[i*m+j]
			t := gij * v * float64(f.Degree) * ipow(s, f.Degree-1)
			switch wrt {
			case 0:
				for k := range d {
					dst[i*d+k] += t * b[k] / (l * l)
				}
			case 1:
				for k := range d {
					dst[j*d+k] += t * a[k] / (l * l)
				}
			case 2:
				dst[0] += gij * ipow(s, f.Degree)
			case 3:
				dst[0] += t * (-2 * p / (l * l * l))
			case 4:
				dst[0] += t
			}
		}
	}
}

// Diag writes σ²(|x_i|²/ℓ² + c)^d.
func (f PolynomialCov) Diag(x ops.CovInput, h []ops.CovInput, out []float64) {
	n, d := x.Rows(), x.Cols()
	v, l, c := hypers(h)
	for i := 0; i < n; i++ {
		a := x.Data[i*d : (i+1)*d]
		out[i] = v * ipow(dot(a, a)/(l*l)+c, f.Degree)
	}
}

// DiagGrad is MatrixGrad on the diagonal, where x enters twice: ∂/∂x_i = t_i 2x_i/ℓ².
func (f PolynomialCov) DiagGrad(wrt int, x ops.CovInput, h []ops.CovInput, _, g, dst []float64) {
	n, d := x.Rows(), x.Cols()
	v, l, c := hypers(h)
	clear(dst)
	for i := 0; i < n; i++ {
		a := x.Data[i*d : (i+1)*d]
		p := dot(a, a)
		s := p/(l*l) + c
		t := g[i] * v * float64(f.Degree) * ipow(s, f.Degree-1)
		switch wrt {
		case 0:
			for k := range d {
				dst[i*d+k] = t * 2 * a[k] / (l * l)
			}
		case 1:
			dst[0] += g[i] * ipow(s, f.Degree)
		case 2:
			dst[0] += t * (-2 * p / (l * l * l))
		case 3:
			dst[0] += t
		}
	}
}

// PolynomialConfig configures NewPolynomial. Zero values mean defaults.
type PolynomialConfig struct {
	// Name prefixes the Params' names (default "poly<d>").
	Name string
	// InputDim is D (> 0); Degree is d (1..MaxDegree).
	InputDim, Degree int
	// Variance σ², Lengthscale ℓ and Offset c are the initial values (default 1 each).
	Variance, Lengthscale, Offset float64
}

// Polynomial is the kernel σ²(xᵀx'/ℓ² + c)^d with trainable σ², ℓ, c (positive) and a fixed degree d.
type Polynomial struct {
	name                          string
	dim, degree                   int
	Variance, Lengthscale, Offset *graph.Param
}

// NewPolynomial returns a Polynomial kernel.
func NewPolynomial(c PolynomialConfig) (*Polynomial, error) {
	if c.InputDim <= 0 || c.Degree < 1 || c.Degree > MaxDegree {
		return nil, fmt.Errorf("%w: polynomial kernel: InputDim %d (want > 0), degree %d (want 1..%d)", gp.ErrConfig, c.InputDim, c.Degree, MaxDegree)
	}
	if c.Name == "" {
		c.Name = fmt.Sprintf("poly%d", c.Degree)
	}
	k := &Polynomial{name: c.Name, dim: c.InputDim, degree: c.Degree}
	for _, p := range []struct {
		field **graph.Param
		name  string
		v     float64
	}{{&k.Variance, "variance", c.Variance}, {&k.Lengthscale, "lengthscale", c.Lengthscale}, {&k.Offset, "offset", c.Offset}} {
		v := p.v
		if v == 0 {
			v = 1
		}
		var err error
		if *p.field, err = graph.NewParam(c.Name+"."+p.name, []float64{v}, graph.Positive{}); err != nil {
			return nil, fmt.Errorf("polynomial kernel: %w", err)
		}
	}
	return k, nil
}

func (k *Polynomial) hyper(g *graph.Graph) []*graph.Node {
	return []*graph.Node{g.Param(k.Variance), g.Param(k.Lengthscale), g.Param(k.Offset)}
}

// K returns the covariance matrix [N,M], one fused op.
func (k *Polynomial) K(x1, x2 *graph.Node) *graph.Node {
	return x1.Graph().CovMatrix(PolynomialCov{Degree: k.degree}, x1, x2, k.hyper(x1.Graph())...)
}

// KDiag returns the diagonal [N].
func (k *Polynomial) KDiag(x *graph.Node) *graph.Node {
	return x.Graph().CovDiag(PolynomialCov{Degree: k.degree}, x, k.hyper(x.Graph())...)
}

// InputDim returns D.
func (k *Polynomial) InputDim() int { return k.dim }

// Degree returns d.
func (k *Polynomial) Degree() int { return k.degree }

// Params returns σ², ℓ and c.
func (k *Polynomial) Params() []*graph.Param {
	return []*graph.Param{k.Variance, k.Lengthscale, k.Offset}
}

func (k *Polynomial) String() string {
	return fmt.Sprintf("Polynomial(degree=%d, variance=%.4g, lengthscale=%.4g, offset=%.4g)", k.degree,
		k.Variance.Value()[0], k.Lengthscale.Value()[0], k.Offset.Value()[0])
}

// polynomialSpec is the Config of KindPolynomial.
type polynomialSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
	Degree   int    `json:"degree"`
}

// Spec describes the kernel: the Params' name prefix, D and the degree.
func (k *Polynomial) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindPolynomial, polynomialSpec{Name: k.name, InputDim: k.dim, Degree: k.degree})
}

// buildPolynomial rebuilds a Polynomial from its Spec (the model file then sets the Params' values).
func buildPolynomial(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	if len(children) != 0 {
		return nil, fmt.Errorf("%s: %w: takes no children, got %d", KindPolynomial, gp.ErrConfig, len(children))
	}
	var c polynomialSpec
	if err := gp.DecodeConfig(KindPolynomial, raw, &c); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindPolynomial, c.InputDim); err != nil {
		return nil, err
	}
	return NewPolynomial(PolynomialConfig{Name: c.Name, InputDim: c.InputDim, Degree: c.Degree})
}
