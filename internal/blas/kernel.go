package blas

import (
	"math"
	"os"
	"strings"
	"sync/atomic"
)

// EnvKernel is the environment variable that forces a micro-kernel: generic, avx2 or avx512.
const EnvKernel = "GPZOO_BLAS"

//go:generate go run gen_kernels.go

// kc is the depth of every packed block (the same for all kernels, so that they give the same bits).
const kc = 256

// microKernel computes C[0:mr, 0:nr] += alpha·Σ_p a[p·mr+i]·b[p·nr+j] for p < k, C row-major with stride ldc
// (c points at C[0,0]), a and b packed micro-panels.
type microKernel struct {
	name   string
	mr, nr int
	mc, nc int // block sizes of A (mc × kc) and B (kc × nc), multiples of mr and nr
	fn     func(k int, alpha float64, a, b, c []float64, ldc int)
	// diag, when set, is the vector substitution of a panelRows × panelRows lower-triangular block l (row-major)
	// with diagonal d against a panelRows × nr tile t (nil: the Go loop of diagSolve).
	diag func(l, d, t []float64)
}

var (
	kernels = map[string]*microKernel{} // the kernels this CPU can run, by name
	active  atomic.Pointer[microKernel]
)

// generic is the portable micro-kernel: 4 × 4, one fused multiply-add per k.
var generic = &microKernel{name: "generic", mr: 4, nr: 4, mc: 96, nc: 1024, fn: gemmGeneric4x4}

func gemmGeneric4x4(k int, alpha float64, a, b, c []float64, ldc int) {
	var acc [4][4]float64
	for p := 0; p < k; p++ {
		ap, bp := a[p*4:p*4+4], b[p*4:p*4+4]
		for i, av := range ap {
			for j, bv := range bp {
				acc[i][j] = math.FMA(av, bv, acc[i][j])
			}
		}
	}
	for i := range acc {
		row := c[i*ldc : i*ldc+4]
		for j := range row {
			row[j] = math.FMA(alpha, acc[i][j], row[j])
		}
	}
}

func init() {
	kernels[generic.name] = generic
	addArchKernels()
	choice := strings.ToLower(os.Getenv(EnvKernel))
	if k, ok := kernels[choice]; ok {
		active.Store(k)
		return
	}
	active.Store(best())
}

// best returns the fastest kernel this CPU runs.
func best() *microKernel {
	for _, n := range []string{"avx512", "avx2"} {
		if k, ok := kernels[n]; ok {
			return k
		}
	}
	return generic
}

// Kernel names the micro-kernel in use: "avx512", "avx2" or "generic".
func Kernel() string { return active.Load().name }

// Kernels lists the micro-kernels this CPU can run, best first.
func Kernels() []string {
	var out []string
	for _, n := range []string{"avx512", "avx2", "generic"} {
		if _, ok := kernels[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// SetKernel switches to the named micro-kernel (for tests and benchmarks) and reports whether this CPU runs it.
// It must not be called while BLAS calls are running.
func SetKernel(name string) bool {
	k, ok := kernels[name]
	if ok {
		active.Store(k)
	}
	return ok
}
