//go:build !amd64

package vmath

// The dot-product and multiply-add kernels are never called: only the generic kernel exists here.
func dots1Arch(k *kernel, x, y *float64, n int, out *float64)                    {}
func dots4Arch(k *kernel, x, y *float64, n, stride int, out *float64)            {}
func axpy1Arch(k *kernel, x *float64, n int, a float64, y *float64)              {}
func axpy4Arch(k *kernel, x *float64, n int, a *float64, y *float64, stride int) {}

func sqdistArch(k *kernel, out, a *float64, d int, y *float64, stride, n int) {}

func scaleArch(k *kernel, dst *float64, a float64, x *float64, n int)       {}
func mulScaleArch(k *kernel, dst *float64, a float64, x, y *float64, n int) {}
