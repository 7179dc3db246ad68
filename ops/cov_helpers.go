package ops

// Helpers shared by the covariance functions in ops (Stationary) and exported for those outside it (package gp's
// periodic and linear kernels, a user's kernel): the operand indices, the pooled Gemm and transpose, centred
// inputs, row-parallel passes, the variance gradient. Every covariance function itself lives with its kernel.

// Operand indices of CovMatrix (x1, x2, hyper...) and CovDiag (x, hyper...).
const (
	covWrtX1 = 0
	covWrtX2 = 1
	covWrtH0 = 2 // first hyperparameter of CovMatrix; hyperparameter j is covWrtH0+j
)

func covFill(out []float64, v float64) {
	for i := range out {
		out[i] = v
	}
}

// covConstDiagGrad is the gradient of diag K = σ²·1 (stationary and periodic kernels): Σg for the variance
// (CovDiag operand 1), zero for everything else.
func covConstDiagGrad(wrt int, g []float64, dst []float64) {
	if wrt == 1 {
		s := 0.0
		for _, v := range g {
			s += v
		}
		dst[0] = s
		return
	}
	clear(dst)
}

// Operand indices of MatrixGrad's wrt: x1, x2, then hyperparameter j at CovWrtH0+j (DiagGrad: x is 0,
// hyperparameter j is 1+j).
const (
	CovWrtX1 = covWrtX1
	CovWrtX2 = covWrtX2
	CovWrtH0 = covWrtH0
)

// CovGemm computes c = alpha·op(a)·op(b) (c overwritten; op transposes when ta, tb): a is ar×ac and b is br×bc
// as stored, all row-major. The BLAS every op of gpzoo uses.
func CovGemm(ta, tb bool, alpha float64, a []float64, ar, ac int, b []float64, br, bc int, c []float64) {
	covGemm(ta, tb, alpha, a, ar, ac, b, br, bc, c)
}

// CovTranspose writes the transpose of the row-major r×c matrix x, times scale[k] per column k when scale is
// non-nil, into dst (c×r).
func CovTranspose(x []float64, r, c int, scale, dst []float64) { covTranspose(x, r, c, scale, dst) }

// CovCentred returns the transposed inputs, centred on the column mean c of x1: at = (x1 − c)ᵀ [D,N],
// bt = (x2 − c)ᵀ [D,M] (differences are unchanged, and expansions of x − x' cancel far less than on raw inputs).
// c is x1's alone, so that what is computed for row j of x2 does not depend on x2's other rows. Both come from
// CovScratch: give them back with CovRelease.
func CovCentred(x1, x2 CovInput) (at, bt []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	at, bt = covScratch(n*d), covScratch(m*d)
	centre, inv := covScratch(d), covScratch(d)
	defer covRelease(centre, inv)
	covCentre(x1, nil, centre, inv)
	for i := 0; i < n; i++ {
		for k, v := range x1.Data[i*d : (i+1)*d] {
			at[k*n+i] = (v - centre[k]) * inv[k]
		}
	}
	for j := 0; j < m; j++ {
		for k, v := range x2.Data[j*d : (j+1)*d] {
			bt[k*m+j] = (v - centre[k]) * inv[k]
		}
	}
	return at, bt
}

// CovNearRel is the threshold of "near" pairs: an expanded squared distance (or periodic exponent) below
// CovNearRel times its scale has lost too many digits to cancellation and is recomputed directly.
const CovNearRel = covNearRel

// CovChunks returns how many row blocks an elementwise pass over rows×cols entries is split into (1 when small
// or GOMAXPROCS is 1).
func CovChunks(rows, cols int) int { return covChunks(rows, cols) }

// CovForRows calls fn(chunk, lo, hi) on chunks contiguous blocks of [0, rows), concurrently when chunks > 1, and
// waits for all of them. Blocks must write disjoint rows; anything accumulated across rows is kept per chunk and
// summed in chunk order afterwards, so that results are deterministic.
func CovForRows(chunks, rows int, fn func(chunk, lo, hi int)) { covForRows(chunks, rows, fn) }

// CovVarianceGrad returns Σ g ⊙ ∂K/∂σ² for K = σ²·U: Σ g⊙K / σ², or Σ g⊙U with U recomputed by unit when σ² is
// too small to divide by.
func CovVarianceGrad(g, k []float64, s2 float64, unit func(u []float64)) float64 {
	return covVarianceGrad(g, k, s2, unit)
}

// CovConstDiagGrad is DiagGrad of a covariance function whose diagonal is σ²·1 (σ² its first hyperparameter):
// Σg for the variance (CovDiag operand 1), zero for every other operand.
func CovConstDiagGrad(wrt int, g []float64, dst []float64) { covConstDiagGrad(wrt, g, dst) }
