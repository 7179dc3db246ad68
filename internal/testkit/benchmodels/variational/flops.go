package variational

import (
	bm "github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
)

// The flop counts of the variational steps, from the building blocks of package benchmodels (each the
// algorithm as ops implements it; see there for what is counted). A layer's count is its forward and backward
// pass on N rows and its parameters' Adam update; a deep GP's layers see N = S·B rows (S samples of the
// minibatch B).

// layerShape is what a layer's count depends on.
type layerShape struct {
	n, d, p float64 // rows, input dimension, outputs
	// dx: the inputs are differentiated (a deep GP's layers after the first: their inputs are samples of the
	// layer below); white: the kernel adds a white-noise term (dgp.InnerKernel), one more M×N and M×M sum.
	dx, white bool
}

// inputs returns how many operands of K(Z, X) are differentiated: Z, and X when dx.
func (s layerShape) inputs() int {
	if s.dx {
		return 2
	}
	return 1
}

// svgpLayerFlops counts a whitened coupled SVGP layer (layers.SVGP) with M inducing inputs Z shared by P outputs
// on N rows, K_uu = K(Z, Z), K_uf = K(Z, X), L_u = chol(K_uu), A = L_u⁻¹K_uf [M,N], means Aᵀm [N,P], variances
// k_xx − ‖a_n‖² + ‖L_pᵀa_n‖² (TriQuadCols), KL ½Σ_p(‖L_p‖²_F + ‖m_p‖²) − Σ log L_p,ii:
//
//	forward   CovFlops(M, M, D) + CholFlops(M) + CovFlops(M, N, D) + TriSolveFlops(M, N) + MatMulFlops(N, P, M)
//	          + TriQuadColsFlops(M, N, P) + 2PM² (‖L_p‖²_F)
//	backward  TriQuadColsGradFlops(M, N, P) + SquareSumFlops(M, N) (‖a_n‖², both passes) + MatMulGradFlops(N, P, M)
//	          + 2MN (A's three gradients summed) + TriSolveGradFlops(M, N) + CovGradFlops(M, N, D, 1 or 2: Z, and X
//	          when differentiated) + CholGradFlops(M) + CovGradFlops(M, M, D, 2) + 4PM² (‖L_p‖²_F's gradient,
//	          L_p's three gradients summed)
//	white     MN + M² (the white term's zeros added)
//	Adam      AdamFlops(MD + PM + PM²)  (Z, m, the P raw M×M factors)
//
// Summed, with i = 1 or 2 differentiated operands of K(Z, X):
//
//	3(P+1)M²N + M³/3 + CholGradFlops(M) + (3+2i)MND + (15+10P)MN + 7M²D + (11+20P)M² + 14M(D+P)
//
// (+ MN + M² with the white term): the TriQuadCols and the solve, forward and backward, dominate. M = 200,
// N = 1024, D = 8, P = 1, i = 1: 0.271 GFLOP in the purego build (0.289 in the openblas build, whose Cholesky
// backward is 3M³).
func svgpLayerFlops(m float64, s layerShape) float64 {
	n, d, p := s.n, s.d, s.p
	f := bm.CovFlops(m, m, d) + bm.CholFlops(m) + bm.CovFlops(m, n, d) + bm.TriSolveFlops(m, n) +
		bm.MatMulFlops(n, p, m) + bm.TriQuadColsFlops(m, n, p) + 2*p*m*m
	f += bm.TriQuadColsGradFlops(m, n, p) + bm.SquareSumFlops(m, n) + bm.MatMulGradFlops(n, p, m) + 2*m*n +
		bm.TriSolveGradFlops(m, n) + bm.CovGradFlops(m, n, d, s.inputs()) + bm.CholGradFlops(int(m)) +
		bm.CovGradFlops(m, m, d, 2) + 4*p*m*m
	if s.white {
		f += m*n + m*m
	}
	return f + bm.AdamFlops(m*d+p*m+p*m*m)
}

// decoupledLayerFlops counts a decoupled layer in the benchmark's forms (layers.Decoupled, MeanGPCentred and
// CovS) with Mα mean bases Zα and Mβ covariance bases Zβ on N rows and P outputs: L_α = chol(K_α + εI),
// a = L_α⁻ᵀm, means K_αxᵀa; L_β = chol(K_β + εI), p = L_β⁻¹K_βx, R_p = L_β⁻¹L_p, variances k_xx − ‖p_n‖² +
// ‖R_pᵀp_n‖² (TriQuadCols); KL ½‖m‖² + ½Σ_p(‖R_p‖²_F − log|S_p| + log|K_β|) + const:
//
//	forward   CovFlops(Mα, N, D) + CovFlops(Mα, Mα, D) + CholFlops(Mα) + TriSolveFlops(Mα, P) + MatMulFlops(N, P, Mα)
//	          + CovFlops(Mβ, N, D) + CovFlops(Mβ, Mβ, D) + CholFlops(Mβ) + TriSolveFlops(Mβ, N)
//	          + TriQuadColsFlops(Mβ, N, P) + P·(TriSolveFlops(Mβ, Mβ) + 2Mβ²)   (R_p and the KL's ‖R_p‖²_F)
//	backward  TriQuadColsGradFlops(Mβ, N, P) + SquareSumFlops(Mβ, N) + TriSolveGradFlops(Mβ, N) + MβN (p's two
//	          gradients summed) + CovGradFlops(Mβ, N, D, 1 or 2) + CholGradFlops(Mβ) + CovGradFlops(Mβ, Mβ, D, 2)
//	          + (P+1)Mβ² (L_β's gradients summed) + P·(TriSolveGradFlops(Mβ, Mβ) + 4Mβ²)
//	          + MatMulGradFlops(N, P, Mα) + TriSolveGradFlops(Mα, P) + CovGradFlops(Mα, N, D, 1 or 2)
//	          + CholGradFlops(Mα) + CovGradFlops(Mα, Mα, D, 2)
//	white     (Mα + Mβ)N + Mα² + Mβ²
//	Adam      AdamFlops((Mα + Mβ)D + PMα + PMβ²)
//
// Summed, with i = 1 or 2 differentiated operands of K(Zα, X) and K(Zβ, X):
//
//	(3P+3)Mβ²N + (3P+1/3)Mβ³ + CholGradFlops(Mβ) + Mα³/3 + CholGradFlops(Mα) + (3+2i)(Mα+Mβ)ND
//	+ (10+6P)MαN + (14+4P)MβN + 7(Mα²+Mβ²)D + (11+3P)Mα² + (12+21P)Mβ² + 14((Mα+Mβ)D + PMα)
//
// (+ (Mα+Mβ)N + Mα² + Mβ² with the white term): the mean bases' Cholesky and its backward, the Mβ²N solves and
// products and the kernel matrices' Gemms.
func decoupledLayerFlops(ma, mb float64, s layerShape) float64 {
	n, d, p := s.n, s.d, s.p
	f := bm.CovFlops(ma, n, d) + bm.CovFlops(ma, ma, d) + bm.CholFlops(ma) + bm.TriSolveFlops(ma, p) +
		bm.MatMulFlops(n, p, ma) + bm.CovFlops(mb, n, d) + bm.CovFlops(mb, mb, d) + bm.CholFlops(mb) +
		bm.TriSolveFlops(mb, n) + bm.TriQuadColsFlops(mb, n, p) + p*(bm.TriSolveFlops(mb, mb)+2*mb*mb)
	f += bm.TriQuadColsGradFlops(mb, n, p) + bm.SquareSumFlops(mb, n) + bm.TriSolveGradFlops(mb, n) + mb*n +
		bm.CovGradFlops(mb, n, d, s.inputs()) + bm.CholGradFlops(int(mb)) + bm.CovGradFlops(mb, mb, d, 2) +
		(p+1)*mb*mb + p*(bm.TriSolveGradFlops(mb, mb)+4*mb*mb) +
		bm.MatMulGradFlops(n, p, ma) + bm.TriSolveGradFlops(ma, p) + bm.CovGradFlops(ma, n, d, s.inputs()) +
		bm.CholGradFlops(int(ma)) + bm.CovGradFlops(ma, ma, d, 2)
	if s.white {
		f += (ma+mb)*n + ma*ma + mb*mb
	}
	return f + bm.AdamFlops((ma+mb)*d+p*ma+p*mb*mb)
}

// sampleFlops is a deep GP's sample of a layer's output, f = μ + √max(σ², 0)·ε on N rows and P outputs: four
// elementwise passes forward and about as many backward.
func sampleFlops(n, p float64) float64 { return 8 * n * p }

// SVGPFlops counts SVGP(m, batch)'s step: one whitened single-output SVGP layer on the minibatch (D = SVGPDim;
// the inputs are data) and its Adam update, svgpLayerFlops(M, N = B, P = 1). Doubling B doubles the terms in
// M²B, MBD and MB; the M³ and M² terms do not grow.
func SVGPFlops(m, batch int) float64 {
	return svgpLayerFlops(float64(m), layerShape{n: float64(batch), d: SVGPDim, p: 1})
}

// DGPFlops counts DGP(family)'s step, DGPShapeFlops(MinibatchDGP(family)): S = dgpSamples samples of the
// minibatch B = dgpBatch, so N = S·B rows in every layer; layer 1 maps D = dgpDim inputs (data) to width
// W = dgpWidth with a white kernel term, layer 2 maps the W samples (differentiated) to one output; plus the
// sample of layer 1's output. It returns 0 for an unknown family.
func DGPFlops(family string) float64 { return DGPShapeFlops(MinibatchDGP(family)) }

// DGPShapeFlops counts DGPAt(s)'s step: N = s.Rows rows (S = 1) in every layer; the first layer maps the D data
// inputs (not differentiated) to the width W, each further hidden layer W samples (differentiated) to W, the
// last W to one output; the L hidden layers add a white kernel term and their outputs' samples:
//
//	coupled    svgpLayerFlops(M, {N, D, W, white}) + (L−1)·svgpLayerFlops(M, {N, W, W, dx, white})
//	           + svgpLayerFlops(M, {N, W, 1, dx}) + L·sampleFlops(N, W)
//	decoupled  the same with decoupledLayerFlops(Mα, Mβ, ·)
//
// (L = 0: one layer on the data, svgpLayerFlops(M, {N, D, 1}) or its decoupled twin). It returns 0 for an
// unknown family or an invalid shape.
func DGPShapeFlops(s DGPShape) float64 {
	if s.Hidden < 0 || s.Width < 1 || s.Rows < 1 || s.Dim < 1 {
		return 0
	}
	var layer func(layerShape) float64
	switch s.Family {
	case DGPCoupled:
		layer = func(sh layerShape) float64 { return svgpLayerFlops(dgpM, sh) }
	case DGPDecoupled:
		layer = func(sh layerShape) float64 { return decoupledLayerFlops(dgpMa, dgpMb, sh) }
	default:
		return 0
	}
	n, d, w := float64(s.Rows*dgpSamples), float64(s.Dim), float64(s.Width)
	if s.Hidden == 0 {
		return layer(layerShape{n: n, d: d, p: 1})
	}
	f := layer(layerShape{n: n, d: d, p: w, white: true})
	for l := 1; l < s.Hidden; l++ {
		f += layer(layerShape{n: n, d: w, p: w, dx: true, white: true})
	}
	return f + layer(layerShape{n: n, d: w, p: 1, dx: true}) + float64(s.Hidden)*sampleFlops(n, w)
}
