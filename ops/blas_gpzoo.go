package ops

import (
	gzblas "github.com/gpzoo/gpzoo/ops/internal/blas"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
)

// gpzoo's own level-3 BLAS (ops/internal/blas), reachable from outside ops for benchmarks and tools such as
// gpzoo bench, which times it beside gonum's reference and OpenBLAS. It is compiled into both builds: the
// purego build installs it in blas64 and lapack64 (blas_purego.go), the openblas build installs OpenBLAS, so
// there these values are gpzoo's BLAS beside the one the models run on. Nothing else of ops/internal is
// exported.

// GpzooBLAS returns gpzoo's BLAS: gonum's blas.Float64 with Dgemm, Dgemmt (as a method of the concrete value),
// Dsyrk, Dtrsm and Dtrmm replaced by packed, register-tiled, parallel routines on the active micro-kernel
// (BLASKernel).
func GpzooBLAS() blas.Float64 { return gzblas.Implementation{} }

// GpzooLAPACK returns gpzoo's LAPACK: gonum's lapack.Float64 with the lower Dpotrf replaced by a recursive
// factorisation on GpzooBLAS's routines (the other routines call the BLAS installed in blas64).
func GpzooLAPACK() lapack.Float64 { return gzblas.LAPACK{} }

// BLASKernel names the micro-kernel gpzoo's BLAS uses: "avx512", "avx2" or "generic", in either build (BLAS
// names the one the models run on, "openblas" in the openblas build).
func BLASKernel() string { return gzblas.Kernel() }

// BLASKernels lists the micro-kernels of gpzoo's BLAS this CPU runs, best first.
func BLASKernels() []string { return gzblas.Kernels() }

// SetBLASKernel switches gpzoo's BLAS to the named micro-kernel (for benchmarks and tests; the environment
// variable GPZOO_BLAS chooses at start-up) and reports whether this CPU runs it. Every kernel gives the same
// bits, so a switch changes speed only.
func SetBLASKernel(name string) bool { return gzblas.SetKernel(name) }
