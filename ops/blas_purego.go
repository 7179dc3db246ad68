//go:build !openblas

package ops

// Build names the BLAS/LAPACK implementation compiled in: gonum's pure-Go one by default ("purego"); the
// openblas build tag switches to OpenBLAS through gonum.org/v1/netlib (cgo).
const Build = "purego"
