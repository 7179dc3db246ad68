package benchmodels

import "github.com/gpzoo/gpzoo/ops"

// Flop counts of the operations the benchmark steps run, each counting the algorithm as ops implements it, so
// that a step's Flops (the sum of its operations' counts) over its time is the rate the step achieves. A
// multiplication, an addition and an elementwise function such as exp each count one flop. Elementwise passes
// over whole matrices are counted; terms linear in M, N or D alone (vectors, diagonals, the likelihood's
// per-row work) and the graph's copies are left out.

// CovFlops is the forward pass of the covariance matrix K(x1, x2) [n,m] of an SE-ARD kernel on D inputs
// (ops.Stationary): the squared distances r² computed directly, a subtraction and a fused multiply-add per term
// (3nmD; for D > 32 ops takes one Gemm of the expansion ‖a‖² + ‖b‖² − 2a·b instead, 2nmD, and its assembly and
// cancellation test, 3nm), and the profile σ²·exp(−r²/2) (3nm):
//
//	3nmD + 3nm   (D ≤ 32; 2nmD + 6nm beyond)
func CovFlops(n, m, d float64) float64 {
	if d > 32 {
		return 2*n*m*d + 6*n*m
	}
	return 3*n*m*d + 3*n*m
}

// CovGradFlops is the backward pass of that matrix with respect to its variance, its lengthscales and inputs of
// its operands x1, x2 (0, 1 or 2: the inducing inputs of K(Z, X), both of K(Z, Z), none of an exact GP's
// K(X, X)). All gradients share one pass (ops.Stationary): W = g⊙∂K/∂r² (2nm), Σ g⊙K for the variance (2nm), the
// row sums of W and W·b (one product with D+1 columns, 2nm(D+1)) and its column sums (nm); x2's gradient (inputs
// = 2) adds Wᵀa (2nmD); what is left is linear in n or m:
//
//	7nm + 2nmD + (2nmD when inputs = 2)
func CovGradFlops(n, m, d float64, inputs int) float64 {
	f := 7*n*m + 2*n*m*d
	if inputs == 2 {
		f += 2 * n * m * d
	}
	return f
}

// CholFlops is the Cholesky factorisation of an n×n matrix (ops.CholeskyLower): the symmetrisation (n²) and
// Dpotrf (n³/3):
//
//	n³/3 + n²
func CholFlops(n float64) float64 { return n*n*n/3 + n*n }

// CholGradFlops is its backward pass (ops.CholeskyBackward) in this build: Murray's blocked reverse mode,
// 2n³/3, in the purego build; a Dtrmm and two Dtrsm, 3n³, in the openblas build (ops.CholeskyBackwardFlops).
func CholGradFlops(n int) float64 { return ops.CholeskyBackwardFlops(n) }

// TriSolveFlops is X = L⁻¹B (or L⁻ᵀB) for L n×n and B n×m (Dtrsm):
//
//	n²m
func TriSolveFlops(n, m float64) float64 { return n * n * m }

// TriSolveGradFlops is its backward pass (ops.TriSolveBackward, both gradients at once): dB = L⁻ᵀG (Dtrsm, n²m)
// and the lower triangle of dL = −dB·Xᵀ (Dgemmt, n²m):
//
//	2n²m
func TriSolveGradFlops(n, m float64) float64 { return 2 * n * n * m }

// MatMulFlops is C = op(A)·op(B) with C m×n and inner dimension k (Dgemm):
//
//	2mnk
func MatMulFlops(m, n, k float64) float64 { return 2 * m * n * k }

// MatMulGradFlops is its backward pass to both operands (two Dgemm of the same size):
//
//	4mnk
func MatMulGradFlops(m, n, k float64) float64 { return 4 * m * n * k }

// TriQuadColsFlops is ops.TriQuadCols on A [m,n] with p factors L_q [m,m]: per factor B_q = L_qᵀA (Dtrmm,
// m²n) and its column sums of squares (2mn):
//
//	p·(m²n + 2mn)
func TriQuadColsFlops(m, n, p float64) float64 { return p * (m*m*n + 2*m*n) }

// TriQuadColsGradFlops is its backward pass (all gradients at once, reusing the forward's B_q): per factor
// G_q = 2·B_q·diag(ĝ_q) (mn), the lower triangle of A·G_qᵀ (Dgemmt, m²n) and L_q·G_q (Dtrmm, m²n); then the sum
// of the p terms of dA ((p−1)mn):
//
//	p·(2m²n + mn) + (p−1)·mn
func TriQuadColsGradFlops(m, n, p float64) float64 { return p*(2*m*m*n+m*n) + (p-1)*m*n }

// SquareSumFlops is SumRowsSq(A) (ops.SumRowsSq) over A [m,n] forward (2mn) and backward (2·a·g, 2mn):
//
//	4mn
func SquareSumFlops(m, n float64) float64 { return 4 * m * n }

// AdamFlops is an Adam update (train.Adam) of params raw parameter entries: the two moments (3 + 4 flops) and
// the step lr·(m/c₁)/(√(v/c₂) + ε) subtracted (7 flops):
//
//	14·params
func AdamFlops(params float64) float64 { return 14 * params }
