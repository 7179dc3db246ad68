package ops

import (
	"github.com/gpzoo/gpzoo/ops/internal/vmath"
)

// For the external tests of the covariance ops (package ops_test, which may import gp's kernels).

// LegacyStationaryMatrix and LegacyStationaryMatrixGrad are ops.Stationary's former Matrix and MatrixGrad (see
// cov_legacy_test.go).
func LegacyStationaryMatrix(s *Stationary, x1, x2 CovInput, h []CovInput, out []float64) {
	legacyMatrix(s, x1, x2, h, h[0].Scalar(), out)
}

func LegacyStationaryMatrixGrad(s *Stationary, wrt int, x1, x2 CovInput, h []CovInput, k, g, dst []float64) {
	legacyMatrixGrad(s, wrt, x1, x2, h, k, g, dst)
}

// VMathKernels lists ops/internal/vmath's kernels on this CPU; SetVMathKernel forces one (SetBLASKernel's
// counterpart: GPZOO_BLAS chooses both at start-up).
func VMathKernels() []string          { return vmath.Kernels() }
func SetVMathKernel(name string) bool { return vmath.SetKernel(name) }
func VMathKernel() string             { return vmath.Kernel() }
