package vmath

import "math"

// SqDists sets out[j] = Σ_k (y[k·stride + j] − a[k])² for j < len(out), k < len(a): the squared distances of the
// point a to the columns of the row-major matrix y [len(a), stride] (the points stored transposed). Each term is
// one subtraction and one fused multiply-add, r = fma(t, t, r) for k in order from r = +0, so an entry is ≥ 0
// and exactly 0 when the points coincide, and every kernel gives the same bits (there is no reduction across
// lanes).
func SqDists(out, a, y []float64, stride int) {
	n, d := len(out), len(a)
	if n == 0 {
		return
	}
	if d == 0 {
		clear(out)
		return
	}
	_ = y[(d-1)*stride+n-1] // bounds: every row is long enough
	j := 0
	if k := sel.Active(); k != generic && n >= k.width {
		j = n - n%k.width
		sqdistArch(k, &out[0], &a[0], d, &y[0], stride, j)
	}
	for ; j < n; j++ {
		r := 0.0
		for k, ak := range a {
			t := y[k*stride+j] - ak
			r = math.FMA(t, t, r)
		}
		out[j] = r
	}
}
