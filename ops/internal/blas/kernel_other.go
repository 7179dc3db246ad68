//go:build !amd64

package blas

func addArchKernels() {}
