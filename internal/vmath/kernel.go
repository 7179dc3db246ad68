package vmath

import (
	"os"
	"strings"
	"sync/atomic"
)

// EnvKernel is the environment variable that forces a kernel: generic, avx2 or avx512. It is package
// internal/blas's variable, so that GPZOO_BLAS=generic forces every pure-Go path at once.
const EnvKernel = "GPZOO_BLAS"

//go:generate go run gen_exp.go

// kernel is one implementation of Exp: width doubles per vector (0: the generic Go code only).
type kernel struct {
	name  string
	width int
}

// maxWidth is the widest kernel's vector (the driver's tail buffer).
const maxWidth = 8

var (
	kernels = map[string]*kernel{} // the kernels this CPU can run, by name
	active  atomic.Pointer[kernel]
)

// generic is the portable Go implementation, for other CPUs and as the reference.
var generic = &kernel{name: "generic"}

func init() {
	kernels[generic.name] = generic
	addArchKernels()
	if k, ok := kernels[strings.ToLower(os.Getenv(EnvKernel))]; ok {
		active.Store(k)
		return
	}
	active.Store(best())
}

// best returns the fastest kernel this CPU runs.
func best() *kernel {
	for _, n := range []string{"avx512", "avx2"} {
		if k, ok := kernels[n]; ok {
			return k
		}
	}
	return generic
}

// Kernel names the kernel in use: "avx512", "avx2" or "generic".
func Kernel() string { return active.Load().name }

// Kernels lists the kernels this CPU can run, best first.
func Kernels() []string {
	var out []string
	for _, n := range []string{"avx512", "avx2", "generic"} {
		if _, ok := kernels[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// SetKernel switches to the named kernel (for tests and benchmarks) and reports whether this CPU runs it.
// It must not be called while Exp calls are running.
func SetKernel(name string) bool {
	k, ok := kernels[name]
	if ok {
		active.Store(k)
	}
	return ok
}
