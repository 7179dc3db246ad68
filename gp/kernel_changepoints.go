package gp

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindChangePoints is the Spec kind of ChangePoints.
const KindChangePoints = "kernel/changepoints"

// ChangePoints switches between two kernels at a change point (GPflow's ChangePoints with one location; Lloyd et
// al. 2014, "Automatic construction and natural-language description of nonparametric regression models",
// sec. 3, the change-point operator CP(k1, k2)): with the sigmoid σ(x) = 1/(1 + exp(−s(x_j − c))) of input column
// j, location c and steepness s > 0,
//
//	k(x, x') = (1 − σ(x)) k1(x, x') (1 − σ(x')) + σ(x) k2(x, x') σ(x'),
//
// k1 before the change point and k2 after it. Both children read all the kernel's input columns; the switch reads
// column j only. Each switch factor σ(x)σ(x') (and (1 − σ(x))(1 − σ(x'))) is a rank-one covariance function in
// the fused op, with analytic gradients with respect to c, s and x_j; the children's gradients are their own.
type ChangePoints struct {
	k1, k2    Kernel
	col       int
	Location  *graph.Param // c, scalar
	Steepness *graph.Param // s > 0, scalar
}

// ChangePointsConfig configures NewChangePoints. Zero values mean defaults.
type ChangePointsConfig struct {
	// Name prefixes the Params' names (default "changepoints"): "<Name>.location", "<Name>.steepness".
	Name string
	// Column is the input column j the switch reads (0-based).
	Column int
	// Location c (default 0: the middle of standardised inputs) and Steepness s (default 1) are the initial values.
	Location, Steepness float64
}

// NewChangePoints returns the change-point kernel switching from k1 to k2 (of the same InputDim).
func NewChangePoints(k1, k2 Kernel, c ChangePointsConfig) (*ChangePoints, error) {
	if err := checkParts("ChangePoints", []Kernel{k1, k2}); err != nil {
		return nil, err
	}
	d := k1.InputDim()
	if c.Column < 0 || c.Column >= d {
		return nil, configErr("ChangePoints kernel: switch column %d outside [0, %d)", c.Column, d)
	}
	if math.IsNaN(c.Location) || math.IsInf(c.Location, 0) {
		return nil, configErr("ChangePoints kernel: location %v is not finite", c.Location)
	}
	name := c.Name
	if name == "" {
		name = "changepoints"
	}
	k := &ChangePoints{k1: k1, k2: k2, col: c.Column}
	var err error
	if k.Location, err = graph.NewParam(name+".location", []float64{c.Location}, nil); err != nil {
		return nil, err
	}
	if k.Steepness, err = graph.NewParam(name+".steepness", []float64{orDefault(c.Steepness, 1)}, graph.Positive{}); err != nil {
		return nil, err
	}
	return k, nil
}

// Kernels returns the kernels before and after the change point.
func (k *ChangePoints) Kernels() (before, after Kernel) { return k.k1, k.k2 }

// Column returns the input column the switch reads.
func (k *ChangePoints) Column() int { return k.col }

func (k *ChangePoints) switches(g *graph.Graph) (lo, hi ops.CovFunc, c, s *graph.Node) {
	return switchCov{col: k.col}, switchCov{col: k.col, hi: true}, g.Param(k.Location), g.Param(k.Steepness)
}

// K returns k1 ⊙ (1−σ)(1−σ')ᵀ + k2 ⊙ σσ'ᵀ [N,M].
func (k *ChangePoints) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	lo, hi, c, s := k.switches(g)
	return g.Add(g.Mul(k.k1.K(x1, x2), g.CovMatrix(lo, x1, x2, c, s)), g.Mul(k.k2.K(x1, x2), g.CovMatrix(hi, x1, x2, c, s)))
}

// KDiag returns (1−σ)² k1(x, x) + σ² k2(x, x) [N].
func (k *ChangePoints) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	lo, hi, c, s := k.switches(g)
	return g.Add(g.Mul(k.k1.KDiag(x), g.CovDiag(lo, x, c, s)), g.Mul(k.k2.KDiag(x), g.CovDiag(hi, x, c, s)))
}

// InputDim returns D.
func (k *ChangePoints) InputDim() int { return k.k1.InputDim() }

// Params returns k1's, k2's, then the location and the steepness.
func (k *ChangePoints) Params() []*graph.Param {
	return append(collect([]Kernel{k.k1, k.k2}), k.Location, k.Steepness)
}

func (k *ChangePoints) String() string {
	return fmt.Sprintf("ChangePoints(%v → %v at x%d = %.4g, steepness %.4g)", k.k1, k.k2, k.col, k.Location.Value()[0], k.Steepness.Value()[0])
}

// CategoricalInputs returns the children's categorical columns.
func (k *ChangePoints) CategoricalInputs() []CategoricalInput { return categoricalOf(k.k1, k.k2) }

// changePointsSpec is the Config of ChangePoints.
type changePointsSpec struct {
	Name   string `json:"name"`
	Column int    `json:"column"`
}

// Spec describes the kernel: the Params' name prefix and the switch column, with the two kernels as children.
// Children sharing a Param cannot be described (a rebuilt kernel would not share it): that is an error.
func (k *ChangePoints) Spec() (Spec, error) {
	name, err := paramPrefix(k.Location, ".location")
	if err != nil {
		return Spec{}, err
	}
	inner, err := combinationSpec(KindChangePoints, []Kernel{k.k1, k.k2})
	if err != nil {
		return Spec{}, err
	}
	s, err := NewSpec(KindChangePoints, changePointsSpec{Name: name, Column: k.col})
	if err != nil {
		return Spec{}, err
	}
	s.Children = inner.Children
	return s, nil
}

func init() {
	RegisterKind(KindChangePoints, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c changePointsSpec
		if err := DecodeConfig(KindChangePoints, raw, &c); err != nil {
			return nil, err
		}
		if len(raw) == 0 || len(children) != 2 {
			return nil, configErr("%s needs a config and two child kernels, got %d", KindChangePoints, len(children))
		}
		k1, err := ChildAs[Kernel](KindChangePoints, children, 0)
		if err != nil {
			return nil, err
		}
		k2, err := ChildAs[Kernel](KindChangePoints, children, 1)
		if err != nil {
			return nil, err
		}
		return NewChangePoints(k1, k2, ChangePointsConfig{Name: c.Name, Column: c.Column})
	})
	RegisterKernel(KernelFamily{Name: "changepoints", Kind: KindChangePoints,
		Doc: "(1−σ)k1(1−σ′) + σ k2 σ′, σ = 1/(1+exp(−s(x₀−c))): a switch between two SE kernels at a trainable location c, steepness s (column: changepoints[j])",
		New: func(o KernelOptions) (Kernel, error) {
			f, ok := LookupKernel("se")
			if !ok {
				return nil, configErr("ChangePoints kernel: the se family is not registered")
			}
			name := o.Name
			if name == "" {
				name = "changepoints"
			}
			var ks [2]Kernel
			for i, side := range []string{"before", "after"} {
				k, err := f.New(KernelOptions{InputDim: o.InputDim, ARD: o.ARD, Name: name + "." + side, Inputs: o.Inputs})
				if err != nil {
					return nil, err
				}
				ks[i] = k
			}
			return NewChangePoints(ks[0], ks[1], ChangePointsConfig{Name: name})
		}})
}

// ---------------------------------------------------------------------------------------------------------------
// The switch: K_ij = u_i v_j with u_i = σ(a_i), a_i = ±s(x1_ij − c) (+ after the change point, − before it:
// 1 − σ(z) = σ(−z)), v likewise on x2. With σ' = σ(1 − σ), r = G v and q = Gᵀ u:
//
//	dx1_ij = ±s r_i u_i(1 − u_i),   dx2_jj = ±s q_j v_j(1 − v_j)          (column j only; zero elsewhere),
//	dc = ∓s (Σ_i r_i u_i(1 − u_i) + Σ_j q_j v_j(1 − v_j)),
//	ds = ±(Σ_i r_i u_i(1 − u_i)(x1_i − c) + Σ_j q_j v_j(1 − v_j)(x2_j − c)).

// switchCov is one factor of the change-point switch, σ(x)σ(x') (hi) or (1 − σ(x))(1 − σ(x')) (lo), reading
// input column col; hyperparameters location c and steepness s (scalars).
type switchCov struct {
	col int
	hi  bool
}

// Name includes the side and the column: they change the values.
func (w switchCov) Name() string {
	side := "lo"
	if w.hi {
		side = "hi"
	}
	return fmt.Sprintf("ChangePointSwitch(%s,col=%d)", side, w.col)
}

// Hypers returns location and steepness.
func (switchCov) Hypers() []ops.CovHyper {
	return []ops.CovHyper{{Name: "location"}, {Name: "steepness"}}
}

func (w switchCov) sign() float64 {
	if w.hi {
		return 1
	}
	return -1
}

// sigmoid returns 1/(1 + e^(−a)) without overflow.
func sigmoid(a float64) float64 {
	if a >= 0 {
		return 1 / (1 + math.Exp(-a))
	}
	e := math.Exp(a)
	return e / (1 + e)
}

// values returns u_i = σ(±s(x_i − c)) [N] for x's column col.
func (w switchCov) values(x ops.CovInput, h []ops.CovInput) []float64 {
	n, d := x.Rows(), x.Cols()
	c, s, sg := h[0].Scalar(), h[1].Scalar(), w.sign()
	u := make([]float64, n)
	for i := range u {
		u[i] = sigmoid(sg * s * (x.Data[i*d+w.col] - c))
	}
	return u
}

func (w switchCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	u, v := w.values(x1, h), w.values(x2, h)
	m := len(v)
	for i, ui := range u {
		for j, vj := range v {
			out[i*m+j] = ui * vj
		}
	}
}

// slopeSums returns Σ_i r_i u_i(1 − u_i) and Σ_i r_i u_i(1 − u_i)(x_i − c), and writes the column-j gradient
// ±s r_i u_i(1 − u_i) into dx when non-nil (zero elsewhere).
func (w switchCov) slopeSums(x ops.CovInput, h []ops.CovInput, u, r, dx []float64) (sum, sumX float64) {
	d := x.Cols()
	c, s, sg := h[0].Scalar(), h[1].Scalar(), w.sign()
	if dx != nil {
		clear(dx)
	}
	for i, ui := range u {
		t := r[i] * ui * (1 - ui)
		sum += t
		sumX += t * (x.Data[i*d+w.col] - c)
		if dx != nil {
			dx[i*d+w.col] = sg * s * t
		}
	}
	return sum, sumX
}

func (w switchCov) MatrixGrad(wrt int, x1, x2 ops.CovInput, h []ops.CovInput, _, g []float64, dst []float64) {
	u, v := w.values(x1, h), w.values(x2, h)
	n, m := len(u), len(v)
	r, q := make([]float64, n), make([]float64, m) // r = G v, q = Gᵀ u
	for i := range n {
		row := g[i*m : (i+1)*m]
		for j, gv := range row {
			r[i] += gv * v[j]
			q[j] += gv * u[i]
		}
	}
	switch wrt {
	case ops.CovWrtX1:
		w.slopeSums(x1, h, u, r, dst)
	case ops.CovWrtX2:
		w.slopeSums(x2, h, v, q, dst)
	default:
		a, ax := w.slopeSums(x1, h, u, r, nil)
		b, bx := w.slopeSums(x2, h, v, q, nil)
		if wrt == ops.CovWrtH0 { // location
			dst[0] = -w.sign() * h[1].Scalar() * (a + b)
		} else { // steepness
			dst[0] = w.sign() * (ax + bx)
		}
	}
}

func (w switchCov) Diag(x ops.CovInput, h []ops.CovInput, out []float64) {
	for i, ui := range w.values(x, h) {
		out[i] = ui * ui
	}
}

func (w switchCov) DiagGrad(wrt int, x ops.CovInput, h []ops.CovInput, _, g []float64, dst []float64) {
	u := w.values(x, h)
	r := make([]float64, len(u)) // ∂(u_i²)/∂u_i = 2u_i
	for i, ui := range u {
		r[i] = 2 * g[i] * ui
	}
	switch wrt {
	case 0:
		w.slopeSums(x, h, u, r, dst)
	case 1:
		a, _ := w.slopeSums(x, h, u, r, nil)
		dst[0] = -w.sign() * h[1].Scalar() * a
	default:
		_, ax := w.slopeSums(x, h, u, r, nil)
		dst[0] = w.sign() * ax
	}
}
