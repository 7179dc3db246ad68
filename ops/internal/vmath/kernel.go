package vmath

import "github.com/gpzoo/gpzoo/ops/internal/cpusel"

// EnvKernel is the environment variable that forces a kernel: generic, avx2 or avx512. It is package
// ops/internal/cpusel's, shared with ops/internal/blas, so that GPZOO_BLAS=generic forces every pure-Go path at once.
const EnvKernel = cpusel.Env

//go:generate go run gen_exp.go

// kernel is one implementation of Exp: width doubles per vector (0: the generic Go code only).
type kernel struct {
	name  string
	width int
}

// maxWidth is the widest kernel's vector (the driver's tail buffer).
const maxWidth = 8

var (
	kernels = map[string]*kernel{}   // the kernels this CPU can run, by name (filled at start-up)
	sel     *cpusel.Selector[kernel] // the kernel in use: sel.Active(), one atomic load per call
)

// generic is the portable Go implementation, for other CPUs and as the reference.
var generic = &kernel{name: "generic"}

func init() {
	kernels[generic.name] = generic
	addArchKernels()
	sel = cpusel.New([]string{"avx512", "avx2", "generic"}, kernels)
}

// Kernel names the kernel in use: "avx512", "avx2" or "generic".
func Kernel() string { return sel.Active().name }

// Kernels lists the kernels this CPU can run, best first.
func Kernels() []string { return sel.Names() }

// SetKernel switches to the named kernel (for tests and benchmarks) and reports whether this CPU runs it.
// It must not be called while Exp calls are running.
func SetKernel(name string) bool { return sel.Set(name) }
