package vmath

// The assembly of dot_amd64.s: n, a positive multiple of 8, elements per row; out receives the dot products in
// the order of dot.go; stride is in elements.

//go:noescape
func dots1AVX2(x, y *float64, n int, out *float64)

//go:noescape
func dots4AVX2(x, y *float64, n, stride int, out *float64)

//go:noescape
func dots1AVX512(x, y *float64, n int, out *float64)

//go:noescape
func dots4AVX512(x, y *float64, n, stride int, out *float64)

//go:noescape
func axpy1AVX2(x *float64, n int, a float64, y *float64)

//go:noescape
func axpy4AVX2(x *float64, n int, a *float64, y *float64, stride int)

//go:noescape
func axpy1AVX512(x *float64, n int, a float64, y *float64)

//go:noescape
func axpy4AVX512(x *float64, n int, a *float64, y *float64, stride int)

// dots1Arch writes the dot product of x and y (n elements) into out with kernel k's assembly.
func dots1Arch(k *kernel, x, y *float64, n int, out *float64) {
	if k == avx512Kernel {
		dots1AVX512(x, y, n, out)
	} else {
		dots1AVX2(x, y, n, out)
	}
}

// dots4Arch writes the dot products of x with the four rows y, y+stride, … (n elements) into out[0:4].
func dots4Arch(k *kernel, x, y *float64, n, stride int, out *float64) {
	if k == avx512Kernel {
		dots4AVX512(x, y, n, stride, out)
	} else {
		dots4AVX2(x, y, n, stride, out)
	}
}

// axpy1Arch sets y_j = fma(a, x_j, y_j) for j < n.
func axpy1Arch(k *kernel, x *float64, n int, a float64, y *float64) {
	if k == avx512Kernel {
		axpy1AVX512(x, n, a, y)
	} else {
		axpy1AVX2(x, n, a, y)
	}
}

// axpy4Arch does axpy1Arch for the four rows y, y+stride, … with the four coefficients a[0:4].
func axpy4Arch(k *kernel, x *float64, n int, a *float64, y *float64, stride int) {
	if k == avx512Kernel {
		axpy4AVX512(x, n, a, y, stride)
	} else {
		axpy4AVX2(x, n, a, y, stride)
	}
}

//go:noescape
func sqdistAVX2(out, a *float64, d int, y *float64, stride, n int)

//go:noescape
func sqdistAVX512(out, a *float64, d int, y *float64, stride, n int)

// sqdistArch runs SqDists on n entries (a multiple of k's width) with kernel k's assembly.
func sqdistArch(k *kernel, out, a *float64, d int, y *float64, stride, n int) {
	if k == avx512Kernel {
		sqdistAVX512(out, a, d, y, stride, n)
	} else {
		sqdistAVX2(out, a, d, y, stride, n)
	}
}

//go:noescape
func scaleAVX2(dst *float64, a float64, x *float64, n int)

//go:noescape
func scaleAVX512(dst *float64, a float64, x *float64, n int)

//go:noescape
func mulScaleAVX2(dst *float64, a float64, x, y *float64, n int)

//go:noescape
func mulScaleAVX512(dst *float64, a float64, x, y *float64, n int)

// scaleArch runs Scale on n elements (a multiple of 8) with kernel k's assembly.
func scaleArch(k *kernel, dst *float64, a float64, x *float64, n int) {
	if k == avx512Kernel {
		scaleAVX512(dst, a, x, n)
	} else {
		scaleAVX2(dst, a, x, n)
	}
}

// mulScaleArch runs MulScale on n elements (a multiple of 8) with kernel k's assembly.
func mulScaleArch(k *kernel, dst *float64, a float64, x, y *float64, n int) {
	if k == avx512Kernel {
		mulScaleAVX512(dst, a, x, y, n)
	} else {
		mulScaleAVX2(dst, a, x, y, n)
	}
}
