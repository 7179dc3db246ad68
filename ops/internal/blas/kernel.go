package blas

import (
	"math"

	"github.com/gpzoo/gpzoo/ops/internal/cpusel"
)

// EnvKernel is the environment variable that forces a micro-kernel: generic, avx2 or avx512 (package
// ops/internal/cpusel's, shared with ops/internal/vmath).
const EnvKernel = cpusel.Env

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
	// fnS is fn on operands at any strides (chol.go's blocks in place): C[0:mr, 0:nr] += alpha·Σ_p
	// a[a0+p·as+i]·b[b0+p·bs+j], in the same order of operations as fn (the same bits). as and bs may be negative.
	fnS func(k int, alpha float64, a []float64, a0, as int, b []float64, b0, bs int, c []float64, ldc int)
	// diagS, when set, is diag on a tile whose rows are ldt apart (nil: the Go loop of diagSolveS).
	diagS func(l, d, t []float64, ldt int)
	// potrf, when set, is the vector code of potrfDiag (nil: its Go loop), the same bits.
	potrf func(u []float64, m int) int
	// revRows, when set, is the vector code of cholRevDiag's row updates (nil: revRowsGo), the same bits.
	revRows func(w, l []float64, ld, m, j int, dbar float64)
	// transpose, when set, is the vector code of transposeBlocks (nil: its Go loops).
	transpose func(dst []float64, d0, ldd int, src []float64, s0, lds, rb, cb int, half bool)
}

var (
	kernels = map[string]*microKernel{}   // the kernels this CPU can run, by name (filled at start-up)
	sel     *cpusel.Selector[microKernel] // the kernel in use: sel.Active(), one atomic load per call
)

// generic is the portable micro-kernel: 4 × 4, one fused multiply-add per k.
var generic = &microKernel{name: "generic", mr: 4, nr: 4, mc: 96, nc: 1024, fn: gemmGeneric4x4, fnS: gemmGeneric4x4S}

// gemmGeneric4x4 reads packed micro-panels: the strided kernel at unit panel strides (the same operations).
func gemmGeneric4x4(k int, alpha float64, a, b, c []float64, ldc int) {
	gemmGeneric4x4S(k, alpha, a, 0, 4, b, 0, 4, c, ldc)
}

// gemmGeneric4x4S is the portable kernel on strided operands (microKernel.fnS): row p of the A panel at
// a[a0+p·as:], of the B panel at b[b0+p·bs:]. Sixteen scalar accumulators (an array would live in memory):
// registers on amd64 and arm64.
func gemmGeneric4x4S(k int, alpha float64, a []float64, a0, as int, b []float64, b0, bs int, c []float64, ldc int) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float64
	for p := 0; p < k; p++ {
		ap, bp := a[a0+p*as:a0+p*as+4:a0+p*as+4], b[b0+p*bs:b0+p*bs+4:b0+p*bs+4]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		a0 := ap[0]
		c00, c01, c02, c03 = math.FMA(a0, b0, c00), math.FMA(a0, b1, c01), math.FMA(a0, b2, c02), math.FMA(a0, b3, c03)
		a1 := ap[1]
		c10, c11, c12, c13 = math.FMA(a1, b0, c10), math.FMA(a1, b1, c11), math.FMA(a1, b2, c12), math.FMA(a1, b3, c13)
		a2 := ap[2]
		c20, c21, c22, c23 = math.FMA(a2, b0, c20), math.FMA(a2, b1, c21), math.FMA(a2, b2, c22), math.FMA(a2, b3, c23)
		a3 := ap[3]
		c30, c31, c32, c33 = math.FMA(a3, b0, c30), math.FMA(a3, b1, c31), math.FMA(a3, b2, c32), math.FMA(a3, b3, c33)
	}
	store := func(row []float64, v0, v1, v2, v3 float64) {
		row = row[:4:4]
		row[0], row[1], row[2], row[3] = math.FMA(alpha, v0, row[0]), math.FMA(alpha, v1, row[1]), math.FMA(alpha, v2, row[2]), math.FMA(alpha, v3, row[3])
	}
	store(c[0:], c00, c01, c02, c03)
	store(c[ldc:], c10, c11, c12, c13)
	store(c[2*ldc:], c20, c21, c22, c23)
	store(c[3*ldc:], c30, c31, c32, c33)
}

func init() {
	kernels[generic.name] = generic
	addArchKernels()
	sel = cpusel.New([]string{"avx512", "avx2", "generic"}, kernels)
}

// Kernel names the micro-kernel in use: "avx512", "avx2" or "generic".
func Kernel() string { return sel.Active().name }

// Kernels lists the micro-kernels this CPU can run, best first.
func Kernels() []string { return sel.Names() }

// SetKernel switches to the named micro-kernel (for tests and benchmarks) and reports whether this CPU runs it.
// It must not be called while BLAS calls are running.
func SetKernel(name string) bool { return sel.Set(name) }
