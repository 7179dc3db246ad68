package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refDot is the order of dot.go written out plainly: eight lanes over the whole vectors, combined as
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)), then the tail in order.
func refDot(x, y []float64) float64 {
	n8 := len(x) &^ 7
	var l [8]float64
	for j := 0; j < n8; j++ {
		l[j%8] = math.FMA(x[j], y[j], l[j%8])
	}
	r := ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
	for j := n8; j < len(x); j++ {
		r = math.FMA(x[j], y[j], r)
	}
	return r
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20))
	}
	return v
}

// Every kernel gives the reference order's bits: Dot and Dots (1 to 9 rows, so that both the four-row and the
// one-row assembly run, strides longer than the rows) at every length 0–70 and every alignment of the start, and
// at 1024 and 1031.
func TestDotsKernelsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const stride = 1100
	x, y := randVec(rng, 1040), randVec(rng, 9*stride+8)
	lengths := []int{1024, 1031}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	eachKernel(t, func(name string) {
		for _, n := range lengths {
			for start := 0; start < 8; start++ {
				xs := x[start : start+n]
				if got, want := Dot(xs, y[start:]), refDot(xs, y[start:start+n]); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s: Dot, n = %d, start %d: %v, reference %v", name, n, start, got, want)
				}
				for rows := 1; rows <= 9; rows++ {
					out := make([]float64, rows)
					Dots(out, xs, y[start:], stride)
					for k := range out {
						yk := y[start+k*stride : start+k*stride+n]
						if want := refDot(xs, yk); math.Float64bits(out[k]) != math.Float64bits(want) {
							t.Fatalf("%s: Dots row %d of %d, n = %d, start %d: %v, reference %v", name, k, rows, n, start, out[k], want)
						}
					}
				}
			}
		}
	})
}

// Dot is a dot product: exact on small integers, close to the exact sum otherwise.
func TestDotValues(t *testing.T) {
	eachKernel(t, func(name string) {
		for n := 0; n < 100; n++ {
			x, y := make([]float64, n), make([]float64, n)
			want := 0.0
			for j := range x {
				x[j], y[j] = float64(j%7-3), float64(j%5+1)
				want += x[j] * y[j]
			}
			if got := Dot(x, y); got != want {
				t.Fatalf("%s: n = %d: Dot = %v, want %v", name, n, got, want)
			}
		}
		rng := rand.New(rand.NewPCG(5, 6))
		x, y := randVec(rng, 777), randVec(rng, 777)
		exact, abs := 0.0, 0.0
		for j := range x { // compensated reference
			exact += x[j] * y[j]
			abs += math.Abs(x[j] * y[j])
		}
		if got := Dot(x, y); math.Abs(got-exact) > 1e-13*abs {
			t.Fatalf("%s: Dot = %v, sum %v", name, got, exact)
		}
	})
}

// Axpys is one fused multiply-add per element on every kernel: rows 1–9, lengths 0–70 and 1031, every alignment;
// the rows' elements beyond n are left alone.
func TestAxpysKernelsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const stride = 1100
	x, y0, a := randVec(rng, 1040), randVec(rng, 9*stride+8), randVec(rng, 9)
	lengths := []int{1031}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	eachKernel(t, func(name string) {
		for _, n := range lengths {
			for start := 0; start < 8; start++ {
				for rows := 1; rows <= 9; rows++ {
					y := append([]float64(nil), y0...)
					Axpys(y[start:], stride, a[:rows], x[start:start+n])
					for i := range y {
						want := y0[i]
						if k, j := (i-start)/stride, (i-start)%stride; i >= start && k < rows && j < n {
							want = math.FMA(a[k], x[start+j], y0[i])
						}
						if math.Float64bits(y[i]) != math.Float64bits(want) {
							t.Fatalf("%s: rows %d, n = %d, start %d: y[%d] = %v, want %v", name, rows, n, start, i, y[i], want)
						}
					}
				}
			}
		}
	})
}

// SqDists gives the plain loop's bits on every kernel (d = 1…20, lengths 0–70 and 1031, every alignment), is
// exactly 0 for coincident points and never negative.
func TestSqDistsKernelsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const stride = 1100
	y, a := randVec(rng, 20*stride+8), randVec(rng, 20)
	lengths := []int{1031}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	eachKernel(t, func(name string) {
		for d := 1; d <= 20; d++ {
			for _, n := range lengths {
				for start := 0; start < 8; start += 3 {
					out := make([]float64, n)
					SqDists(out, a[:d], y[start:], stride)
					for j := range out {
						want := 0.0
						for k := 0; k < d; k++ {
							t := y[start+k*stride+j] - a[k]
							want = math.FMA(t, t, want)
						}
						if math.Float64bits(out[j]) != math.Float64bits(want) {
							t.Fatalf("%s: d = %d, n = %d, start %d: out[%d] = %v, want %v", name, d, n, start, j, out[j], want)
						}
					}
				}
			}
		}
		// coincident: a equal to column 5
		d, n := 7, 40
		pt := make([]float64, d)
		for k := range pt {
			pt[k] = y[k*stride+5]
		}
		out := make([]float64, n)
		SqDists(out, pt, y, stride)
		if math.Float64bits(out[5]) != 0 {
			t.Fatalf("%s: coincident point: %v", name, out[5])
		}
		for j, v := range out {
			if !(v >= 0) {
				t.Fatalf("%s: out[%d] = %v", name, j, v)
			}
		}
	})
}

// Scale and MulScale give the Go expressions' bits on every kernel, at every length 0–70 and 1031 and every
// alignment, in place too.
func TestScaleKernelsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x, y := randVec(rng, 1040), randVec(rng, 1040)
	lengths := []int{1031}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	const a = -0.37
	eachKernel(t, func(name string) {
		for _, n := range lengths {
			for start := 0; start < 8; start++ {
				xs, ys := x[start:start+n], y[start:start+n]
				got := make([]float64, n)
				Scale(got, a, xs)
				for i := range got {
					if want := a * xs[i]; math.Float64bits(got[i]) != math.Float64bits(want) {
						t.Fatalf("%s: Scale n = %d start %d: [%d] = %v, want %v", name, n, start, i, got[i], want)
					}
				}
				MulScale(got, a, xs, ys)
				for i := range got {
					if want := a * xs[i] * ys[i]; math.Float64bits(got[i]) != math.Float64bits(want) {
						t.Fatalf("%s: MulScale n = %d start %d: [%d] = %v, want %v", name, n, start, i, got[i], want)
					}
				}
				in := append([]float64(nil), xs...)
				MulScale(in, a, in, ys)
				Scale(in, a, in)
				for i := range in {
					if want := a * (a * xs[i] * ys[i]); math.Float64bits(in[i]) != math.Float64bits(want) {
						t.Fatalf("%s: in place n = %d: [%d] = %v, want %v", name, n, i, in[i], want)
					}
				}
			}
		}
	})
}
