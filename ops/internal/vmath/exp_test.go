package vmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/ops/internal/cpusel"
)

// GPZOO_BLAS chose the kernel at start-up, as it chooses ops/internal/blas's (ops/internal/cpusel's TestEnv runs the
// choice in subprocesses): GPZOO_BLAS=generic go test runs every test below on the generic path.
func TestKernelEnv(t *testing.T) {
	if want := cpusel.Choice(Kernels()); EnvKernel != cpusel.Env || Kernel() != want {
		t.Errorf("Kernel() = %q, want %q of %q (%s)", Kernel(), want, Kernels(), EnvKernel)
	}
}

// eachKernel runs fn with every kernel this CPU runs forced in turn, then restores the kernel in use.
func eachKernel(t testing.TB, fn func(name string)) {
	t.Helper()
	prev := Kernel()
	defer SetKernel(prev)
	for _, name := range Kernels() {
		if !SetKernel(name) {
			t.Fatalf("SetKernel(%q) = false for a listed kernel", name)
		}
		fn(name)
	}
}

// ulps returns the distance in units in the last place between two results of exp (non-negative or NaN):
// 0 when both are NaN or equal, MaxUint64 when only one is NaN.
func ulps(a, b float64) uint64 {
	switch {
	case math.IsNaN(a) && math.IsNaN(b), a == b:
		return 0
	case math.IsNaN(a) || math.IsNaN(b):
		return math.MaxUint64
	}
	ba, bb := math.Float64bits(a), math.Float64bits(b)
	if ba > bb {
		return ba - bb
	}
	return bb - ba
}

// specials are the inputs at the edges: zeros, tiny and huge magnitudes, the kernels' range limits and their
// neighbours, subnormal and zero results, overflow, infinities and NaN.
func specials() []float64 {
	xs := []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 1e-300, -1e-300, 1e-17, -1e-17, 0x1p-53, -0x1p-53,
		1, -1, math.Ln2 / 2, -math.Ln2 / 2, math.Ln2, -math.Ln2, 0.5, -0.5, 1.5, -1.5, 100.5 * math.Ln2,
		expMin, expMax, math.Nextafter(expMin, -1000), math.Nextafter(expMax, 1000),
		math.Nextafter(expMin, 0), math.Nextafter(expMax, 0),
		-708.3964185322641, -708.4, -708.5, -709, -709.0895657128241, -720, -730, -740, -744, -744.44,
		-745, -745.1332191019411, -745.1332191019412, -745.14, -745.2, -746, -1000, -1e300, -math.MaxFloat64,
		709.5, 709.78, 709.782712893384, 709.7827128933841, 709.79, 710, 1000, 1e300, math.MaxFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0000000000001),
		math.Float64frombits(0xfff8000000000123)}
	for x := -708.0; x >= -745.5; x -= 0.25 {
		xs = append(xs, x)
	}
	for x := 709.0; x <= 710.25; x += 0.0625 {
		xs = append(xs, x)
	}
	return xs
}

// sameBits reports the first index where the kernels' results differ from the generic path's.
func checkBits(t *testing.T, name string, src []float64) {
	t.Helper()
	want := make([]float64, len(src))
	expGeneric(want, src)
	got := make([]float64, len(src))
	Exp(got, src)
	for i := range src {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: Exp(%v) = %v (%#016x), generic %v (%#016x) (index %d of %d)", name, src[i], got[i],
				math.Float64bits(got[i]), want[i], math.Float64bits(want[i]), i, len(src))
		}
	}
}

// Every kernel gives the generic path's bits: random inputs over the whole interesting range, the specials
// (alone, and scattered among in-range values so that the kernels stop and resume), every length 0–40 at
// every alignment of the start.
func TestExpKernelsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	random := make([]float64, n)
	for i := range random {
		random[i] = -745 + 1455*rng.Float64()
	}
	sp := specials()
	mixed := make([]float64, 0, 40*len(sp))
	for _, x := range sp {
		for j := rng.IntN(37); j > 0; j-- {
			mixed = append(mixed, 20*rng.Float64()-10)
		}
		mixed = append(mixed, x)
	}
	eachKernel(t, func(name string) {
		checkBits(t, name, random)
		checkBits(t, name, sp)
		checkBits(t, name, mixed)
		for length := 0; length <= 40; length++ {
			for start := 0; start < 8; start++ {
				checkBits(t, name, random[start:start+length])
				checkBits(t, name, mixed[start:start+length])
			}
		}
	})
}

// The specials against math.Exp: identical outside the kernels' range (math.Exp computes them), within 1 ulp
// inside it.
func TestExpSpecials(t *testing.T) {
	sp := specials()
	eachKernel(t, func(name string) {
		got := make([]float64, len(sp))
		Exp(got, sp)
		for i, x := range sp {
			want := math.Exp(x)
			if x >= expMin && x <= expMax {
				if d := ulps(got[i], want); d > 1 {
					t.Errorf("%s: Exp(%v) = %v, math.Exp %v: %d ulp", name, x, got[i], want, d)
				}
				continue
			}
			if math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Errorf("%s: Exp(%v) = %v, want math.Exp's %v", name, x, got[i], want)
			}
		}
	})
}

// maxULPs returns the largest distance to math.Exp over lo, lo+step, … ≤ hi, and its input.
func maxULPs(lo, hi, step float64) (worst uint64, at float64) {
	const chunk = 4096
	src, dst := make([]float64, chunk), make([]float64, chunk)
	for i0 := 0; ; i0 += chunk {
		n := 0
		for ; n < chunk; n++ {
			x := lo + float64(i0+n)*step
			if x > hi {
				break
			}
			src[n] = x
		}
		Exp(dst[:n], src[:n])
		for i, x := range src[:n] {
			if d := ulps(dst[i], math.Exp(x)); d > worst {
				worst, at = d, x
			}
		}
		if n < chunk {
			return worst, at
		}
	}
}

// The error against math.Exp is at most 2 ulp (1 ulp measured) over dense sweeps of [−700, 700] and [−1, 1].
func TestExpULP(t *testing.T) {
	steps := [2]float64{1e-4, 1e-7}
	if testing.Short() {
		steps = [2]float64{1e-2, 1e-5}
	}
	// Only the generic path: the kernels give its bits (TestExpKernelsBitwise).
	prev := Kernel()
	defer SetKernel(prev)
	SetKernel("generic")
	for i, r := range [][2]float64{{-700, 700}, {-1, 1}} {
		worst, at := maxULPs(r[0], r[1], steps[i])
		t.Logf("[%v, %v] step %v: max %d ulp vs math.Exp (at %v)", r[0], r[1], steps[i], worst, at)
		if worst > 2 {
			t.Errorf("[%v, %v]: %d ulp from math.Exp at %v", r[0], r[1], worst, at)
		}
	}
}

// dst may be src itself.
func TestExpAlias(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 1000)
	for i := range src {
		src[i] = -745 + 1455*rng.Float64()
	}
	src[500], src[7] = math.NaN(), math.Inf(1)
	eachKernel(t, func(name string) {
		want := make([]float64, len(src))
		Exp(want, src)
		v := append([]float64(nil), src...)
		Exp(v, v)
		for i := range v {
			if math.Float64bits(v[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s: in place, Exp(%v) = %v, want %v", name, src[i], v[i], want[i])
			}
		}
	})
}

// A dst shorter than src panics; a longer one is written only up to len(src).
func TestExpLengths(t *testing.T) {
	eachKernel(t, func(name string) {
		dst := []float64{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
		Exp(dst, make([]float64, 9))
		for i, v := range dst {
			if want := map[bool]float64{true: 1, false: -1}[i < 9]; v != want {
				t.Errorf("%s: dst[%d] = %v, want %v", name, i, v, want)
			}
		}
		defer func() {
			if recover() == nil {
				t.Errorf("%s: Exp with len(dst) < len(src) did not panic", name)
			}
		}()
		Exp(make([]float64, 3), make([]float64, 4))
	})
}
