package vmath

// Scale sets dst[i] = a·x[i] for i < len(x) (dst may be x itself); MulScale sets dst[i] = (a·x[i])·y[i]. Each
// element is rounded as the plain Go expression rounds it, so every kernel gives the same bits.
func Scale(dst []float64, a float64, x []float64) {
	dst = dst[:len(x)]
	i := 0
	if k := sel.Active(); k != generic && len(x) >= 8 {
		i = len(x) &^ 7
		scaleArch(k, &dst[0], a, &x[0], i)
	}
	for ; i < len(x); i++ {
		dst[i] = a * x[i]
	}
}

// MulScale sets dst[i] = (a·x[i])·y[i] for i < len(x) (len(y) ≥ len(x); dst may be x or y).
func MulScale(dst []float64, a float64, x, y []float64) {
	dst, y = dst[:len(x)], y[:len(x)]
	i := 0
	if k := sel.Active(); k != generic && len(x) >= 8 {
		i = len(x) &^ 7
		mulScaleArch(k, &dst[0], a, &x[0], &y[0], i)
	}
	for ; i < len(x); i++ {
		dst[i] = a * x[i] * y[i]
	}
}
