//go:build !openblas

package ops

// Build names the BLAS/LAPACK implementation compiled in: gonum's pure-Go one by default ("purego"); the
// openblas build tag switches to OpenBLAS through gonum.org/v1/netlib (cgo).
const Build = "purego"

// recursiveBLAS3 selects the recursive, Gemm-bound triangular solve/product and Cholesky of linalg.go: gonum's
// pure-Go Dtrsm/Dtrmm/Dpotrf are unblocked or Dtrsm-bound, its Dgemm is blocked and parallel.
const recursiveBLAS3 = true
