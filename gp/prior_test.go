package gp_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/stat/distuv"
)

// priorCase is a prior with its reference log density from gonum's distuv and points inside its support.
type priorCase struct {
	prior  gp.Prior
	ref    func(x float64) float64
	points []float64
}

func priorCases(t *testing.T) []priorCase {
	t.Helper()
	must := func(p gp.Prior, err error) gp.Prior {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ln := distuv.LogNormal{Mu: -0.3, Sigma: 0.7}
	ga := distuv.Gamma{Alpha: 2.5, Beta: 1.5} // Beta is gonum's rate
	hn := distuv.Normal{Mu: 0, Sigma: 1.3}
	un := distuv.Uniform{Min: 0.5, Max: 4}
	no := distuv.Normal{Mu: 1.2, Sigma: 0.4}
	return []priorCase{
		{must(gp.NewLogNormalPrior(-0.3, 0.7)), ln.LogProb, []float64{0.05, 0.4, 1, 2.7, 9}},
		{must(gp.NewGammaPrior(2.5, 1.5)), ga.LogProb, []float64{0.05, 0.4, 1, 2.7, 9}},
		{must(gp.NewHalfNormalPrior(1.3)), func(x float64) float64 { return math.Ln2 + hn.LogProb(x) }, []float64{0.01, 0.4, 1, 2.7, 5}},
		{must(gp.NewUniformPrior(0.5, 4)), un.LogProb, []float64{0.6, 1, 2.7, 3.9}},
		{must(gp.NewNormalPrior(1.2, 0.4)), no.LogProb, []float64{-1, 0.4, 1.2, 2.7}},
	}
}

// TestPriorDensities: every built-in prior's log density equals gonum's distuv reference (1e-13 relative), its
// derivative a central finite difference (1e-6 relative), it is −Inf with a zero derivative outside its support,
// and its Name reads back through ParsePrior to the same prior.
func TestPriorDensities(t *testing.T) {
	for _, c := range priorCases(t) {
		name := c.prior.Name()
		for _, x := range c.points {
			lp, dlp := c.prior.LogDensity(x)
			if want := c.ref(x); math.Abs(lp-want) > 1e-13*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: log p(%v) = %.17g, distuv gives %.17g", name, x, lp, want)
			}
			h := 1e-6 * math.Max(1, math.Abs(x))
			fp, _ := c.prior.LogDensity(x + h)
			fm, _ := c.prior.LogDensity(x - h)
			if fd := (fp - fm) / (2 * h); math.Abs(dlp-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: d/dx log p(%v) = %.12g, finite difference %.12g", name, x, dlp, fd)
			}
		}
		lo, hi := c.prior.Support()
		for _, x := range []float64{lo - 1, hi + 1} {
			if math.IsInf(x, 0) {
				continue
			}
			if lp, dlp := c.prior.LogDensity(x); !math.IsInf(lp, -1) || dlp != 0 {
				t.Errorf("%s outside its support at %v: %v, %v; want −Inf, 0", name, x, lp, dlp)
			}
		}
		back, err := gp.ParsePrior(name)
		if err != nil || back.Name() != name {
			t.Errorf("ParsePrior(%q) = %v, %v", name, back, err)
		}
	}
}

// TestPriorTypedErrors: improper or non-finite arguments give a *PriorError (wrapping ErrBadPrior) naming the
// argument, from the constructors and through ParsePrior (a *PriorSyntaxError at the argument's byte).
func TestPriorTypedErrors(t *testing.T) {
	for _, c := range []struct {
		in  string
		arg string
		pos int
	}{
		{"lognormal(0,0)", "sigma", 12},
		{"lognormal(0,-1)", "sigma", 12},
		{"lognormal(nan,1)", "mu", 10},
		{"lognormal(0,inf)", "sigma", 12},
		{"gamma(0,1)", "shape", 6},
		{"gamma(2,-0.5)", "rate", 8},
		{"gamma(NaN,1)", "shape", 6},
		{"halfnormal(0)", "sigma", 11},
		{"halfnormal(-Inf)", "sigma", 11},
		{"uniform(1,1)", "hi", 10},
		{"uniform(2,1)", "hi", 10},
		{"uniform(-1e308,1e308)", "hi", 15},
		{"uniform(0,+Inf)", "hi", 10},
		{"normal(0,0)", "sigma", 9},
	} {
		_, err := gp.ParsePrior(c.in)
		var pe *gp.PriorError
		var se *gp.PriorSyntaxError
		if !errors.As(err, &pe) || !errors.Is(err, gp.ErrBadPrior) || pe.Arg != c.arg {
			t.Errorf("%s: %v; want a *PriorError for %s", c.in, err, c.arg)
			continue
		}
		if !errors.As(err, &se) || se.Pos != c.pos {
			t.Errorf("%s: %v; want a *PriorSyntaxError at byte %d", c.in, err, c.pos)
		}
	}
	if _, err := gp.NewUniformPrior(math.NaN(), 1); !errors.Is(err, gp.ErrBadPrior) {
		t.Errorf("NewUniformPrior(NaN, 1): %v", err)
	}
}

// TestPriorSpecsRoundTrip: a GPR whose Params carry priors is described with them (Describe), survives JSON and
// rebuilds with the same priors on the same Params; a Spec naming a Param the model lacks is refused.
func TestPriorSpecsRoundTrip(t *testing.T) {
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k})
	if err != nil {
		t.Fatal(err)
	}
	rules := mustRules(t, "lengthscale=lognormal(0.5,1.5)", "variance=halfnormal(2)", "noise=gamma(1.5,3)")
	got, err := gp.AssignPriors(m.Params(), rules)
	if err != nil {
		t.Fatal(err)
	}
	want := []gp.PriorAssignment{{"squaredexp.variance", "halfnormal(2)"}, {"squaredexp.lengthscales", "lognormal(0.5,1.5)"}, {"likelihood.variance", "gamma(1.5,3)"}}
	if len(got) != len(want) {
		t.Fatalf("assignments %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("assignment %d: %v, want %v", i, got[i], want[i])
		}
	}
	s, err := gp.Describe(m)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back gp.Spec
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	built, err := gp.BuildSpec(back, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps := built.(*gp.GPR).Params()
	for i, p := range m.Params() {
		if a, b := priorName(p), priorName(ps[i]); a != b {
			t.Errorf("Param %s: prior %q rebuilt as %q", p.Name(), a, b)
		}
	}
	bad := back
	bad.Priors = append([]gp.ParamPrior(nil), back.Priors...)
	bad.Priors[0].Param = "nosuch"
	if _, err := gp.BuildSpec(bad, gp.BuildOptions{}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("a prior on a Param the model lacks: %v, want ErrConfig", err)
	}
}

func priorName(p *graph.Param) string {
	if p.Prior() == nil {
		return ""
	}
	return p.Prior().Name()
}

func mustRules(t *testing.T, rules ...string) []gp.PriorRule {
	t.Helper()
	out := make([]gp.PriorRule, len(rules))
	for i, r := range rules {
		var err error
		if out[i], err = gp.ParsePriorRule(r); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestAssignPriors: selectors match by components (aliases, wildcards, layers), later rules override earlier
// ones, a selector matching nothing lists the Params, and a Cholesky-factor Param refuses a prior and leaves every
// Param as it was.
func TestAssignPriors(t *testing.T) {
	names := []string{"layer0.se.variance", "layer0.se.lengthscales", "layer0.q.sqrt0", "layer1.0.per.lengthscales",
		"layer1.0.per.period", "layer1.2.se.lengthscales", "likelihood.variance", "sgpr.Z"}
	for _, c := range []struct {
		sel  string
		want []string
	}{
		{"lengthscale", []string{"layer0.se.lengthscales", "layer1.0.per.lengthscales", "layer1.2.se.lengthscales"}},
		{"layer1.lengthscales", []string{"layer1.0.per.lengthscales", "layer1.2.se.lengthscales"}},
		{"layer1.se.lengthscales", []string{"layer1.2.se.lengthscales"}},
		{"per.period", []string{"layer1.0.per.period"}},
		{"noise", []string{"likelihood.variance"}},
		{"variance", []string{"layer0.se.variance", "likelihood.variance"}},
		{"LAYER0.*.Variance", []string{"layer0.se.variance"}},
		{"z", []string{"sgpr.Z"}},
		{"layer2.lengthscales", nil},
		{"*", names},
	} {
		r := mustRules(t, c.sel+"=normal(0,1)")[0]
		var got []string
		for _, n := range names {
			if r.Matches(n) {
				got = append(got, n)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("selector %q matches %v, want %v", c.sel, got, c.want)
		}
	}

	v := mustParamT(t, "k.variance", []float64{1}, graph.Positive{})
	l := mustParamT(t, "k.lengthscales", []float64{1, 2}, graph.Positive{}, 2)
	q := mustParamT(t, "q.sqrt0", []float64{1, 0, 0, 1}, graph.LowerTriangular{}, 2, 2)
	got, err := gp.AssignPriors([]*graph.Param{v, l}, mustRules(t, "*=lognormal(0,1)", "variance=gamma(2,1)"))
	if err != nil || len(got) != 2 || got[0].Prior != "gamma(2,1)" || got[1].Prior != "lognormal(0,1)" {
		t.Errorf("override: %v, %v", got, err)
	}
	var ue *gp.UnmatchedPriorError
	if _, err := gp.AssignPriors([]*graph.Param{v, l}, mustRules(t, "period=gamma(2,1)")); !errors.As(err, &ue) || len(ue.Names) != 2 {
		t.Errorf("unmatched: %v", err)
	}
	if _, err := gp.AssignPriors([]*graph.Param{v, l, q}, mustRules(t, "*=normal(0,1)")); !errors.Is(err, graph.ErrPriorTransform) {
		t.Errorf("a LowerTriangular Param: %v, want ErrPriorTransform", err)
	}
	if priorName(v) != "gamma(2,1)" || priorName(l) != "lognormal(0,1)" || q.Prior() != nil {
		t.Errorf("a failed AssignPriors changed the priors: %q %q %v", priorName(v), priorName(l), q.Prior())
	}
}

func mustParamT(t *testing.T, name string, v []float64, tr graph.Transform, shape ...int) *graph.Param {
	t.Helper()
	p, err := graph.NewParam(name, v, tr, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParsePriorRuleErrors: malformed rules are refused with the byte offset of the problem and, once read, the
// parameter selector.
func TestParsePriorRuleErrors(t *testing.T) {
	for _, c := range []struct {
		in    string
		pos   int
		param string
		msg   string
	}{
		{"lengthscale", 11, "", `no "="`},
		{"=lognormal(0,1)", 0, "", "empty parameter selector"},
		{"a..b=normal(0,1)", 2, "a..b", "empty component"},
		{"len-scale=normal(0,1)", 3, "len-scale", `unexpected '-'`},
		{"noise=", 6, "noise", "want a prior"},
		{"noise=beta(1,2)", 6, "noise", `unknown prior "beta"`},
		{"noise=gamma 2,1", 12, "noise", `want "("`},
		{"noise=gamma(2,1", 15, "noise", `missing ")"`},
		{"noise=gamma(2;1)", 12, "noise", `"2;1" is not a number`},
		{"noise=gamma(2,)", 14, "noise", "want a number"},
		{"noise=gamma(2)", 13, "noise", "takes 2 arguments, got 1"},
		{"noise=gamma(2,1,3)", 17, "noise", "takes 2 arguments, got 3"},
		{"noise=gamma(2,1) x", 17, "noise", `unexpected "x"`},
		{" lengthscale = lognormal( 0 , abc )", 30, "lengthscale", `"abc" is not a number`},
	} {
		_, err := gp.ParsePriorRule(c.in)
		var se *gp.PriorSyntaxError
		if !errors.As(err, &se) || se.Pos != c.pos || se.Param != c.param || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: %v; want a *PriorSyntaxError at byte %d for %q saying %q", c.in, err, c.pos, c.param, c.msg)
		}
	}
	r, err := gp.ParsePriorRule(" lengthscale = LogNormal( 0 , 1e-1 ) ")
	if err != nil || r.Selector != "lengthscale" || r.Prior.Name() != "lognormal(0,0.1)" {
		t.Errorf("spaces and case: %+v, %v", r, err)
	}
}

// FuzzParsePriorRule: no input panics; an accepted rule's prior reads back from its Name to the same Name, and
// its density is finite somewhere in its support.
func FuzzParsePriorRule(f *testing.F) {
	for _, s := range []string{"lengthscale=lognormal(0,1)", "noise=gamma(2,0.5)", "layer1.*.variance=halfnormal(1)",
		"x=uniform(-1,1)", "a.b=normal(1e3,2e-3)", "=", "x=gamma(", "x=uniform(1,0)", "x=lognormal(nan,1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := gp.ParsePriorRule(s)
		if err != nil {
			var se *gp.PriorSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %v is not a *PriorSyntaxError", s, err)
			}
			return
		}
		back, err := gp.ParsePrior(r.Prior.Name())
		if err != nil || back.Name() != r.Prior.Name() {
			t.Fatalf("%q: prior %s reads back as %v, %v", s, r.Prior.Name(), back, err)
		}
		lo, hi := r.Prior.Support()
		x := 0.0
		switch {
		case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
			x = lo/2 + hi/2
		case !math.IsInf(lo, 0):
			x = lo + 1
		}
		if lp, dlp := r.Prior.LogDensity(x); math.IsNaN(lp) || math.IsNaN(dlp) {
			t.Fatalf("%q: log density at %v is %v, %v", s, x, lp, dlp)
		}
	})
}
