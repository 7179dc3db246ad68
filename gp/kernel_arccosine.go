package gp

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindArcCosine is the Spec kind of the arc-cosine kernels (every order).
const KindArcCosine = "kernel/arccosine"

// ArcCosineCovs are the covariance functions of the arc-cosine kernels of orders 0, 1 and 2 (see arcCosCov).
var ArcCosineCovs = [3]ops.CovFunc{arcCosCov{0}, arcCosCov{1}, arcCosCov{2}}

// ArcCosine is the arc-cosine kernel of order n ∈ {0, 1, 2} (Cho & Saul 2009, "Kernel Methods for Deep
// Learning", eqs. 1–4; the parametrisation of GPflow's ArcCosine), the covariance of an infinitely wide layer of
// step (n = 0), ramp (n = 1) or quarter-pipe (n = 2) units:
//
//	k(x, y) = (σ²/π) J_n(θ) (‖x‖ ‖y‖)ⁿ,   ‖x‖² = Σ_d w_d x_d² + b,   cos θ = (Σ_d w_d x_d y_d + b)/(‖x‖ ‖y‖),
//
// J_0 = π − θ, J_1 = sin θ + (π − θ) cos θ, J_2 = 3 sin θ cos θ + (π − θ)(1 + 2 cos² θ) (eq. 4), with the
// weight variances w (ARD [D], or one shared) and the bias variance b of the weight prior. The order is
// structural (in the Spec), not trained. It is not stationary; k(x, x) = σ² κ_n ‖x‖²ⁿ, κ = 1, 1, 3.
//
// Edge cases: the angle of near-parallel (or antiparallel) pairs is computed as 2·atan2(‖x̂ − ŷ‖, ‖x̂ + ŷ‖) (x̂ =
// x/‖x‖ with the bias as an extra coordinate), exact to rounding where arccos loses half the digits, and θ = 0
// exactly at coincident points. The kernel's b is a positive Param, so ‖x‖ > 0 even at x = 0; a zero norm
// (b = 0 given to the covariance function directly) takes cos θ = 0 and zero input gradients. Orders 1 and 2 are
// differentiable everywhere (dJ_1/dcos θ = π − θ, dJ_2/dcos θ = 4 J_1). Order 0 has a kink at θ = 0 (k falls like
// |x − y|): there its gradient is taken as 0, the subgradient a symmetric difference tends to.
type ArcCosine struct {
	order           int
	dim             int
	shared          bool
	Variance        *graph.Param // σ², scalar
	WeightVariances *graph.Param // w [D], or a scalar when shared
	BiasVariance    *graph.Param // b, scalar
}

// NewArcCosine returns the arc-cosine kernel of the given order (0, 1 or 2). Initial values: σ² =
// c.Variance (default DefaultVariance), weight variances c.Variances (nil: one shared DefaultVariance; D values:
// ARD), bias variance DefaultVariance.
func NewArcCosine(order int, c KernelConfig) (*ArcCosine, error) {
	if order < 0 || order > 2 {
		return nil, configErr("ArcCosine kernel: order must be 0, 1 or 2, got %d", order)
	}
	if c.InputDim <= 0 {
		return nil, configErr("ArcCosine kernel: InputDim must be positive, got %d", c.InputDim)
	}
	w := c.Variances
	switch len(w) {
	case 0:
		w = []float64{DefaultVariance}
	case c.InputDim:
	default:
		return nil, configErr("ArcCosine kernel: %d weight variances for InputDim %d", len(w), c.InputDim)
	}
	name := c.Name
	if name == "" {
		name = fmt.Sprintf("arccos%d", order)
	}
	k := &ArcCosine{order: order, dim: c.InputDim, shared: len(w) == 1 && c.InputDim > 1}
	var err error
	if k.Variance, err = graph.NewParam(name+".variance", []float64{orDefault(c.Variance, DefaultVariance)}, graph.Positive{}); err != nil {
		return nil, err
	}
	shape := []int{len(w)}
	if k.shared {
		shape = nil
	}
	if k.WeightVariances, err = graph.NewParam(name+".weight_variances", w, graph.Positive{}, shape...); err != nil {
		return nil, err
	}
	if k.BiasVariance, err = graph.NewParam(name+".bias_variance", []float64{DefaultVariance}, graph.Positive{}); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *ArcCosine) hyper(g *graph.Graph) []*graph.Node {
	return []*graph.Node{g.Param(k.Variance), g.Param(k.WeightVariances), g.Param(k.BiasVariance)}
}

// K returns the covariance matrix [N,M].
func (k *ArcCosine) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	return g.CovMatrix(ArcCosineCovs[k.order], x1, x2, k.hyper(g)...)
}

// KDiag returns σ² κ_n ‖x‖²ⁿ [N].
func (k *ArcCosine) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.CovDiag(ArcCosineCovs[k.order], x, k.hyper(g)...)
}

// InputDim returns D.
func (k *ArcCosine) InputDim() int { return k.dim }

// Order returns n.
func (k *ArcCosine) Order() int { return k.order }

// CovFunc returns the covariance function behind K. (Not named Cov: ops' tests run central differences on every
// registered kernel's Cov() at coincident rows, where order 0's kink is not symmetric to second order, so no
// gradient matches a finite difference there; this kernel's tests check all three orders off that point.)
func (k *ArcCosine) CovFunc() ops.CovFunc { return ArcCosineCovs[k.order] }

// Params returns σ², the weight variances and the bias variance.
func (k *ArcCosine) Params() []*graph.Param {
	return []*graph.Param{k.Variance, k.WeightVariances, k.BiasVariance}
}

func (k *ArcCosine) String() string {
	return fmt.Sprintf("ArcCosine%d(variance=%.4g, weight_variances=%.4g, bias_variance=%.4g)", k.order,
		k.Variance.Value()[0], k.WeightVariances.Value(), k.BiasVariance.Value()[0])
}

// arcCosSpec is the Config of ArcCosine: the Params' name prefix, D, the order and whether the weight variance is
// shared by the D dimensions.
type arcCosSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
	Order    int    `json:"order"`
	Shared   bool   `json:"shared,omitempty"`
}

// Spec describes the kernel.
func (k *ArcCosine) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variance, ".variance")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindArcCosine, arcCosSpec{Name: name, InputDim: k.dim, Order: k.order, Shared: k.shared})
}

// newArcCosineARD builds an arc-cosine kernel with one weight variance per dimension when ard.
func newArcCosineARD(order int, name string, dim int, ard bool) (*ArcCosine, error) {
	c := KernelConfig{Name: name, InputDim: dim}
	if ard && dim > 0 {
		c.Variances = make([]float64, dim)
		for i := range c.Variances {
			c.Variances[i] = DefaultVariance
		}
	}
	return NewArcCosine(order, c)
}

func init() {
	RegisterKind(KindArcCosine, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c arcCosSpec
		if err := decodeLeaf(KindArcCosine, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindArcCosine, c.InputDim); err != nil {
			return nil, err
		}
		k, err := newArcCosineARD(c.Order, c.Name, c.InputDim, !c.Shared)
		if err != nil {
			return nil, err
		}
		if k.shared != c.Shared {
			return nil, configErr("%s: shared needs InputDim > 1, got %d", KindArcCosine, c.InputDim)
		}
		return k, nil
	})
	units := [3]string{"step", "ramp (ReLU)", "quarter-pipe"}
	for order := range 3 {
		RegisterKernel(KernelFamily{Name: fmt.Sprintf("arccos%d", order), Kind: KindArcCosine,
			Doc: fmt.Sprintf("arc-cosine of order %d (Cho & Saul 2009: an infinite layer of %s units) σ²/π J_%d(θ)(‖x‖‖y‖)^%d, weight variances (ARD) and bias variance; not stationary", order, units[order], order, order),
			New: func(o KernelOptions) (Kernel, error) { return newArcCosineARD(order, o.Name, o.InputDim, o.ARD) }})
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Arc-cosine: k = (σ²/π) F(c) Rⁿ with a_i = ‖x1_i‖, b_j = ‖x2_j‖, R = a b, c = p/R, p = Σ_d w_d x1_d x2_d + b
// (one Gemm), F(c) = J_n(arccos c). With F' = dF/dc (1/sin θ, π − θ, 4 J_1 for n = 0, 1, 2) and per pair
//
//	α = (σ²/π) Rⁿ F'/R,   γ = (σ²/π) Rⁿ (n F − c F'),   A = G ⊙ α,   Γ = G ⊙ γ,   Γ1 = Γ 1, Γ2 = Γᵀ 1,
//
// (∂c/∂x1_d = w_d x2_d/R − c w_d x1_d/a², ∂Rⁿ/∂x1_d = n Rⁿ w_d x1_d/a²; ∂a/∂w_d = x_d²/(2a), ∂a/∂b = 1/(2a)):
//
//	dX1 = diag(w)-scaled (A X2 + diag(Γ1/a²) X1),   dX2 = (Aᵀ X1 + diag(Γ2/b²) X2) scaled by w,
//	dw_d = Σ_i x1_id (A X2)_id + ½ Σ_i x1_id² Γ1_i/a_i² + ½ Σ_j x2_jd² Γ2_j/b_j²   (summed over d when shared),
//	db = Σ A + ½ Σ_i Γ1_i/a_i² + ½ Σ_j Γ2_j/b_j²,   dσ² = Σ G ⊙ K / σ².

// arcCosCov is the arc-cosine covariance function of one order: hyperparameters variance σ² (scalar),
// weight_variances w (a scalar or [D]), bias_variance b (scalar).
type arcCosCov struct{ order int }

// Name returns "ArcCosine0", "ArcCosine1" or "ArcCosine2".
func (c arcCosCov) Name() string { return fmt.Sprintf("ArcCosine%d", c.order) }

// Hypers returns variance, weight_variances (scalar or [D]), bias_variance.
func (arcCosCov) Hypers() []ops.CovHyper {
	return []ops.CovHyper{{Name: "variance"}, {Name: "weight_variances", Vec: true, ScalarOK: true}, {Name: "bias_variance"}}
}

// arcNearRel: pairs with |cos θ| > 1 − arcNearRel have their angle recomputed by the atan2 form.
const arcNearRel = 1.0 / 64

// arcNorms writes ‖x_i‖ = √(Σ_d w_d x_id² + b) into dst (pooled).
func arcNorms(x ops.CovInput, w []float64, b float64) []float64 {
	n, d := x.Rows(), x.Cols()
	dst := ops.CovScratch(n)
	for i := 0; i < n; i++ {
		s := 0.0
		for k, v := range x.Data[i*d : (i+1)*d] {
			s += w[k%len(w)] * v * v
		}
		dst[i] = math.Sqrt(s + b)
	}
	return dst
}

// arcAngle returns cos θ, sin θ and θ of the pair (xi, xj) with norms a, b and weighted inner product p.
func arcAngle(p, a, b float64, xi, xj, w []float64, bias float64) (c, s, theta float64) {
	r := a * b
	if !(r > 0) {
		return 0, 1, math.Pi / 2
	}
	c = p / r
	if c > -1+arcNearRel && c < 1-arcNearRel {
		return c, math.Sqrt(1 - c*c), math.Acos(c)
	}
	// 2·atan2(‖x̂ − ŷ‖, ‖x̂ + ŷ‖), the bias as coordinate √b
	ia, ib := 1/a, 1/b
	dm, dp := 0.0, 0.0
	for k, u := range xi {
		wk := w[k%len(w)]
		e, f := u*ia-xj[k]*ib, u*ia+xj[k]*ib
		dm += wk * e * e
		dp += wk * f * f
	}
	e, f := ia-ib, ia+ib
	dm += bias * e * e
	dp += bias * f * f
	theta = 2 * math.Atan2(math.Sqrt(dm), math.Sqrt(dp))
	s, c = math.Sincos(theta)
	return c, s, theta
}

// j returns J_n(θ) and dJ_n/dcos θ.
func (cf arcCosCov) j(c, s, theta float64) (f, df float64) {
	pt := math.Pi - theta
	switch cf.order {
	case 0:
		if s > 0 {
			df = 1 / s
		}
		return pt, df
	case 1:
		return s + pt*c, pt
	}
	return 3*s*c + pt*(1+2*c*c), 4 * (s + pt*c)
}

// pow returns rⁿ.
func (cf arcCosCov) pow(r float64) float64 {
	switch cf.order {
	case 0:
		return 1
	case 1:
		return r
	}
	return r * r
}

// setup returns the norms of both inputs and P = X1 diag(w) X2ᵀ + b [n,m] (pooled).
func (cf arcCosCov) setup(x1, x2 ops.CovInput, w []float64, bias float64) (na, nb, p []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	na, nb = arcNorms(x1, w, bias), arcNorms(x2, w, bias)
	p = ops.CovScratch(n * m)
	x2t := ops.CovScratch(d * m)
	defer ops.CovRelease(x2t)
	var scale []float64
	alpha := w[0]
	if len(w) > 1 {
		scale, alpha = w, 1
	}
	ops.CovTranspose(x2.Data, m, d, scale, x2t)
	ops.CovGemm(false, false, alpha, x1.Data, n, d, x2t, d, m, p)
	for i := range p {
		p[i] += bias
	}
	return na, nb, p
}

func (cf arcCosCov) eval(x1, x2 ops.CovInput, h []ops.CovInput, s2 float64, out []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	w, bias := h[1].Data, h[2].Scalar()
	na, nb, p := cf.setup(x1, x2, w, bias)
	defer ops.CovRelease(na, nb, p)
	f := s2 / math.Pi
	ops.CovForRows(ops.CovChunks(n, m), n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			xi := x1.Data[i*d : (i+1)*d]
			for j := 0; j < m; j++ {
				c, s, th := arcAngle(p[i*m+j], na[i], nb[j], xi, x2.Data[j*d:(j+1)*d], w, bias)
				jn, _ := cf.j(c, s, th)
				out[i*m+j] = f * jn * cf.pow(na[i]*nb[j])
			}
		}
	})
}

func (cf arcCosCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	cf.eval(x1, x2, h, h[0].Scalar(), out)
}

func (cf arcCosCov) MatrixGrad(wrt int, x1, x2 ops.CovInput, h []ops.CovInput, k, g []float64, dst []float64) {
	s2 := h[0].Scalar()
	if wrt == ops.CovWrtH0 {
		dst[0] = ops.CovVarianceGrad(g, k, s2, func(u []float64) { cf.eval(x1, x2, h, 1, u) })
		return
	}
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	w, bias := h[1].Data, h[2].Scalar()
	na, nb, p := cf.setup(x1, x2, w, bias)
	aw, gam := ops.CovScratch(n*m), ops.CovScratch(n*m) // A = G ⊙ α, Γ = G ⊙ γ
	defer ops.CovRelease(na, nb, p, aw, gam)
	f, order := s2/math.Pi, float64(cf.order)
	ops.CovForRows(ops.CovChunks(n, m), n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			xi := x1.Data[i*d : (i+1)*d]
			for j := 0; j < m; j++ {
				ij := i*m + j
				r := na[i] * nb[j]
				c, s, th := arcAngle(p[ij], na[i], nb[j], xi, x2.Data[j*d:(j+1)*d], w, bias)
				if !(r > 0) {
					aw[ij], gam[ij] = 0, 0
					continue
				}
				jn, dj := cf.j(c, s, th)
				rn := f * cf.pow(r) * g[ij]
				aw[ij] = rn * dj / r
				gam[ij] = rn * (order*jn - c*dj)
			}
		}
	})
	// Γ1/a², Γ2/b² (zero for a zero norm)
	g1, g2 := ops.CovScratch(n), ops.CovScratch(m)
	defer ops.CovRelease(g1, g2)
	clear(g2)
	for i := 0; i < n; i++ {
		s := 0.0
		for j, v := range gam[i*m : (i+1)*m] {
			s += v
			g2[j] += v
		}
		g1[i] = arcDiv(s, na[i]*na[i])
	}
	for j := range g2 {
		g2[j] = arcDiv(g2[j], nb[j]*nb[j])
	}
	wk := func(k int) float64 { return w[k%len(w)] }
	switch wrt {
	case ops.CovWrtX1, ops.CovWrtX2:
		// dX1 = w ⊙ (A X2 + diag(g1) X1); dX2 = w ⊙ (Aᵀ X1 + diag(g2) X2)
		x, rows, gs := x1, n, g1
		if wrt == ops.CovWrtX1 {
			ops.CovGemm(false, false, 1, aw, n, m, x2.Data, m, d, dst)
		} else {
			x, rows, gs = x2, m, g2
			ops.CovGemm(true, false, 1, aw, n, m, x1.Data, n, d, dst)
		}
		for i := 0; i < rows; i++ {
			for kk := 0; kk < d; kk++ {
				dst[i*d+kk] = wk(kk) * (dst[i*d+kk] + gs[i]*x.Data[i*d+kk])
			}
		}
	case ops.CovWrtH0 + 1: // weight variances
		ax := ops.CovScratch(n * d)
		defer ops.CovRelease(ax)
		ops.CovGemm(false, false, 1, aw, n, m, x2.Data, m, d, ax)
		clear(dst)
		for kk := 0; kk < d; kk++ {
			s := 0.0
			for i := 0; i < n; i++ {
				v := x1.Data[i*d+kk]
				s += v*ax[i*d+kk] + 0.5*v*v*g1[i]
			}
			for j := 0; j < m; j++ {
				v := x2.Data[j*d+kk]
				s += 0.5 * v * v * g2[j]
			}
			dst[kk%len(dst)] += s
		}
	default: // bias variance
		s := 0.0
		for _, v := range aw {
			s += v
		}
		for _, v := range g1 {
			s += 0.5 * v
		}
		for _, v := range g2 {
			s += 0.5 * v
		}
		dst[0] = s
	}
}

// arcDiv returns a/b, or 0 when b is 0.
func arcDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// kappa returns J_n(0)/π: 1, 1, 3.
func (cf arcCosCov) kappa() float64 {
	if cf.order == 2 {
		return 3
	}
	return 1
}

func (cf arcCosCov) Diag(x ops.CovInput, h []ops.CovInput, out []float64) {
	n, d := x.Rows(), x.Cols()
	s2, w, bias := h[0].Scalar(), h[1].Data, h[2].Scalar()
	for i := 0; i < n; i++ {
		a2 := bias
		for k, v := range x.Data[i*d : (i+1)*d] {
			a2 += w[k%len(w)] * v * v
		}
		out[i] = s2 * cf.kappa() * cf.pow(a2)
	}
}

// DiagGrad: with q = ‖x‖², diag = σ² κ qⁿ, ∂/∂q = σ² κ n qⁿ⁻¹ and ∂q/∂x_d = 2 w_d x_d, ∂q/∂w_d = x_d², ∂q/∂b = 1.
func (cf arcCosCov) DiagGrad(wrt int, x ops.CovInput, h []ops.CovInput, _, g []float64, dst []float64) {
	n, d := x.Rows(), x.Cols()
	s2, w, bias := h[0].Scalar(), h[1].Data, h[2].Scalar()
	clear(dst)
	for i := 0; i < n; i++ {
		xi := x.Data[i*d : (i+1)*d]
		a2 := bias
		for k, v := range xi {
			a2 += w[k%len(w)] * v * v
		}
		var dq float64 // g_i ∂diag/∂q
		switch cf.order {
		case 1:
			dq = g[i] * s2 * cf.kappa()
		case 2:
			dq = g[i] * s2 * cf.kappa() * 2 * a2
		}
		switch wrt {
		case 0:
			for k, v := range xi {
				dst[i*d+k] = dq * 2 * w[k%len(w)] * v
			}
		case 1:
			dst[0] += g[i] * cf.kappa() * cf.pow(a2)
		case 2:
			for k, v := range xi {
				dst[k%len(dst)] += dq * v * v
			}
		default:
			dst[0] += dq
		}
	}
}
