package gp

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// LinearCov is the covariance function of the linear kernel (see linearCov below for its exact form).
var LinearCov ops.CovFunc = linearCov{}

// KindLinear is the Spec kind of Linear.
const KindLinear = "kernel/linear"

// Linear is the linear kernel k(x, x') = Σ_d σ²_d x_d x'_d (one shared σ² unless per-dimension Variances).
type Linear struct {
	dim       int
	shared    bool
	Variances *graph.Param // [D], or a scalar when shared
}

// NewLinear returns a Linear kernel. KernelConfig.Variances sets per-dimension variances; otherwise Variance
// (default DefaultVariance) is shared by all dimensions.
func NewLinear(c KernelConfig) (*Linear, error) {
	if c.InputDim <= 0 {
		return nil, configErr("Linear kernel: InputDim must be positive, got %d", c.InputDim)
	}
	name := c.Name
	if name == "" {
		name = "linear"
	}
	v := c.Variances
	switch len(v) {
	case 0:
		v = []float64{orDefault(c.Variance, DefaultVariance)}
	case c.InputDim:
	default:
		return nil, configErr("Linear kernel: %d variances for InputDim %d", len(v), c.InputDim)
	}
	shared := len(v) == 1 && c.InputDim > 1
	shape := []int{len(v)}
	if shared {
		shape = nil // one shared variance: a scalar, broadcast over the D dimensions
	}
	p, err := graph.NewParam(name+".variances", v, graph.Positive{}, shape...)
	if err != nil {
		return nil, err
	}
	return &Linear{dim: c.InputDim, shared: shared, Variances: p}, nil
}

func (k *Linear) variances(g *graph.Graph) *graph.Node {
	v := g.Param(k.Variances)
	if k.shared {
		v = g.Mul(g.Fill(k.Variances.Name()+".ones", 1, k.dim), v)
	}
	return v
}

// K returns x1 diag(σ²) x2ᵀ [N,M].
func (k *Linear) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	return g.CovMatrix(LinearCov, x1, x2, k.variances(g))
}

// KDiag returns Σ_d σ²_d x_d² [N].
func (k *Linear) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.CovDiag(LinearCov, x, k.variances(g))
}

// InputDim returns D.
func (k *Linear) InputDim() int { return k.dim }

// Cov returns the covariance function behind K (LinearCov).
func (k *Linear) Cov() ops.CovFunc { return LinearCov }

// Params returns the variances.
func (k *Linear) Params() []*graph.Param { return []*graph.Param{k.Variances} }

func (k *Linear) String() string { return fmt.Sprintf("Linear(variances=%.4g)", k.Variances.Value()) }

// linearKernelSpec is the Config of Linear: Shared means one variance for all D dimensions.
type linearKernelSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
	Shared   bool   `json:"shared,omitempty"`
}

// Spec describes the kernel: the Params' name prefix, D and whether the variance is shared.
func (k *Linear) Spec() (Spec, error) {
	name, err := paramPrefix(k.Variances, ".variances")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindLinear, linearKernelSpec{Name: name, InputDim: k.dim, Shared: k.shared})
}

func init() {
	RegisterKind(KindLinear, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c linearKernelSpec
		if err := decodeLeaf(KindLinear, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindLinear, c.InputDim); err != nil {
			return nil, err
		}
		return newLinearShared(c.Name, c.InputDim, !c.Shared, c.Shared)
	})
	RegisterKernel(KernelFamily{Name: "linear", Kind: KindLinear,
		Doc: "Σ_d σ²_d x_d x'_d (per-dimension variances when ARD); not stationary",
		New: func(o KernelOptions) (Kernel, error) { return newLinearShared(o.Name, o.InputDim, o.ARD, false) }})
}

// newLinearShared builds a Linear kernel with per-dimension variances when ard; wantShared checks a Spec's
// "shared" flag against the result.
func newLinearShared(name string, dim int, ard, wantShared bool) (*Linear, error) {
	kc := KernelConfig{Name: name, InputDim: dim}
	if ard && dim > 0 { // dim ≤ 0 is refused below
		kc.Variances = make([]float64, dim)
		for i := range kc.Variances {
			kc.Variances[i] = DefaultVariance
		}
	}
	k, err := NewLinear(kc)
	if err != nil {
		return nil, err
	}
	if wantShared && !k.shared {
		return nil, configErr("%s: shared needs InputDim > 1, got %d", KindLinear, dim)
	}
	return k, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Linear: K = X1 diag(σ²) X2ᵀ (one Gemm on the scaled x1; a scalar σ² is the Gemm's alpha).
//
//	dX1 = G X2 diag(σ²),   dX2 = Gᵀ X1 diag(σ²),   dσ²_d = Σ_i x1_id (G X2)_id   (summed over d for a scalar σ²).

// linearCov is the linear covariance function K = Σ_d σ²_d x_d x'_d: one hyperparameter, the variance (a
// scalar, or [D] for ARD).
type linearCov struct{}

// Name returns "Linear".
func (linearCov) Name() string { return "Linear" }

// Hypers returns the variance (scalar or [D]).
func (linearCov) Hypers() []ops.CovHyper {
	return []ops.CovHyper{{Name: "variance", Vec: true, ScalarOK: true}}
}

// covLinScale returns (alpha, scale) with diag(σ²) = alpha·diag(scale): (σ², nil) for a scalar σ², (1, σ²) for
// a vector.
func covLinScale(v ops.CovInput) (float64, []float64) {
	if len(v.Data) == 1 {
		return v.Data[0], nil
	}
	return 1, v.Data
}

func (linearCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	alpha, scale := covLinScale(h[0])
	x2t := ops.CovScratch(d * m) // diag(scale) X2ᵀ [d,m]
	defer ops.CovRelease(x2t)
	ops.CovTranspose(x2.Data, m, d, scale, x2t)
	ops.CovGemm(false, false, alpha, x1.Data, n, d, x2t, d, m, out)
}

func (linearCov) MatrixGrad(wrt int, x1, x2 ops.CovInput, h []ops.CovInput, _, g []float64, dst []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	alpha, scale := covLinScale(h[0])
	switch wrt {
	case ops.CovWrtX1: // dX1ᵀ = σ² X2ᵀ Gᵀ
		x2t, t := ops.CovScratch(d*m), ops.CovScratch(d*n)
		defer ops.CovRelease(x2t, t)
		ops.CovTranspose(x2.Data, m, d, scale, x2t)
		ops.CovGemm(false, true, alpha, x2t, d, m, g, n, m, t)
		ops.CovTranspose(t, d, n, nil, dst)
	case ops.CovWrtX2: // dX2ᵀ = σ² X1ᵀ G
		x1t, t := ops.CovScratch(d*n), ops.CovScratch(d*m)
		defer ops.CovRelease(x1t, t)
		ops.CovTranspose(x1.Data, n, d, scale, x1t)
		ops.CovGemm(false, false, alpha, x1t, d, n, g, n, m, t)
		ops.CovTranspose(t, d, m, nil, dst)
	default: // variance: dσ²_k = Σ_i x1_ik (G X2)_ik, (G X2)ᵀ = X2ᵀ Gᵀ
		x2t, pt, x1t := ops.CovScratch(d*m), ops.CovScratch(d*n), ops.CovScratch(d*n)
		defer ops.CovRelease(x2t, pt, x1t)
		ops.CovTranspose(x2.Data, m, d, nil, x2t)
		ops.CovGemm(false, true, 1, x2t, d, m, g, n, m, pt)
		ops.CovTranspose(x1.Data, n, d, nil, x1t)
		covColDots(x1t, pt, d, n, dst)
	}
}

// covColDots writes Σ_i at_ki bt_ki per row k of the row-major d×n matrices at, bt into dst ([d], or the total
// when len(dst) == 1 < d: a scalar hyperparameter shared by all dimensions).
func covColDots(at, bt []float64, d, n int, dst []float64) {
	total := 0.0
	for k := 0; k < d; k++ {
		s := 0.0
		for i, v := range at[k*n : (k+1)*n] {
			s += v * bt[k*n+i]
		}
		if len(dst) == d {
			dst[k] = s
		}
		total += s
	}
	if len(dst) != d {
		dst[0] = total
	}
}

func (linearCov) Diag(x ops.CovInput, h []ops.CovInput, out []float64) {
	n, d := x.Rows(), x.Cols()
	v := h[0].Data
	for i := 0; i < n; i++ {
		s := 0.0
		for k, xv := range x.Data[i*d : (i+1)*d] {
			s += v[k%len(v)] * xv * xv
		}
		out[i] = s
	}
}

func (linearCov) DiagGrad(wrt int, x ops.CovInput, h []ops.CovInput, _, g []float64, dst []float64) {
	n, d := x.Rows(), x.Cols()
	v := h[0].Data
	if wrt == 0 {
		for i := 0; i < n; i++ {
			for k := 0; k < d; k++ {
				dst[i*d+k] = 2 * g[i] * v[k%len(v)] * x.Data[i*d+k]
			}
		}
		return
	}
	// dσ²_k = Σ_i g_i x_ik² (summed over k for a scalar σ²).
	xt, gx := ops.CovScratch(n*d), ops.CovScratch(n*d)
	defer ops.CovRelease(xt, gx)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			xv := x.Data[i*d+k]
			xt[k*n+i], gx[k*n+i] = xv, g[i]*xv
		}
	}
	covColDots(xt, gx, d, n, dst)
}
