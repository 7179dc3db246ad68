package advgp

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// WeightSpaceTerms are the terms of −ELBO = Σ_i g_i + h (Peng, Zhe & Qi 2017, eqs. 14–17) on a data set.
type WeightSpaceTerms struct {
	G      float64   // Σ_i g_i (eq. 14)
	H      float64   // h = KL[q(w) ‖ N(0, I)] (eq. 15)
	GradMu []float64 // Σ_i ∂g_i/∂μ = β Σ_i (φ_iφ_iᵀμ − y_iφ_i) (eq. 16) [M]
	GradU  []float64 // Σ_i ∂g_i/∂U = β triu[U Σ_i φ_iφ_iᵀ] (eq. 17), upper-triangular [M,M] row-major, U = L_qᵀ
}

// WeightSpace computes ADVGP's weight-space objective on x [N,D], y [N,1] at the model's current parameters
// in plain Go with gonum (only the kernel matrices come from gp.KernelMatrix; Peng, Zhe & Qi 2017, eqs. 14–17;
// MATH.md §11):
//
//	φ_i = C⁻¹k_m(x_i), C = chol(K_mm + jitter·I), Σ = UᵀU, β = 1/σ², k̃_ii = k_ii − φ_iᵀφ_i,
//	g_i = −log N(y_i | φ_iᵀμ, β⁻¹) + (β/2)φ_iᵀΣφ_i + (β/2)k̃_ii.
//
// The jitter is the layer's fixed one (none under gp.JitterOnFailure), and C is computed as the graph computes it
// (ops.CholeskyLower with the default ops.JitterPolicy: more jitter only if the plain factorisation fails).
// It is the reference the graph's ShardTerm and SVGP ELBO are tested against.
func (m *Model) WeightSpace(x, y *mat.Dense) (*WeightSpaceTerms, error) {
	nm, d := m.M(), m.Layer.InputDim()
	if x == nil || y == nil {
		return nil, &ops.ShapeError{Op: "advgp.WeightSpace", Want: fmt.Sprintf("x [N,%d] and y [N,1]", d), Got: "nil"}
	}
	n, dx := x.Dims()
	ny, py := y.Dims()
	if dx != d || ny != n || py != 1 {
		return nil, &ops.ShapeError{Op: "advgp.WeightSpace", Want: fmt.Sprintf("x [N,%d] and y [N,1]", d), Got: fmt.Sprintf("x [%d,%d], y [%d,%d]", n, dx, ny, py)}
	}
	xs, ys := mat.DenseCopyOf(x), mat.DenseCopyOf(y)
	if err := ops.CheckFinite("advgp.WeightSpace x", xs.RawMatrix().Data, d); err != nil {
		return nil, err
	}
	if err := ops.CheckFinite("advgp.WeightSpace y", ys.RawMatrix().Data, 1); err != nil {
		return nil, err
	}

	z := mat.NewDense(nm, d, m.Layer.Z.Value())
	kmm, err := gp.KernelMatrix(m.Layer.Kernel, z, z)
	if err != nil {
		return nil, err
	}
	if j := m.Layer.Jitter(); j > 0 {
		for i := 0; i < nm; i++ {
			kmm.Set(i, i, kmm.At(i, i)+j)
		}
	}
	c := mat.NewTriDense(nm, mat.Lower, nil)
	if _, err := ops.CholeskyLower(c.RawTriangular().Data, kmm.RawMatrix().Data, nm, ops.JitterPolicy{}); err != nil {
		return nil, err
	}
	phi, err := gp.KernelMatrix(m.Layer.Kernel, z, xs) // k_m(x_i) as columns [M,N], then φ = C⁻¹k_m in place
	if err != nil {
		return nil, err
	}
	blas64.Trsm(blas.Left, blas.NoTrans, 1, c.RawTriangular(), phi.RawMatrix())
	kdiag, err := kernelDiag(m.Layer.Kernel, xs)
	if err != nil {
		return nil, err
	}

	mu, lq := m.Mu().Value(), m.Sqrt().Value() // μ [M]; lq = Uᵀ, lower [M,M]
	beta := 1 / m.Lik.Variance()
	t := &WeightSpaceTerms{H: H(mu, lq, nm), GradMu: make([]float64, nm), GradU: make([]float64, nm*nm)}
	phiI, uPhi := make([]float64, nm), make([]float64, nm)
	for i := 0; i < n; i++ {
		mat.Col(phiI, i, phi)
		mean, phiSq, quad := 0.0, 0.0, 0.0
		for a := 0; a < nm; a++ {
			mean += phiI[a] * mu[a]
			phiSq += phiI[a] * phiI[a]
			uPhi[a] = 0 // (Uφ)_a = Σ_{b≥a} U_ab φ_b = Σ_{b≥a} lq_ba φ_b
			for b := a; b < nm; b++ {
				uPhi[a] += lq[b*nm+a] * phiI[b]
			}
			quad += uPhi[a] * uPhi[a]
		}
		r := ys.At(i, 0) - mean
		t.G += 0.5*math.Log(2*math.Pi/beta) + beta/2*(r*r+quad+kdiag[i]-phiSq)
		for a := 0; a < nm; a++ {
			t.GradMu[a] -= beta * r * phiI[a]
			for b := a; b < nm; b++ {
				t.GradU[a*nm+b] += beta * uPhi[a] * phiI[b]
			}
		}
	}
	return t, nil
}

// kernelDiag returns k(x_i, x_i) for every row of x, from blocks of rows (never the whole [N,N] matrix).
func kernelDiag(k gp.Kernel, x *mat.Dense) ([]float64, error) {
	const block = 256
	n, d := x.Dims()
	out := make([]float64, n)
	for s := 0; s < n; s += block {
		e := min(s+block, n)
		xb := x.Slice(s, e, 0, d).(*mat.Dense)
		kb, err := gp.KernelMatrix(k, xb, xb)
		if err != nil {
			return nil, err
		}
		for i := s; i < e; i++ {
			out[i] = kb.At(i-s, i-s)
		}
	}
	return out, nil
}
