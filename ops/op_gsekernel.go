package ops

import (
	"fmt"
	"io"
	"math"

	"github.com/gpzoo/gpzoo/ops/internal/vmath"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The generalized SE-ARD basis kernel of Cheng & Boots (2017, "Variational Inference for Gaussian Process Models
// with Linear Complexity", App. C.1, eq. 19):
//
//	ψ_xᵀψ_x' = ∏_{d=1}^{D} ( 2 l_{x,d} l_{x',d} / (l_{x,d}² + l_{x',d}²) )^{1/2} · exp( −(x_d − x'_d)² / (l_{x,d}² + l_{x',d}²) ),
//
// with l_{x,d} = s_d · c_{x,d}: s [D] are the prior SE-ARD length-scales and c_{x,d} > 0 a per-basis (relative)
// length-scale factor. A data point x carries c_{x,d} = 1 (its feature is the SE-ARD feature φ_x), so with
// u_{md} = c_{md}² + 1 the basis/data cross covariance is
//
//	GSECross[n,m] = σ · ∏_d (2c_{md}/u_{md})^{1/2} · exp(−Σ_d (x_{nd} − z_{md})² / (s_d² u_{md})),
//
// and with u_{ijd} = c_{id}² + c_{jd}² the basis/basis covariance is
//
//	GSEBasis[i,j] = σ · ∏_d (2c_{id}c_{jd}/u_{ijd})^{1/2} · exp(−Σ_d (z_{id} − z_{jd})² / (s_d² u_{ijd})).
//
// Every c = 1 gives ψ = φ (the paper: "ψ_x = φ_x when c_{x,d} = 1"): both ops then equal
// CovMatrix(SquaredExp, ·, ·, σ, s) = σ exp(−Σ_d Δ_d²/(2s_d²)). The prefactor does not depend on s (the s_d
// cancel in the ratio). The diagonal of GSEBasis is σ for every c (prefactor 1, Δ = 0), so no separate diag op
// is needed: diag K(Z, Z) = σ·1, as for CovDiag(SquaredExp).
//
// The scalar σ is a free multiplier. The paper's exact scaling is C[L_m f, f(x)] = ρ ψᵀφ and C[L_m f, L_n f] =
// ψᵀψ (k = ρ²φᵀφ), i.e. σ = ρ for GSECross and σ = 1 for GSEBasis; passing σ = ρ² to both is the equivalent
// reparametrisation ψ → ρψ (the variational weights absorb the constant: a → a/ρ, B → B/ρ²), which keeps the
// usual "K(α, x), K(α, α) with the prior's variance" convention and reduces to the SE-ARD kernel at c = 1.
//
// Inputs are ALREADY CONSTRAINED: c, s > 0 (the caller applies Softplus or similar); c ≤ 0 gives NaN.
// Cost O(N·M·D) (direct loops, no N×M×D temporaries; no Gemm expansion, so coincident points are exact).

// GSECross returns the generalized SE-ARD cross covariance [N,M] (eq. 19 with c_x = 1) between data x [N,D] and
// bases z [M,D] with per-basis length-scale factors zls [M,D] (c > 0), prior length-scales ls [D] (s > 0) and a
// scalar variance (shape () or [1]). Differentiable with respect to every operand.
func GSECross(x, z, zls, ls, variance *G.Node) (*G.Node, error) {
	return apply(gseCrossK{}, x, z, zls, ls, variance)
}

// GSEBasis returns the generalized SE-ARD covariance [M,M] (eq. 19) among the bases z [M,D] with per-basis
// length-scale factors zls [M,D] (c > 0), prior length-scales ls [D] (s > 0) and a scalar variance. Symmetric
// and positive semi-definite; its diagonal is the variance. Differentiable with respect to every operand.
func GSEBasis(z, zls, ls, variance *G.Node) (*G.Node, error) {
	// One op serves both: with the same operands on both sides the engine sums the two operand gradients.
	return GSEPair(z, zls, z, zls, ls, variance)
}

func gseScalarShape(s tensor.Shape) bool { return len(s) == 0 || len(s) == 1 && s[0] == 1 }

// gseCheck validates z [M,D], zls [M,D], ls [D] and a scalar variance; it returns M and D.
func gseCheck(op string, z, zls, ls, v tensor.Shape) (int, int, error) {
	if len(z) != 2 || z[0] <= 0 || z[1] <= 0 {
		return 0, 0, &ShapeError{Op: op, Want: "non-empty bases z [M,D]", Got: fmt.Sprint(z)}
	}
	if len(zls) != 2 || zls[0] != z[0] || zls[1] != z[1] {
		return 0, 0, &ShapeError{Op: op, Want: fmt.Sprintf("basis length-scale factors zls [%d,%d]", z[0], z[1]), Got: fmt.Sprint(zls)}
	}
	if len(ls) != 1 || ls[0] != z[1] {
		return 0, 0, &ShapeError{Op: op, Want: fmt.Sprintf("prior length-scales ls [%d]", z[1]), Got: fmt.Sprint(ls)}
	}
	if !gseScalarShape(v) {
		return 0, 0, &ShapeError{Op: op, Want: "a scalar variance", Got: fmt.Sprint(v)}
	}
	return z[0], z[1], nil
}

// gseCrossK is the kernel of GSECross: operands (x, z, zls, ls, variance).
type gseCrossK struct{}

func (gseCrossK) name() string       { return "GSECross" }
func (gseCrossK) params(w io.Writer) {}
func (gseCrossK) arity() int         { return 5 }
func (gseCrossK) diff() []bool       { return []bool{true, true, true, true, true} }

func (k gseCrossK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	m, d, err := gseCheck(k.name(), in[1], in[2], in[3], in[4])
	if err != nil {
		return nil, err
	}
	if len(in[0]) != 2 || in[0][0] <= 0 || in[0][1] != d {
		return nil, &ShapeError{Op: k.name(), Want: fmt.Sprintf("non-empty data x [N,%d]", d), Got: fmt.Sprint(in[0])}
	}
	return tensor.Shape{in[0][0], m}, nil
}

// gseCrossBase writes k0 = K/σ [N,M] into out and, per basis, w_{md} = 1/(s_d² u_{md}) into w [M,D].
func gseCrossBase(x, z, c, s arg, out, w []float64) {
	n, m, d := x.rows(), z.rows(), z.cols()
	pref := covScratch(m)
	for j := 0; j < m; j++ {
		r := 1.0
		for e := 0; e < d; e++ {
			cj := c.data[j*d+e]
			u := cj*cj + 1
			r *= 2 * cj / u
			w[j*d+e] = 1 / (s.data[e] * s.data[e] * u)
		}
		pref[j] = math.Sqrt(r)
	}
	for i := 0; i < n; i++ {
		xi := x.data[i*d : i*d+d]
		row := out[i*m : i*m+m]
		for j := 0; j < m; j++ {
			zj, wj := z.data[j*d:j*d+d], w[j*d:j*d+d]
			q := 0.0
			for e, xv := range xi {
				t := xv - zj[e]
				q += t * t * wj[e]
			}
			row[j] = -q
		}
		vmath.Exp(row, row)
		for j, v := range row {
			row[j] = pref[j] * v
		}
	}
	covRelease(pref)
}

func (k gseCrossK) forward(in []arg, out []float64) error {
	if err := covRecheck(k, in, len(out)); err != nil {
		return err
	}
	w := covScratch(len(in[1].data))
	gseCrossBase(in[0], in[1], in[2], in[3], out, w)
	covRelease(w)
	sig := in[4].scalar()
	for i := range out {
		out[i] *= sig
	}
	return nil
}

func (k gseCrossK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	all := make([][]float64, 5)
	all[wrt] = dst
	return k.grads(in, out, g, all)
}

func (k gseCrossK) backwardAll(in []arg, out arg, g arg, dst [][]float64) error {
	return k.grads(in, out, g, dst)
}

// grads writes the gradient of every operand i with dst[i] ≠ nil. With A = g ⊙ K and Δ = x_n − z_m:
//
//	∂/∂x_{nd} = −2 Σ_m A_{nm} Δ_{nmd} w_{md},     ∂/∂z_{md} = 2 Σ_n A_{nm} Δ_{nmd} w_{md},
//	∂/∂c_{md} = Σ_n A_{nm} [ (1/c − 2c/u)/2 + (2c/u) Δ² w ],  ∂/∂s_d = (2/s_d) Σ_{n,m} A_{nm} Δ² w_{md},
//	∂/∂σ = Σ g ⊙ K/σ (K/σ recomputed, so σ = 0 is fine).
func (k gseCrossK) grads(in []arg, out arg, g arg, dst [][]float64) error {
	if err := covRecheck(k, in, len(out.data)); err != nil {
		return err
	}
	if len(g.data) != len(out.data) {
		return &ShapeError{Op: k.name(), Want: fmt.Sprintf("an output gradient of shape %v", out.shape), Got: fmt.Sprint(g.shape)}
	}
	x, z, c, s := in[0], in[1], in[2], in[3]
	sig := in[4].scalar()
	n, m, d := x.rows(), z.rows(), z.cols()
	k0 := covScratch(n * m)
	w := covScratch(m * d)
	gseCrossBase(x, z, c, s, k0, w)
	for _, v := range dst {
		clear(v)
	}
	if dst[4] != nil {
		t := 0.0
		for i, v := range k0 {
			t += g.data[i] * v
		}
		dst[4][0] = t
	}
	if dst[0] != nil || dst[1] != nil || dst[2] != nil || dst[3] != nil {
		// Per basis: sumA_m = Σ_n A_{nm}, q2_{md} = Σ_n A_{nm} Δ²_{nmd}; the x and z gradients accumulate in place.
		sumA := covZeros(m)
		q2 := covZeros(m * d)
		for i := 0; i < n; i++ {
			xi := x.data[i*d : i*d+d]
			var gx []float64
			if dst[0] != nil {
				gx = dst[0][i*d : i*d+d]
			}
			for j := 0; j < m; j++ {
				a := g.data[i*m+j] * sig * k0[i*m+j]
				if a == 0 {
					continue
				}
				sumA[j] += a
				zj, wj, qj := z.data[j*d:j*d+d], w[j*d:j*d+d], q2[j*d:j*d+d]
				for e, xv := range xi {
					t := xv - zj[e]
					qj[e] += a * t * t
					if gx != nil {
						gx[e] -= 2 * a * t * wj[e]
					}
					if dst[1] != nil {
						dst[1][j*d+e] += 2 * a * t * wj[e]
					}
				}
			}
		}
		for j := 0; j < m; j++ {
			for e := 0; e < d; e++ {
				i := j*d + e
				if dst[2] != nil {
					cj := c.data[i]
					u := cj*cj + 1
					dst[2][i] = sumA[j]*(1/cj-2*cj/u)/2 + 2*cj/u*w[i]*q2[i]
				}
				if dst[3] != nil {
					dst[3][e] += 2 * w[i] * q2[i] / s.data[e]
				}
			}
		}
		covRelease(sumA, q2)
	}
	covRelease(k0, w)
	return nil
}

// GSEPair returns the generalized SE-ARD covariance [M1,M2] (eq. 19) between two basis sets: z1 [M1,D] with
// factors zls1 [M1,D] and z2 [M2,D] with factors zls2 [M2,D] (c > 0), under prior length-scales ls [D] (s > 0) and a
// scalar variance:
//
//	GSEPair[i,j] = σ · ∏_d (2c1_{id}c2_{jd}/u_{ijd})^{1/2} · exp(−Σ_d (z1_{id} − z2_{jd})² / (s_d² u_{ijd})),  u = c1² + c2².
//
// GSEPair(z, c, z, c) = GSEBasis(z, c) and GSEPair(x, 1, z, c) = GSECross(x, z, c); it serves the rows K(α_I, α) of
// a basis subset (Decoupled's sampled mean term) in O(|I|·M·D). Differentiable with respect to every operand.
func GSEPair(z1, zls1, z2, zls2, ls, variance *G.Node) (*G.Node, error) {
	return apply(gsePairK{}, z1, zls1, z2, zls2, ls, variance)
}

// gsePairK is the kernel of GSEPair: operands (z1, zls1, z2, zls2, ls, variance).
type gsePairK struct{}

func (gsePairK) name() string       { return "GSEPair" }
func (gsePairK) params(w io.Writer) {}
func (gsePairK) arity() int         { return 6 }
func (gsePairK) diff() []bool       { return []bool{true, true, true, true, true, true} }

func (k gsePairK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	m2, d, err := gseCheck(k.name(), in[2], in[3], in[4], in[5])
	if err != nil {
		return nil, err
	}
	if len(in[0]) != 2 || in[0][0] <= 0 || in[0][1] != d {
		return nil, &ShapeError{Op: k.name(), Want: fmt.Sprintf("non-empty bases z1 [M1,%d]", d), Got: fmt.Sprint(in[0])}
	}
	if len(in[1]) != 2 || in[1][0] != in[0][0] || in[1][1] != d {
		return nil, &ShapeError{Op: k.name(), Want: fmt.Sprintf("factors zls1 [%d,%d]", in[0][0], d), Got: fmt.Sprint(in[1])}
	}
	return tensor.Shape{in[0][0], m2}, nil
}

// gsePairBase writes k0 = K/σ [M1,M2] into out.
func gsePairBase(z1, c1, z2, c2, s arg, out []float64) {
	m1, m2, d := z1.rows(), z2.rows(), z2.cols()
	pref := covScratch(m2)
	for i := 0; i < m1; i++ {
		zi, ci := z1.data[i*d:i*d+d], c1.data[i*d:i*d+d]
		row := out[i*m2 : i*m2+m2]
		for j := 0; j < m2; j++ {
			zj, cj := z2.data[j*d:j*d+d], c2.data[j*d:j*d+d]
			r, q := 1.0, 0.0
			for e := 0; e < d; e++ {
				u := ci[e]*ci[e] + cj[e]*cj[e]
				r *= 2 * ci[e] * cj[e] / u
				t := zi[e] - zj[e]
				q += t * t / (s.data[e] * s.data[e] * u)
			}
			pref[j], row[j] = math.Sqrt(r), -q
		}
		vmath.Exp(row, row)
		for j, v := range row {
			row[j] = pref[j] * v
		}
	}
	covRelease(pref)
}

func (k gsePairK) forward(in []arg, out []float64) error {
	if err := covRecheck(k, in, len(out)); err != nil {
		return err
	}
	gsePairBase(in[0], in[1], in[2], in[3], in[4], out)
	sig := in[5].scalar()
	for i := range out {
		out[i] *= sig
	}
	return nil
}

func (k gsePairK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	all := make([][]float64, 6)
	all[wrt] = dst
	return k.grads(in, out, g, all)
}

func (k gsePairK) backwardAll(in []arg, out arg, g arg, dst [][]float64) error {
	return k.grads(in, out, g, dst)
}

// grads: with A = g ⊙ K, Δ = z1_i − z2_j, u = c1_i² + c2_j², w = 1/(s² u):
//
//	∂/∂z1_i = −2 Σ_j A_ij Δ w,  ∂/∂z2_j = 2 Σ_i A_ij Δ w,  ∂/∂c1_i = Σ_j A_ij [1/(2c1) − c1/u + 2c1 Δ² w/u] (c2 alike),
//	∂/∂s_d = (2/s_d) Σ_ij A_ij Δ² w,  ∂/∂σ = Σ g ⊙ K/σ.
func (k gsePairK) grads(in []arg, out arg, g arg, dst [][]float64) error {
	if err := covRecheck(k, in, len(out.data)); err != nil {
		return err
	}
	if len(g.data) != len(out.data) {
		return &ShapeError{Op: k.name(), Want: fmt.Sprintf("an output gradient of shape %v", out.shape), Got: fmt.Sprint(g.shape)}
	}
	z1, c1, z2, c2, s := in[0], in[1], in[2], in[3], in[4]
	sig := in[5].scalar()
	m1, m2, d := z1.rows(), z2.rows(), z2.cols()
	k0 := covScratch(m1 * m2)
	gsePairBase(z1, c1, z2, c2, s, k0)
	for _, v := range dst {
		clear(v)
	}
	if dst[5] != nil {
		t := 0.0
		for i, v := range k0 {
			t += g.data[i] * v
		}
		dst[5][0] = t
	}
	if dst[0] != nil || dst[1] != nil || dst[2] != nil || dst[3] != nil || dst[4] != nil {
		for i := 0; i < m1; i++ {
			zi, ci := z1.data[i*d:i*d+d], c1.data[i*d:i*d+d]
			for j := 0; j < m2; j++ {
				a := g.data[i*m2+j] * sig * k0[i*m2+j]
				if a == 0 {
					continue
				}
				zj, cj := z2.data[j*d:j*d+d], c2.data[j*d:j*d+d]
				for e := 0; e < d; e++ {
					u := ci[e]*ci[e] + cj[e]*cj[e]
					se := s.data[e]
					w := 1 / (se * se * u)
					t := zi[e] - zj[e]
					t2w := t * t * w
					if dst[0] != nil {
						dst[0][i*d+e] -= 2 * a * t * w
					}
					if dst[2] != nil {
						dst[2][j*d+e] += 2 * a * t * w
					}
					if dst[1] != nil {
						dst[1][i*d+e] += a * (1/(2*ci[e]) - ci[e]/u + 2*ci[e]*t2w/u)
					}
					if dst[3] != nil {
						dst[3][j*d+e] += a * (1/(2*cj[e]) - cj[e]/u + 2*cj[e]*t2w/u)
					}
					if dst[4] != nil {
						dst[4][e] += 2 * a * t2w / se
					}
				}
			}
		}
	}
	covRelease(k0)
	return nil
}

var _ jointBackward = gsePairK{}
