//go:build !openblas

package ops

// Build names the BLAS/LAPACK implementation compiled in: gonum's pure-Go one by default ("purego"); the
// openblas build tag switches to OpenBLAS through gonum.org/v1/netlib (cgo).
const Build = "purego"

const tunedLevel3 = true // parallel triangular solves/products and recursive Cholesky of linalg.go (see there)
