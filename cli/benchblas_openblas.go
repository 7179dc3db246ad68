//go:build openblas

package cli

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/netlib/blas/netlib"
)

// In the openblas build gpzoo bench also times OpenBLAS: its BLAS through gonum.org/v1/netlib and the Dpotrf
// that lapack64 has installed (ops's: LAPACKE's dpotrf).
func init() {
	extraImpls = append(extraImpls, blasImpl{name: "openblas", blas: netlib.Implementation{},
		potrf: func(n int, a []float64) bool {
			_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: a})
			return ok
		}})
}
