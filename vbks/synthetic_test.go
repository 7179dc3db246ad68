package vbks

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// appE1 holds the hyperparameters of one true kernel as printed in App. E.1 of Teng et al. (2020).
type appE1 struct {
	perLS, rqLS, linScale float64
	sum                   bool // (PER+RQ)×LIN rather than PER×LIN×RQ
}

var appE1Truths = map[string]appE1{
	TruthPerRQLin: {perLS: 2, rqLS: 3, linScale: 5, sum: true},
	TruthPerLinRQ: {perLS: 1, rqLS: 8, linScale: 3},
}

// eval is the App. E.1 formula written out by hand, independent of package gp.
func (h appE1) eval(x, xp float64) float64 {
	s := math.Sin(math.Pi * math.Abs(x-xp) / (2 * math.Pi))
	per := 0.1 * 0.1 * math.Exp(-2*s*s/(h.perLS*h.perLS))
	rq := 0.1 * 0.1 * math.Pow(1+(x-xp)*(x-xp)/(2*1*h.rqLS*h.rqLS), -1)
	lin := x * xp / (h.linScale * h.linScale)
	if h.sum {
		return (per + rq) * lin
	}
	return per * lin * rq
}

func TestTruths(t *testing.T) {
	got := Truths()
	if len(got) != 2 || got[0] != TruthPerLinRQ || got[1] != TruthPerRQLin {
		t.Fatalf("Truths() = %q, want [%q %q]", got, TruthPerLinRQ, TruthPerRQLin)
	}
	for _, name := range got {
		if _, ok := appE1Truths[name]; !ok {
			t.Errorf("Truths() contains %q, which has no App. E.1 entry in this test", name)
		}
	}
}

func TestTrueKernelMatchesAppE1(t *testing.T) {
	t.Parallel()
	// Points spread over the paper's domain [−10, 10], one near a whole period 2π from another, one at 0.
	pts := []float64{-9.7, -6.2, -3.1, -0.4, 0, 0.9, 2.5, 2.5 + 2*math.Pi, 7.3, 10}
	x := mat.NewDense(len(pts), 1, pts)
	for _, truth := range Truths() {
		t.Run(truth, func(t *testing.T) {
			t.Parallel()
			k, err := TrueKernel(truth)
			if err != nil {
				t.Fatal(err)
			}
			if k.InputDim() != 1 {
				t.Fatalf("InputDim = %d, want 1", k.InputDim())
			}
			km, err := gp.KernelMatrix(k, x, x)
			if err != nil {
				t.Fatal(err)
			}
			h := appE1Truths[truth]
			for i, a := range pts {
				for j, b := range pts {
					got, want := km.At(i, j), h.eval(a, b)
					// 1e-12 relative: the formulas are the same up to rounding; the absolute floor 1e-300 only
					// matters for the exact zeros of the LIN factor at x = 0.
					if math.Abs(got-want) > 1e-12*math.Abs(want)+1e-300 {
						t.Errorf("k(%v, %v) = %.17g, want %.17g (App. E.1)", a, b, got, want)
					}
				}
			}
		})
	}
}

func TestTrueKernelUnknown(t *testing.T) {
	for _, name := range []string{"", "SE", "PER*RQ*LIN", "per*lin*rq"} {
		if k, err := TrueKernel(name); !errors.Is(err, ErrUnknownTruth) || k != nil {
			t.Errorf("TrueKernel(%q) = %v, %v; want nil and ErrUnknownTruth", name, k, err)
		}
	}
}

func TestGenerateShapesAndDomain(t *testing.T) {
	t.Parallel()
	for _, c := range []Synthetic{
		{Truth: TruthPerLinRQ, NPrior: 40, N: 50, Seed: 3},
		{Truth: TruthPerRQLin, NPrior: 25, N: 60, NTest: 15, Low: -3, High: 5, Seed: 4},
		{Truth: TruthPerRQLin, NPrior: 25, N: 30, Low: 0, High: 2, Seed: 5}, // Low = 0 used as given
	} {
		x, y, xt, yt, err := c.Generate()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		low, high := c.Low, c.High
		if low == 0 && high == 0 {
			low, high = DefaultSyntheticLow, DefaultSyntheticHigh
		}
		checkSet := func(name string, x, y *mat.Dense, n int) {
			if r, cols := x.Dims(); r != n || cols != 1 {
				t.Errorf("%+v: %s x is %d×%d, want %d×1", c, name, r, cols, n)
			}
			if r, cols := y.Dims(); r != n || cols != 1 {
				t.Errorf("%+v: %s y is %d×%d, want %d×1", c, name, r, cols, n)
			}
			for i := 0; i < n; i++ {
				if v := x.At(i, 0); !(v >= low && v <= high) {
					t.Errorf("%+v: %s x[%d] = %v outside [%v, %v]", c, name, i, v, low, high)
				}
				if v := y.At(i, 0); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%+v: %s y[%d] = %v", c, name, i, v)
				}
			}
		}
		checkSet("training", x, y, c.N)
		if c.NTest == 0 {
			if xt != nil || yt != nil {
				t.Errorf("%+v: NTest = 0 gave a test set", c)
			}
		} else {
			checkSet("test", xt, yt, c.NTest)
		}
	}
}

func TestGenerateDefaultSizes(t *testing.T) {
	t.Parallel()
	x, y, _, _, err := Synthetic{Truth: TruthPerRQLin, Seed: 11}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := x.Dims(); r != DefaultSyntheticN {
		t.Errorf("default N: %d rows, want %d", r, DefaultSyntheticN)
	}
	if r, _ := y.Dims(); r != DefaultSyntheticN {
		t.Errorf("default N: %d outputs, want %d", r, DefaultSyntheticN)
	}
	minX, maxX := mat.Min(x), mat.Max(x)
	// 1000 uniform draws on [−10, 10]: the extremes are within 0.5 of the ends with probability 1 − 2·0.975¹⁰⁰⁰.
	if minX < -10 || maxX > 10 || minX > -9.5 || maxX < 9.5 {
		t.Errorf("default domain: inputs span [%v, %v], want about [−10, 10]", minX, maxX)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	t.Parallel()
	c := Synthetic{Truth: TruthPerLinRQ, NPrior: 64, N: 100, NTest: 20, Seed: 42}
	x1, y1, xt1, yt1, err := c.Generate()
	if err != nil {
		t.Fatal(err)
	}
	x2, y2, xt2, yt2, err := c.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string][2]*mat.Dense{"x": {x1, x2}, "y": {y1, y2}, "xTest": {xt1, xt2}, "yTest": {yt1, yt2}} {
		if !bitEqual(p[0], p[1]) {
			t.Errorf("same seed: %s differs between two runs", name)
		}
	}
	c.Seed = 43
	x3, y3, _, _, err := c.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if bitEqual(x1, x3) || bitEqual(y1, y3) {
		t.Errorf("seeds 42 and 43 gave the same data")
	}
}

func TestGenerateTestSetDoesNotChangeTraining(t *testing.T) {
	t.Parallel()
	for _, truth := range Truths() {
		base := Synthetic{Truth: truth, NPrior: 50, N: 80, Seed: 7}
		x0, y0, xt0, yt0, err := base.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if xt0 != nil || yt0 != nil {
			t.Fatalf("%s: NTest = 0 gave a test set", truth)
		}
		withTest := base
		withTest.NTest = 30
		x1, y1, xt1, yt1, err := withTest.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if !bitEqual(x0, x1) || !bitEqual(y0, y1) {
			t.Errorf("%s: NTest = 30 changed the training set", truth)
		}
		if r, _ := xt1.Dims(); r != 30 {
			t.Fatalf("%s: %d test inputs, want 30", truth, r)
		}
		if r, _ := yt1.Dims(); r != 30 {
			t.Fatalf("%s: %d test outputs, want 30", truth, r)
		}
		// The test inputs are fresh draws, not copies of the training inputs.
		if xt1.At(0, 0) == x1.At(0, 0) || xt1.At(0, 0) == x1.At(79, 0) {
			t.Errorf("%s: the first test input %v repeats a training input", truth, xt1.At(0, 0))
		}
	}
}

// TestGenerateIsPosteriorMean replays the documented draw order (D0, z, ε, D1, test inputs) with the documented
// generator, builds the matrices from the hand-written App. E.1 formula, and recomputes eq. (1) with a plain LU
// solve, independently of the Cholesky path of Generate.
func TestGenerateIsPosteriorMean(t *testing.T) {
	t.Parallel()
	for _, truth := range Truths() {
		for _, noise := range []float64{0, 3e-4} {
			c := Synthetic{Truth: truth, NPrior: 30, N: 20, NTest: 10, Seed: 2024, NoiseVariance: noise}
			x, y, xt, yt, err := c.Generate()
			if err != nil {
				t.Fatal(err)
			}
			h := appE1Truths[truth]
			rng := rand.New(rand.NewPCG(c.Seed, SyntheticPCGStream))
			uniform := func(n int) []float64 {
				u := make([]float64, n)
				for i := range u {
					u[i] = -10 + 20*rng.Float64()
				}
				return u
			}
			x0 := uniform(c.NPrior)
			k00 := mat.NewSymDense(c.NPrior, nil)
			meanDiag := 0.0
			for i, a := range x0 {
				for j, b := range x0 {
					k00.SetSym(i, j, h.eval(a, b))
				}
				meanDiag += h.eval(a, a)
			}
			meanDiag /= float64(c.NPrior)
			sn2 := noise
			if sn2 == 0 {
				sn2 = 1e-2 * meanDiag // the documented default: signal-to-noise ratio 100
			}
			// Prior draw y0 = L z + σn ε, L from K00 (plain try) or else K00 + 1e-10·mean(diag)·I (the documented
			// policy's first jitter, which these small configs never exceed).
			var ch mat.Cholesky
			if !ch.Factorize(k00) {
				jit := mat.NewSymDense(c.NPrior, nil)
				jit.CopySym(k00)
				for i := 0; i < c.NPrior; i++ {
					jit.SetSym(i, i, jit.At(i, i)+1e-10*meanDiag)
				}
				if !ch.Factorize(jit) {
					t.Fatalf("%s: K00 + jitter not PD in the test's replay", truth)
				}
			}
			var l mat.TriDense
			ch.LTo(&l)
			z := make([]float64, c.NPrior)
			for i := range z {
				z[i] = rng.NormFloat64()
			}
			var y0 mat.VecDense
			y0.MulVec(&l, mat.NewVecDense(c.NPrior, z))
			for i := 0; i < c.NPrior; i++ {
				y0.SetVec(i, y0.AtVec(i)+math.Sqrt(sn2)*rng.NormFloat64())
			}
			// α = (K00 + σn² I)⁻¹ y0 by a general solve (allowed in tests), then μ = K·0 α.
			a := mat.NewDense(c.NPrior, c.NPrior, nil)
			a.Copy(k00)
			for i := 0; i < c.NPrior; i++ {
				a.Set(i, i, a.At(i, i)+sn2)
			}
			var alpha mat.VecDense
			if err := alpha.SolveVec(a, &y0); err != nil {
				t.Fatal(err)
			}
			for _, set := range []struct {
				name string
				x, y *mat.Dense
				n    int
			}{{"training", x, y, c.N}, {"test", xt, yt, c.NTest}} {
				xs := uniform(set.n)
				mu := make([]float64, set.n)
				scale := 0.0
				for i, a := range xs {
					for j, b := range x0 {
						mu[i] += h.eval(a, b) * alpha.AtVec(j)
					}
					scale = max(scale, math.Abs(mu[i]))
				}
				if scale == 0 {
					t.Fatalf("%s: all posterior means are zero", truth)
				}
				for i := range xs {
					if set.x.At(i, 0) != xs[i] {
						t.Fatalf("%s %s: x[%d] = %v, the documented draw order gives %v", truth, set.name, i, set.x.At(i, 0), xs[i])
					}
					// 1e-8 relative to the largest |μ|: the replay differs only by rounding (LU vs Cholesky,
					// hand-written vs fused kernel).
					if d := math.Abs(set.y.At(i, 0) - mu[i]); d > 1e-8*scale {
						t.Errorf("%s noise %v %s: y[%d] = %.12g, eq. (1) gives %.12g (|diff| %.3g, scale %.3g)",
							truth, noise, set.name, i, set.y.At(i, 0), mu[i], d, scale)
					}
				}
			}
		}
	}
}

// TestGenerateCarriesLinearTrend checks the LIN factor of PER×LIN×RQ: the prior standard deviation grows like |x|,
// so the data are larger in magnitude near the ends of the domain than near 0.
func TestGenerateCarriesLinearTrend(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		x, y, _, _, err := Synthetic{Truth: TruthPerLinRQ, Seed: seed}.Generate()
		if err != nil {
			t.Fatal(err)
		}
		var outer, inner float64
		var nOuter, nInner int
		for i := 0; i < DefaultSyntheticN; i++ {
			switch ax, ay := math.Abs(x.At(i, 0)), math.Abs(y.At(i, 0)); {
			case ax > 7:
				outer += ay
				nOuter++
			case ax < 2:
				inner += ay
				nInner++
			}
		}
		if nOuter == 0 || nInner == 0 {
			t.Fatalf("seed %d: %d points with |x| > 7 and %d with |x| < 2", seed, nOuter, nInner)
		}
		outer /= float64(nOuter)
		inner /= float64(nInner)
		// The prior standard deviation is proportional to |x|, so the ratio should be near E|x|_{>7}/E|x|_{<2} ≈ 8.5;
		// seeds 1–5 give 6.2 to 12.4. Demand a factor of 2, far above what a stationary process would show.
		if !(outer > 2*inner) {
			t.Errorf("seed %d: mean |y| is %.4g for |x| > 7 and %.4g for |x| < 2; the LIN factor should make it grow with |x|",
				seed, outer, inner)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]Synthetic{
		"unknown truth":     {Truth: "SE+LIN"},
		"empty truth":       {},
		"negative N":        {Truth: TruthPerLinRQ, N: -1},
		"negative NPrior":   {Truth: TruthPerLinRQ, NPrior: -5},
		"negative NTest":    {Truth: TruthPerLinRQ, NTest: -1},
		"Low equals High":   {Truth: TruthPerLinRQ, Low: 2, High: 2},
		"Low above High":    {Truth: TruthPerRQLin, Low: 3, High: -1},
		"NaN Low":           {Truth: TruthPerRQLin, Low: math.NaN(), High: 1},
		"infinite High":     {Truth: TruthPerRQLin, Low: 0, High: math.Inf(1)},
		"overflowing width": {Truth: TruthPerRQLin, Low: -math.MaxFloat64, High: math.MaxFloat64},
		"negative noise":    {Truth: TruthPerRQLin, NoiseVariance: -1e-3},
		"NaN noise":         {Truth: TruthPerRQLin, NoiseVariance: math.NaN()},
	} {
		x, y, xt, yt, err := c.Generate()
		if !errors.Is(err, ErrSyntheticConfig) {
			t.Errorf("%s: err = %v, want ErrSyntheticConfig", name, err)
		}
		if x != nil || y != nil || xt != nil || yt != nil {
			t.Errorf("%s: non-nil data with an error", name)
		}
		if wantUnknown := name == "unknown truth" || name == "empty truth"; errors.Is(err, ErrUnknownTruth) != wantUnknown {
			t.Errorf("%s: errors.Is(err, ErrUnknownTruth) = %v, want %v (err %v)", name, !wantUnknown, wantUnknown, err)
		}
	}
}

func TestSyntheticJitterPolicy(t *testing.T) {
	// An indefinite matrix (eigenvalues 3 and −1): no jitter up to 1e-4·s makes it PD.
	a := []float64{1, 2, 2, 1}
	_, err := ops.CholeskyLower(make([]float64, 4), a, 2, syntheticJitter)
	var npd *ops.NotPDError
	if !errors.As(err, &npd) || !errors.Is(err, ops.ErrNotPD) {
		t.Fatalf("indefinite matrix: err = %v, want *ops.NotPDError", err)
	}
	if npd.Tries != 8 || math.Abs(npd.MaxJitter-1e-4) > 1e-16 {
		t.Errorf("NotPDError = %+v, want 8 tries (plain, then 1e-10 … 1e-4) and MaxJitter 1e-4", *npd)
	}
	// A singular PSD matrix (rank one) factorises once the first jitter 1e-10·s is added.
	l := make([]float64, 4)
	_, err = ops.CholeskyLower(l, []float64{1, 1, 1, 1}, 2, syntheticJitter)
	if err != nil {
		t.Fatalf("rank-one PSD matrix: %v", err)
	}
	if l[1] != 0 || math.Abs(l[0]*l[2]-1) > 1e-12 || math.Abs(l[2]*l[2]+l[3]*l[3]-1-1e-10) > 1e-12 {
		t.Errorf("rank-one PSD matrix: L = %v is not the lower factor of A + 1e-10·I", l)
	}
	if _, err := ops.CholeskyLower(make([]float64, 4), []float64{1, math.NaN(), math.NaN(), 1}, 2, syntheticJitter); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("NaN matrix: err = %v, want ops.ErrNonFinite", err)
	}
}

// bitEqual reports whether a and b have the same shape and bit-identical entries (nil equals nil).
func bitEqual(a, b *mat.Dense) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ra, ca := a.Dims()
	rb, cb := b.Dims()
	if ra != rb || ca != cb {
		return false
	}
	for i := 0; i < ra; i++ {
		for j := 0; j < ca; j++ {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				return false
			}
		}
	}
	return true
}
