package vmath

import "math"

// Exp sets dst[i] = eˣ for x = src[i], i < len(src), as math.Exp does for every input (±Inf, NaN, overflow to
// +Inf, subnormal results and underflow to 0 included) but within 1 ulp (see the package documentation), with
// the same bits on every kernel. dst may be src itself (not otherwise overlapping it); it panics if
// len(dst) < len(src).
func Exp(dst, src []float64) {
	dst = dst[:len(src)]
	k := sel.Active()
	w := k.width
	if w == 0 {
		expGeneric(dst, src)
		return
	}
	n, i := len(src), 0
	for n-i >= w {
		i += expArch(k, &dst[i], &src[i], n-i)
		if n-i >= w { // the kernel stopped at a vector with a lane out of its range
			expGeneric(dst[i:i+w], src[i:i+w])
			i += w
		}
	}
	if i == n {
		return
	}
	// The tail: one vector padded with zeros (in range), unless a lane is out of range.
	var buf [maxWidth]float64
	t := copy(buf[:w], src[i:])
	if expArch(k, &buf[0], &buf[0], w) == w {
		copy(dst[i:], buf[:t])
		return
	}
	expGeneric(dst[i:], src[i:])
}

// expGeneric is the generic kernel: expReduced in [expMin, expMax], math.Exp elsewhere (and for NaN).
func expGeneric(dst, src []float64) {
	dst = dst[:len(src)]
	for i, x := range src {
		if x >= expMin && x <= expMax {
			dst[i] = expReduced(x)
		} else {
			dst[i] = math.Exp(x)
		}
	}
}

// expReduced returns eˣ for x in [expMin, expMax] by the operations every kernel runs per lane (see the package
// documentation): the vector kernels give these bits.
func expReduced(x float64) float64 {
	t := math.FMA(x, expLog2e, expShifter) // 1.5·2⁵² + k, k = round(x·log₂e)
	kf := t - expShifter
	r := math.FMA(kf, -expLn2Hi, x) // exact
	r = math.FMA(kf, -expLn2Lo, r)
	p := c13
	p = math.FMA(p, r, c12)
	p = math.FMA(p, r, c11)
	p = math.FMA(p, r, c10)
	p = math.FMA(p, r, c9)
	p = math.FMA(p, r, c8)
	p = math.FMA(p, r, c7)
	p = math.FMA(p, r, c6)
	p = math.FMA(p, r, c5)
	p = math.FMA(p, r, c4)
	p = math.FMA(p, r, c3)
	p = math.FMA(p, r, c2)
	p = math.FMA(p, r, c1)
	p = math.FMA(p, r, c0)
	// p·2ᵏ: k's low 12 bits (two's complement) added to the exponent field; p·2ᵏ is normal and finite here.
	return math.Float64frombits(math.Float64bits(p) + math.Float64bits(t)<<52)
}
