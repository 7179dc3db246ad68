//go:build !openblas

package ops

import (
	"github.com/gpzoo/gpzoo/ops/internal/blas"
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Build names the BLAS/LAPACK build compiled in: "purego" by default, gpzoo's own level-3 BLAS (ops/internal/blas:
// packed, register-tiled Go assembly micro-kernels) over gonum; the openblas build tag switches to OpenBLAS
// through gonum.org/v1/netlib (cgo).
const Build = "purego"

// BLAS names the level-3 kernel in use: "avx512", "avx2" or "generic" (ops/internal/blas.Kernel) in this build,
// "openblas" in the openblas build. Results report it beside Build.
func BLAS() string { return blas.Kernel() }

func init() {
	blas64.Use(blas.Implementation{})
	lapack64.Use(blas.LAPACK{})
}

// cholBackward overwrites w, which holds tril(L̄), with (M+Mᵀ)/2, M = L⁻ᵀ·Φ(Lᵀ·tril(L̄))·L⁻¹ (see
// CholeskyBackward), by Murray's blocked reverse mode in about 2n³/3 flops (ops/internal/blas.CholeskyBackward).
func cholBackward(w, l []float64, n int) { blas.CholeskyBackward(w, l, n) }

// CholeskyBackwardFlops returns the flops CholeskyBackward spends at order n in this build: 2n³/3 (gpzoo's
// blocked reverse mode), 3n³ in the openblas build (a Dtrmm and two Dtrsm). Benchmarks count a step's work with it.
func CholeskyBackwardFlops(n int) float64 {
	nf := float64(n)
	return 2 * nf * nf * nf / 3
}

// gemmt computes the ul triangle of C = alpha·A·Bᵀ (A, B [m,n]) with gpzoo's Dgemmt: micro-tiles outside the
// triangle are skipped.
func gemmt(ul gblas.Uplo, alpha float64, a, b, c blas64.General) {
	blas.Implementation{}.Dgemmt(ul, gblas.NoTrans, gblas.Trans, c.Rows, a.Cols, alpha, a.Data, a.Stride, b.Data, b.Stride, 0, c.Data, c.Stride)
}
