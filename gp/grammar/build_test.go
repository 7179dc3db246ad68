package grammar

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

func mustParse(t *testing.T, s string) *Expr {
	t.Helper()
	e, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustKernel(t *testing.T, s string, c BuildConfig) gp.Kernel {
	t.Helper()
	k, err := mustParse(t, s).Kernel(c)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return k
}

// paramsByName returns the kernel's Params by name, failing on a repeated name.
func paramsByName(t *testing.T, k gp.Kernel) map[string]*graph.Param {
	t.Helper()
	m := map[string]*graph.Param{}
	for _, p := range k.Params() {
		if _, dup := m[p.Name()]; dup {
			t.Errorf("parameter name %q used twice", p.Name())
		}
		m[p.Name()] = p
	}
	return m
}

func setParams(t *testing.T, k gp.Kernel, vals map[string][]float64) {
	t.Helper()
	ps := paramsByName(t, k)
	if len(ps) != len(vals) {
		t.Fatalf("kernel has %d params, setting %d", len(ps), len(vals))
	}
	for name, v := range vals {
		p, ok := ps[name]
		if !ok {
			t.Fatalf("no param %q", name)
		}
		if err := p.Set(v); err != nil {
			t.Fatal(err)
		}
	}
}

// The App. E.1 base kernels for 1-D inputs, written out by hand.
func kPER(x, y, variance, ls, period float64) float64 {
	s := math.Sin(math.Pi * math.Abs(x-y) / period)
	return variance * math.Exp(-2*s*s/(ls*ls))
}

func kRQ(x, y, variance, ls, alpha float64) float64 {
	return variance * math.Pow(1+(x-y)*(x-y)/(2*alpha*ls*ls), -alpha)
}

func kLIN(x, y, variance float64) float64 { return variance * x * y }

// TestKernelPaperHyperparameters sets the hyperparameters of the two true kernels of App. E.1 and compares
// gp.KernelMatrix with the paper's formulas. Fixed variances stay 1, and the overall scale goes on the first
// factor, so that the product of the variances matches the paper's.
func TestKernelPaperHyperparameters(t *testing.T) {
	t.Parallel()
	xs := []float64{-9.3, -3, -0.7, 0, 0.4, 2.5, 7.1}
	const twoPi = 2 * math.Pi
	cases := []struct {
		expr string
		set  map[string][]float64
		want func(x, y float64) float64
	}{
		{
			// PER×LIN×RQ: PER 0.1², ℓ 1, p 2π; LIN 1/3²; RQ 0.1², α 1, ℓ 8.
			expr: "PER*LIN*RQ",
			set: map[string][]float64{
				"k.0.per.variance": {0.01 * (1.0 / 9) * 0.01}, "k.0.per.lengthscales": {1}, "k.0.per.period": {twoPi},
				"k.1.lin.variances": {1},
				"k.2.rq.variance":   {1}, "k.2.rq.lengthscales": {8}, "k.2.rq.alpha": {1},
			},
			want: func(x, y float64) float64 {
				return kPER(x, y, 0.01, 1, twoPi) * kLIN(x, y, 1.0/9) * kRQ(x, y, 0.01, 8, 1)
			},
		},
		{
			// (PER+RQ)×LIN: PER 0.1², ℓ 2, p 2π; RQ 0.1², α 1, ℓ 3; LIN 1/5². LIN's variance is fixed at 1,
			// so the sum carries 1/25: (a/25 + b/25)·1 = (a + b)/25.
			expr: "(PER+RQ)*LIN",
			set: map[string][]float64{
				"k.0.per.variance": {0.01 / 25}, "k.0.per.lengthscales": {2}, "k.0.per.period": {twoPi},
				"k.1.rq.variance": {0.01 / 25}, "k.1.rq.lengthscales": {3}, "k.1.rq.alpha": {1},
				"k.2.lin.variances": {1},
			},
			want: func(x, y float64) float64 {
				return (kPER(x, y, 0.01, 2, twoPi) + kRQ(x, y, 0.01, 3, 1)) * kLIN(x, y, 1.0/25)
			},
		},
	}
	for _, c := range cases {
		k := mustKernel(t, c.expr, BuildConfig{InputDim: 1})
		setParams(t, k, c.set)
		x := mat.NewDense(len(xs), 1, slices.Clone(xs))
		got, err := gp.KernelMatrix(k, x, x)
		if err != nil {
			t.Fatal(err)
		}
		maxAbs := 0.0
		for i, a := range xs {
			for j, b := range xs {
				want := c.want(a, b)
				maxAbs = math.Max(maxAbs, math.Abs(want))
				if d := math.Abs(got.At(i, j) - want); d > 1e-12*math.Max(math.Abs(want), 1e-6) {
					t.Errorf("%s: K(%v, %v) = %.15g, want %.15g", c.expr, a, b, got.At(i, j), want)
				}
			}
		}
		if maxAbs < 1e-4 { // the comparison must not be vacuous: the largest entry is about 0.01·81/25
			t.Errorf("%s: kernel values too small (%g) for a meaningful comparison", c.expr, maxAbs)
		}
	}
}

// TestKernelInitialVariances checks build(e, v): variances split over sums, the first factor of a product
// carrying the scale, and the fixed leaf factors.
func TestKernelInitialVariances(t *testing.T) {
	t.Parallel()
	type pv struct {
		value     float64
		trainable bool
	}
	cases := []struct {
		expr string
		v    float64
		want map[string]pv // variance Params only
	}{
		{"SE", 0, map[string]pv{"k.0.se.variance": {1, true}}},
		{"PER*LIN*RQ", 2, map[string]pv{"k.0.per.variance": {2, true}, "k.1.lin.variances": {1, false}, "k.2.rq.variance": {1, false}}},
		{"(PER+RQ)*LIN", 2, map[string]pv{"k.0.per.variance": {1, true}, "k.1.rq.variance": {1, true}, "k.2.lin.variances": {1, false}}},
		{"LIN*RQ+PER", 2, map[string]pv{"k.0.lin.variances": {1, true}, "k.1.rq.variance": {1, false}, "k.2.per.variance": {1, true}}},
		{"PER+PER+SE", 3, map[string]pv{"k.0.per.variance": {1, true}, "k.1.per.variance": {1, true}, "k.2.se.variance": {1, true}}},
		// The second factor is a sum: built with 1 and left trainable; the leaf factor SE is fixed.
		{"(LIN+SE)*(PER+RQ)*SE", 3, map[string]pv{
			"k.0.lin.variances": {1.5, true}, "k.1.se.variance": {1.5, true},
			"k.2.per.variance": {0.5, true}, "k.3.rq.variance": {0.5, true},
			"k.4.se.variance": {1, false},
		}},
		// A product nested in a sum nested in a product: the inner product's second leaf is fixed too.
		{"(LIN*SE+RQ)*PER", 4, map[string]pv{"k.0.lin.variances": {2, true}, "k.1.se.variance": {1, false}, "k.2.rq.variance": {2, true}, "k.3.per.variance": {1, false}}},
	}
	for _, c := range cases {
		k := mustKernel(t, c.expr, BuildConfig{InputDim: 1, Variance: c.v})
		ps := paramsByName(t, k)
		for name, w := range c.want {
			p, ok := ps[name]
			if !ok {
				t.Errorf("%s: no param %q (have %v)", c.expr, name, k.Params())
				continue
			}
			if got := p.Value()[0]; math.Abs(got-w.value) > 1e-12 || p.Trainable() != w.trainable {
				t.Errorf("%s: %s = %v trainable %v, want %v trainable %v", c.expr, name, got, p.Trainable(), w.value, w.trainable)
			}
		}
		// Every Param that is not a variance is trainable.
		for name, p := range ps {
			if _, isVar := c.want[name]; !isVar && !p.Trainable() {
				t.Errorf("%s: %s is fixed", c.expr, name)
			}
		}
	}
}

func TestKernelNamesAndShapes(t *testing.T) {
	t.Parallel()
	k := mustKernel(t, "(PER+RQ)*LIN", BuildConfig{InputDim: 3, Lengthscales: []float64{0.7}, Period: 4, Alpha: 2.5})
	ps := paramsByName(t, k)
	want := map[string][]float64{
		"k.0.per.variance": {0.5}, "k.0.per.lengthscales": {0.7, 0.7, 0.7}, "k.0.per.period": {4},
		"k.1.rq.variance": {0.5}, "k.1.rq.lengthscales": {0.7, 0.7, 0.7}, "k.1.rq.alpha": {2.5},
		"k.2.lin.variances": {1},
	}
	if len(ps) != len(want) {
		t.Errorf("%d params, want %d: %v", len(ps), len(want), k.Params())
	}
	for name, v := range want {
		p, ok := ps[name]
		if !ok {
			t.Errorf("missing %q", name)
			continue
		}
		got := p.Value()
		if len(got) != len(v) {
			t.Errorf("%s has %d values, want %d", name, len(got), len(v))
			continue
		}
		for i := range v {
			if math.Abs(got[i]-v[i]) > 1e-12 {
				t.Errorf("%s = %v, want %v", name, got, v)
			}
		}
	}
	if s := ps["k.0.per.lengthscales"].Shape(); !slices.Equal(s, []int{3}) {
		t.Errorf("PER length-scales shape %v, want [3] (ARD)", s)
	}
	if s := ps["k.2.lin.variances"].Shape(); len(s) != 0 {
		t.Errorf("shared LIN variance shape %v, want a scalar", s)
	}
	if k.InputDim() != 3 {
		t.Errorf("InputDim %d", k.InputDim())
	}

	// ARDLinear, explicit per-dimension length-scales, default lengthscales, and a custom prefix.
	k = mustKernel(t, "LIN*SE+RQ", BuildConfig{InputDim: 3, Name: "cand7", ARDLinear: true, Lengthscales: []float64{1, 2, 3}, Variance: 4})
	ps = paramsByName(t, k)
	lin := ps["cand7.0.lin.variances"]
	if lin == nil || !slices.Equal(lin.Shape(), []int{3}) || !slices.Equal(lin.Value(), []float64{2, 2, 2}) || !lin.Trainable() {
		t.Errorf("ARD LIN variances: %v", lin)
	}
	se := ps["cand7.1.se.variance"]
	if se == nil || se.Trainable() || se.Value()[0] != 1 {
		t.Errorf("SE factor variance %v should be fixed at 1", se)
	}
	if ls := ps["cand7.2.rq.lengthscales"]; ls == nil || !slices.Equal(roundAll(ls.Value()), []float64{1, 2, 3}) {
		t.Errorf("RQ length-scales %v", ls)
	}
	k = mustKernel(t, "SE+PER", BuildConfig{InputDim: 2})
	ps = paramsByName(t, k)
	if ls := ps["k.1.se.lengthscales"]; ls == nil || !slices.Equal(roundAll(ls.Value()), []float64{gp.DefaultLengthscale, gp.DefaultLengthscale}) {
		t.Errorf("default length-scales %v", ls)
	}
	if p := ps["k.0.per.period"]; p == nil || math.Abs(p.Value()[0]-gp.DefaultPeriod) > 1e-12 {
		t.Errorf("default period %v", p)
	}

	// Names stay unique in a big expression with repeated bases.
	for _, e := range K144() {
		k, err := e.Kernel(BuildConfig{InputDim: 2})
		if err != nil {
			t.Fatalf("%v: %v", e, err)
		}
		paramsByName(t, k)
	}
}

func roundAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(x*1e9) / 1e9
	}
	return out
}

func TestKernelErrors(t *testing.T) {
	t.Parallel()
	se := NewBase(SE)
	cases := []struct {
		name string
		e    *Expr
		c    BuildConfig
	}{
		{"zero InputDim", se, BuildConfig{}},
		{"negative InputDim", se, BuildConfig{InputDim: -1}},
		{"wrong Lengthscales", se, BuildConfig{InputDim: 3, Lengthscales: []float64{1, 2}}},
		{"negative lengthscale", se, BuildConfig{InputDim: 2, Lengthscales: []float64{1, -2}}},
		{"zero lengthscale", se, BuildConfig{InputDim: 1, Lengthscales: []float64{0}}},
		{"NaN lengthscale", se, BuildConfig{InputDim: 1, Lengthscales: []float64{math.NaN()}}},
		{"negative variance", se, BuildConfig{InputDim: 1, Variance: -1}},
		{"NaN variance", se, BuildConfig{InputDim: 1, Variance: math.NaN()}},
		{"infinite variance", se, BuildConfig{InputDim: 1, Variance: math.Inf(1)}},
		{"negative period", NewBase(PER), BuildConfig{InputDim: 1, Period: -1}},
		{"NaN alpha", NewBase(RQ), BuildConfig{InputDim: 1, Alpha: math.NaN()}},
		{"variance below the Positive floor", mustParse(t, "SE+RQ"), BuildConfig{InputDim: 1, Variance: 1e-7}},
		{"nil expression", nil, BuildConfig{InputDim: 1}},
		{"invalid base", NewBase(Base(7)), BuildConfig{InputDim: 1}},
	}
	for _, c := range cases {
		k, err := c.e.Kernel(c.c)
		if !errors.Is(err, gp.ErrConfig) || k != nil {
			t.Errorf("%s: got %v, %v; want an error wrapping gp.ErrConfig", c.name, k, err)
		}
	}
}

// trainableView shows only a kernel's trainable Params, so that gptest.CheckKernel (which expects every
// Param in Params() to be trainable) checks the kernel exactly as built, with its fixed product variances.
type trainableView struct{ gp.Kernel }

func (v trainableView) Params() []*graph.Param {
	var ps []*graph.Param
	for _, p := range v.Kernel.Params() {
		if p.Trainable() {
			ps = append(ps, p)
		}
	}
	return ps
}

// TestKernelConformance runs the gp conformance suite (shapes, symmetry, PSD, diag, finite-difference
// gradients for the hyperparameters and inputs) on two K_12 kernels with D = 2, both as built (fixed variances
// excluded) and with every Param unfrozen (so the gradients of the fixed variances are checked too).
func TestKernelConformance(t *testing.T) {
	t.Parallel()
	for i, s := range []string{"(PER+RQ)*LIN", "LIN*RQ+PER"} {
		c := BuildConfig{InputDim: 2, Lengthscales: []float64{0.8, 1.3}, Period: 1.7, Alpha: 0.9, Variance: 1.4}
		k := mustKernel(t, s, c)
		fixed := 0
		for _, p := range k.Params() {
			if !p.Trainable() {
				fixed++
			}
		}
		if fixed != 1 {
			t.Errorf("%s: %d fixed params, want 1", s, fixed)
		}
		t.Run(s+"/as built", func(t *testing.T) {
			gptest.CheckKernel(t, trainableView{k}, rand.New(rand.NewPCG(uint64(i), 11)))
		})
		k = mustKernel(t, s, c)
		for _, p := range k.Params() {
			p.SetTrainable(true)
		}
		t.Run(s+"/all trainable", func(t *testing.T) {
			gptest.CheckKernel(t, k, rand.New(rand.NewPCG(uint64(i), 12)))
		})
	}
}

// TestParseParamName reads back every Param name Kernel gives over K_144 (with a prefix that contains a dot):
// the leaves come out in print order with the bases of the expression's leaves.
func TestParseParamName(t *testing.T) {
	t.Parallel()
	for _, e := range K144() {
		k, err := e.Kernel(BuildConfig{InputDim: 2, Name: "cand.7"})
		if err != nil {
			t.Fatalf("%v: %v", e, err)
		}
		want := leafBases(e)
		got := make([]Base, len(want))
		seen := make([]bool, len(want))
		for _, p := range k.Params() {
			lp, ok := ParseParamName(p.Name())
			if !ok || lp.Leaf >= len(want) {
				t.Fatalf("%v: cannot read %q (%+v, %v)", e, p.Name(), lp, ok)
			}
			if seen[lp.Leaf] && got[lp.Leaf] != lp.Base {
				t.Fatalf("%v: leaf %d has bases %v and %v", e, lp.Leaf, got[lp.Leaf], lp.Base)
			}
			got[lp.Leaf], seen[lp.Leaf] = lp.Base, true
			if !slices.Contains([]string{"variance", "variances", "lengthscales", "period", "alpha"}, lp.Field) {
				t.Errorf("%v: field %q", e, lp.Field)
			}
		}
		if !slices.Equal(got, want) || slices.Contains(seen, false) {
			t.Errorf("%v: leaves %v (seen %v), want %v", e, got, seen, want)
		}
	}
	for _, bad := range []string{"", "k.per.period", "k.x.per.period", "k.-1.per.period", "k.0.xyz.period", "sgpr.Z"} {
		if lp, ok := ParseParamName(bad); ok {
			t.Errorf("ParseParamName(%q) = %+v, want not ok", bad, lp)
		}
	}
}

// leafBases lists e's leaves in print order.
func leafBases(e *Expr) []Base {
	if e.Op() == Leaf {
		return []Base{e.Base()}
	}
	var out []Base
	for _, t := range e.Terms() {
		out = append(out, leafBases(t)...)
	}
	return out
}
