package ops_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
)

// Golden values: unless stated otherwise they were computed with mpmath 1.3 at 60 significant digits
// (mp.dps = 60), from the defining formulas log(1 + exp(x)), log(erfc(−x/√2)/2), npdf(x)/ncdf(x) and
// log(Σ exp(xᵢ)), and rounded to 20+ digits here. Values that underflow or round to the argument are the
// correctly rounded float64 of the mpmath value (e.g. log(1+e^−1000) ≈ 5.1e−435 rounds to 0; 1000 + e^−1000
// rounds to 1000; log Φ(1000) ≈ −1e−217000 rounds to 0).

// ewGoldenTol is the relative tolerance against the golden values: a few ulps.
const ewGoldenTol = 4e-15

var ewSoftplusGolden = []struct{ x, want float64 }{
	{-1000, 0},
	{-40, 4.248354255291588986304978e-18},
	{-37, 8.533047625744065430213541e-17},
	{-20, 2.061153620314380703238983e-9},
	{-1, 0.3132616875182228340489955},
	{0, 0.6931471805599453094172321}, // log 2
	{1, 1.313261687518222834048995},
	{18, 18.00000001522997962873649},
	{20, 20.00000000206115362031438},
	{35, 35.00000000000000063051168},
	{1000, 1000},
}

func TestSoftplusFloatGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range ewSoftplusGolden {
		for name, f := range map[string]func(float64) float64{"SoftplusFloat": ops.SoftplusFloat, "Log1pExp": ops.Log1pExp} {
			got := f(tc.x)
			if math.IsNaN(got) || math.IsInf(got, 0) {
				t.Errorf("%s(%v) = %v", name, tc.x, got)
				continue
			}
			ewClose(t, name, []float64{got}, []float64{tc.want}, ewGoldenTol)
		}
	}
	if got := ops.SoftplusFloat(math.Inf(1)); !math.IsInf(got, 1) {
		t.Errorf("SoftplusFloat(+Inf) = %v", got)
	}
	if got := ops.SoftplusFloat(math.Inf(-1)); got != 0 {
		t.Errorf("SoftplusFloat(−Inf) = %v", got)
	}
}

// ewLogPhiGolden: log Φ(x) and its derivative φ(x)/Φ(x).
var ewLogPhiGolden = []struct{ x, logPhi, dLogPhi float64 }{
	{-1000, -500007.8266948121843098062, 1000.000999998000009999926},
	{-100, -5005.524208694205088626302, 100.0099980009992607051849},
	{-40, -804.6084420137537881666068, 40.02496884720726372324487},
	{-38, -726.5572160188201300965035, 38.02627946657586898752219},
	{-30, -454.3212439563431971073558, 30.03325966743367703707112},
	{-20.5, -214.0667289632638001665304, 20.54855105243584881575249},
	{-20, -203.9171553710972639368045, 20.04975306852785054221402},
	{-19.5, -194.016965777497499407603, 19.55101580258062076416295},
	{-10, -53.23128515051247057834703, 10.09809323396251196284364},
	{-7, -27.38430749881107524263012, 7.137545613226503276494142},
	{-5, -15.0649983939887257360837, 5.186503967125842115616509},
	{-3.5, -8.366065308344092934972103, 3.751391264857699731314883},
	{-2.5, -5.081648277278690498380462, 2.822744797663907250474384},
	{-1, -1.841021645009263505770783, 1.525135276160981209089091},
	{0, -0.6931471805599453094172321, 0.7978845608028653558798921}, // −log 2, √(2/π)
	{1, -0.1727537790234498895264832, 0.2875999709391783612286701},
	{2.5, -0.006229025485860002380986091, 0.01763782548691673478796277},
	{3, -0.00135080996474819379884111, 0.004437839042125663793302104},
	{3.5, -0.000232656141376804552181341, 0.0008728857536547359970182954},
	{5, -2.866516129637635933845963e-7, 1.486719940904905712441744e-6},
	{8, -6.220960574271786058533519e-16, 5.052271083536895430948107e-15},
	{1000, 0, 0},
}

func TestLogPhiFloatGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range ewLogPhiGolden {
		got := ops.LogPhiFloat(tc.x)
		if math.IsNaN(got) || math.IsInf(got, 0) {
			t.Errorf("LogPhiFloat(%v) = %v", tc.x, got)
			continue
		}
		ewClose(t, "LogPhiFloat", []float64{got}, []float64{tc.logPhi}, ewGoldenTol)
		// The derivative through the graph op (the plain function is unexported).
		d := ewGradAt(t, ops.LogPhi, []float64{tc.x})
		ewClose(t, "LogPhi′", d, []float64{tc.dLogPhi}, ewGoldenTol)
	}
	// Continuity at the branch switches (−20 for the value, ±3 inside the derivative and Φ's tail): the value just
	// past the switch matches the first-order extrapolation from the switch point to a few ulps.
	for _, x0 := range []float64{-20, -3, 3} {
		for _, dir := range []float64{-1, 1} {
			x1 := math.Nextafter(x0, dir*math.Inf(1))
			a, b := ops.LogPhiFloat(x1), ops.LogPhiFloat(x0)
			d := ewGradAt(t, ops.LogPhi, []float64{x0})[0]
			if want := b + d*(x1-x0); math.Abs(a-want) > ewGoldenTol*math.Abs(want) {
				t.Errorf("LogPhiFloat jumps at %v: %.17g, extrapolated %.17g", x0, a, want)
			}
			da := ewGradAt(t, ops.LogPhi, []float64{x1})[0]
			if math.Abs(da-d) > ewGoldenTol*math.Abs(d) {
				t.Errorf("LogPhi′ jumps at %v: %.17g vs %.17g", x0, da, d)
			}
		}
	}
}

func TestLogSumExp(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"1,2,3", []float64{1, 2, 3}, 3.40760596444438030448292},              // mpmath
		{"−40,0", []float64{-40, 0}, 4.248354255291588986304978e-18},          // = log(1+e^−40), mpmath
		{"1000,1000", []float64{1000, 1000}, 1000.693147180559945309417},      // 1000 + log 2
		{"−1000,−1000", []float64{-1000, -1000}, -999.3068528194400546905828}, // −1000 + log 2
		{"1000,−1000", []float64{1000, -1000}, 1000},                          // 1000 + log(1+e^−2000) rounds to 1000
		{"single", []float64{-1e3}, -1e3},
		{"−Inf,0", []float64{-inf, 0}, 0},
		{"all −Inf", []float64{-inf, -inf}, -inf},
		{"empty", nil, -inf},
		{"+Inf", []float64{1, inf}, inf},
		{"+Inf,−Inf", []float64{-inf, inf}, inf},
		{"NaN", []float64{1, math.NaN()}, math.NaN()},
	} {
		got := ops.LogSumExp(tc.xs)
		ewClose(t, "LogSumExp "+tc.name, []float64{got}, []float64{tc.want}, ewGoldenTol)
	}
}

func TestSoftplusInverse(t *testing.T) {
	t.Parallel()
	// Golden inverses (mpmath: log(exp(z) − 1)).
	for _, tc := range []struct{ y, floor, want float64 }{
		{1e-10, 0, -23.0258509298904568401795},
		{2, 0, 1.854586542131140943027352},
		{40, 0, 39.99999999999999999575165},
		{2.5, 0.5, 1.854586542131140943027352},
	} {
		got, err := ops.SoftplusInverse(tc.y, tc.floor)
		if err != nil {
			t.Fatal(err)
		}
		ewClose(t, "SoftplusInverse", []float64{got}, []float64{tc.want}, ewGoldenTol)
	}
	// Round trips over a wide range, including the tails of softplus.
	for _, x := range []float64{-40, -20, -3, -1e-8, 0, 0.7, 5, 30, 700} {
		for _, floor := range []float64{0, 1e-6} {
			y := ops.SoftplusFloat(x) + floor
			back, err := ops.SoftplusInverse(y, floor)
			if err != nil {
				t.Fatalf("SoftplusInverse(%v, %v): %v", y, floor, err)
			}
			tol := 1e-12 * math.Max(1, math.Abs(x))
			if floor > 0 && x < -10 {
				tol = math.Inf(1) // y − floor loses the tiny softplus value to rounding: only finiteness matters
			}
			if math.IsNaN(back) || math.IsInf(back, 0) || math.Abs(back-x) > tol {
				t.Errorf("SoftplusInverse(SoftplusFloat(%v)+%v) = %v", x, floor, back)
			}
		}
	}
	for _, tc := range []struct{ y, floor float64 }{{0, 0}, {-1, 0}, {0.5, 0.5}, {0.4, 0.5}, {math.NaN(), 0}, {math.Inf(1), 0}, {1, math.NaN()}} {
		if got, err := ops.SoftplusInverse(tc.y, tc.floor); err == nil {
			t.Errorf("SoftplusInverse(%v, %v) = %v, want an error", tc.y, tc.floor, got)
		}
	}
	if _, err := ops.SoftplusInverse(math.NaN(), 0); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("SoftplusInverse(NaN): error %v, want ErrNonFinite", err)
	}
}

// TestStableNonFinite: infinite arguments give the limits, NaN gives NaN, and nothing hangs or panics.
func TestStableNonFinite(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	ewClose(t, "LogPhiFloat(±Inf)", []float64{ops.LogPhiFloat(-inf), ops.LogPhiFloat(inf)}, []float64{-inf, 0}, 0)
	ewClose(t, "LogPhi′(±Inf)", ewGradAt(t, ops.LogPhi, []float64{-inf, inf}), []float64{inf, 0}, 0)
	if v := ops.LogPhiFloat(math.NaN()); !math.IsNaN(v) {
		t.Errorf("LogPhiFloat(NaN) = %v", v)
	}
	ewClose(t, "Log1pExp(±Inf)", []float64{ops.Log1pExp(-inf), ops.Log1pExp(inf)}, []float64{0, inf}, 0)
}
