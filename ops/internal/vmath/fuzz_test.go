package vmath

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzExp: for any inputs (the bytes read as float64s, then the same values scaled into the kernels' range so
// that most lanes are vectorised), every kernel gives the generic path's bits and every result is within 2 ulp
// of math.Exp (identical to it outside [expMin, expMax]).
func FuzzExp(f *testing.F) {
	seed := func(xs ...float64) []byte {
		b := make([]byte, 8*len(xs))
		for i, x := range xs {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		return b
	}
	f.Add(seed(0, 1, -1, 700, -700, 709, -708, 710, -746, math.NaN(), math.Inf(1), math.Inf(-1), 0.5))
	f.Add(seed(-745.13, 709.78, 5e-324, math.Copysign(0, -1)))
	f.Add(seed(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
		28, 29, 30, 31, 32, 33, 34, 35))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := make([]float64, 0, len(data)/4)
		for i := 0; i+8 <= len(data); i += 8 {
			src = append(src, math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))
		}
		for _, x := range src[:len(src):len(src)] {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				src = append(src, math.Remainder(x, 1400)/2) // in [−700, 700]
			}
		}
		want := make([]float64, len(src))
		expGeneric(want, src)
		for i, x := range src {
			m := math.Exp(x)
			if x >= expMin && x <= expMax {
				if d := ulps(want[i], m); d > 2 {
					t.Fatalf("Exp(%v) = %v, math.Exp %v: %d ulp", x, want[i], m, d)
				}
			} else if math.Float64bits(want[i]) != math.Float64bits(m) {
				t.Fatalf("Exp(%v) = %v, want math.Exp's %v", x, want[i], m)
			}
		}
		got := make([]float64, len(src))
		eachKernel(t, func(name string) {
			Exp(got, src)
			for i := range src {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s: Exp(%v) = %v, generic %v", name, src[i], got[i], want[i])
				}
			}
		})
	})
}
