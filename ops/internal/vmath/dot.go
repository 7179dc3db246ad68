package vmath

import "math"

// Dot products and multiply-adds for the covariance ops' backward passes (ops' fused CovMatrix).
//
// # Order of a dot product
//
// A reduction's bits depend on the order of its additions, so every kernel sums in one fixed order, the one
// eight-lane vectors give: for x, y of length n and n8 = n − n mod 8, lane l (l < 8) accumulates x_j·y_j over the
// j < n8 with j ≡ l (mod 8) in increasing j, by fused multiply-adds starting from +0; the lanes are combined as
//
//	((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
//
// and the tail j = n8, …, n−1 is added in order, r = fma(x_j, y_j, r). The avx512 kernel keeps one zmm
// accumulator per dot product, the avx2 kernel two ymm (lanes 0–3 and 4–7, added first), the generic kernel eight
// scalars: the same operations in the same order, so every kernel gives the same bits.

// Dot returns Σ_j x_j·y_j over j < len(x) (len(y) ≥ len(x)) in the order above.
func Dot(x, y []float64) float64 {
	y = y[:len(x)]
	n8 := len(x) &^ 7
	var r float64
	if n8 > 0 {
		switch k := sel.Active(); k {
		case generic:
			r = dotGeneric(x[:n8], y[:n8])
		default:
			var out [1]float64
			dots1Arch(k, &x[0], &y[0], n8, &out[0])
			r = out[0]
		}
	}
	for j := n8; j < len(x); j++ {
		r = math.FMA(x[j], y[j], r)
	}
	return r
}

// Dots sets out[k] = Σ_j x_j·y[k·stride + j] over j < len(x), for k < len(out), each in the order above: the dot
// products of x with len(out) rows of a row-major matrix of row stride stride.
func Dots(out, x, y []float64, stride int) {
	rows, n := len(out), len(x)
	if rows == 0 {
		return
	}
	if n == 0 {
		clear(out)
		return
	}
	_ = y[(rows-1)*stride+n-1] // bounds: every row is long enough
	n8 := n &^ 7
	k := 0
	switch kern := sel.Active(); {
	case n8 == 0:
		clear(out)
	case kern == generic:
		for ; k < rows; k++ {
			out[k] = dotGeneric(x[:n8], y[k*stride:k*stride+n8])
		}
	default:
		for ; k+4 <= rows; k += 4 {
			dots4Arch(kern, &x[0], &y[k*stride], n8, stride, &out[k])
		}
		for ; k < rows; k++ {
			dots1Arch(kern, &x[0], &y[k*stride], n8, &out[k])
		}
	}
	if n8 == n {
		return
	}
	for k := range out {
		r, yk := out[k], y[k*stride:k*stride+n]
		for j := n8; j < n; j++ {
			r = math.FMA(x[j], yk[j], r)
		}
		out[k] = r
	}
}

// dotGeneric is the generic kernel on whole vectors (len(x) a multiple of 8, len(y) = len(x)).
func dotGeneric(x, y []float64) float64 {
	y = y[:len(x)]
	var l0, l1, l2, l3, l4, l5, l6, l7 float64
	for j := 0; j+8 <= len(x); j += 8 {
		a, b := x[j:j+8:j+8], y[j:j+8:j+8]
		l0 = math.FMA(a[0], b[0], l0)
		l1 = math.FMA(a[1], b[1], l1)
		l2 = math.FMA(a[2], b[2], l2)
		l3 = math.FMA(a[3], b[3], l3)
		l4 = math.FMA(a[4], b[4], l4)
		l5 = math.FMA(a[5], b[5], l5)
		l6 = math.FMA(a[6], b[6], l6)
		l7 = math.FMA(a[7], b[7], l7)
	}
	return ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
}

// Axpys adds a[k]·x_j to y[k·stride + j] for j < len(x), k < len(a), each by one fused multiply-add (so the
// result does not depend on the kernel: there is no reduction).
func Axpys(y []float64, stride int, a, x []float64) {
	rows, n := len(a), len(x)
	if rows == 0 || n == 0 {
		return
	}
	_ = y[(rows-1)*stride+n-1]
	n8 := n &^ 7
	k := 0
	if n8 > 0 {
		if kern := sel.Active(); kern != generic {
			for ; k+4 <= rows; k += 4 {
				axpy4Arch(kern, &x[0], n8, &a[k], &y[k*stride], stride)
			}
			for ; k < rows; k++ {
				axpy1Arch(kern, &x[0], n8, a[k], &y[k*stride])
			}
			for k, ak := range a {
				axpyGeneric(y[k*stride+n8:k*stride+n], ak, x[n8:])
			}
			return
		}
	}
	for k, ak := range a {
		axpyGeneric(y[k*stride:k*stride+n], ak, x)
	}
}

// axpyGeneric sets y_j = fma(a, x_j, y_j).
func axpyGeneric(y []float64, a float64, x []float64) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] = math.FMA(a, v, y[j])
	}
}
