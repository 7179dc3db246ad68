package ops

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// hyperStub is a covariance function with the given hyperparameters and no maths: enough for covCheckHyper.
type hyperStub []CovHyper

func (h hyperStub) Name() string                                                   { return "stub" }
func (h hyperStub) Hypers() []CovHyper                                             { return h }
func (hyperStub) Matrix(_, _ CovInput, _ []CovInput, _ []float64)                  {}
func (hyperStub) MatrixGrad(_ int, _, _ CovInput, _ []CovInput, _, _, _ []float64) {}
func (hyperStub) Diag(_ CovInput, _ []CovInput, _ []float64)                       {}
func (hyperStub) DiagGrad(_ int, _ CovInput, _ []CovInput, _, _, _ []float64)      {}

// The hyperparameters of gp's periodic and linear covariance functions.
var (
	periodicHypers = hyperStub{{Name: "variance"}, {Name: "lengthscales", Vec: true}, {Name: "period"}}
	linearHypers   = hyperStub{{Name: "variance", Vec: true, ScalarOK: true}}
)

// TestCovCheckHyperMessages: a wrong hyperparameter shape is a *ShapeError that names the hyperparameter and the
// shapes it accepts (formatted only on this error path), and the accepted shapes pass.
func TestCovCheckHyperMessages(t *testing.T) {
	const d = 3
	cases := []struct {
		name string
		f    CovFunc
		in   []tensor.Shape
		want string // "" for no error
	}{
		{"periodic ok", periodicHypers, []tensor.Shape{{}, {d}, {1}}, ""},
		{"periodic lengthscales scalar", periodicHypers, []tensor.Shape{{}, {}, {}}, "hyperparameter 1 (lengthscales) a vector [3]"},
		{"periodic period vector", periodicHypers, []tensor.Shape{{}, {d}, {d}}, "hyperparameter 2 (period) a scalar"},
		{"linear scalar ok", linearHypers, []tensor.Shape{{}}, ""},
		{"linear vector ok", linearHypers, []tensor.Shape{{d}}, ""},
		{"linear wrong length", linearHypers, []tensor.Shape{{d + 1}}, "hyperparameter 0 (variance) a scalar or a vector [3]"},
	}
	for _, tc := range cases {
		se := covCheckHyper(tc.f, tc.in, d)
		if tc.want == "" {
			if se != nil {
				t.Errorf("%s: %v", tc.name, se)
			}
			continue
		}
		var err error = se
		if !errors.As(err, &se) || se == nil {
			t.Errorf("%s: got %v, want a *ShapeError", tc.name, err)
			continue
		}
		if !strings.Contains(se.Want, tc.want) {
			t.Errorf("%s: Want %q, want it to contain %q", tc.name, se.Want, tc.want)
		}
	}
}

// covTestSE is a squared exponential written out plainly (package gp's kernels cannot be imported here).
var covTestSE = &Stationary{
	Label: "testSE",
	Profile: func(s2 float64, _ []float64, v []float64) {
		for i, r2 := range v {
			v[i] = s2 * math.Exp(-0.5*r2)
		}
	},
	Slope: func(_ []float64, _, k, g, w []float64) {
		for i := range w {
			w[i] = -0.5 * g[i] * k[i]
		}
	},
}

// covTestArgs returns random operands of covTestSE for x1 [n,d], x2 [m,d], the forward output's storage and an
// output gradient.
func covTestArgs(n, m, d int, seed uint64) (in []arg, out, g arg) {
	rng := rand.New(rand.NewPCG(seed, 1))
	vec := func(k int, lo, hi float64) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float64()
		}
		return v
	}
	in = []arg{{vec(n*d, -1, 1), tensor.Shape{n, d}}, {vec(m*d, -1, 1), tensor.Shape{m, d}},
		{vec(1, 0.5, 1.5), tensor.ScalarShape()}, {vec(d, 0.5, 1.5), tensor.Shape{d}}}
	return in, arg{make([]float64, n*m), tensor.Shape{n, m}}, arg{vec(n*m, -1, 1), tensor.Shape{n, m}}
}

// covTestGrads runs k's backward pass for every operand and returns the gradients.
func covTestGrads(t *testing.T, k covMatrixK, in []arg, out, g arg) [][]float64 {
	t.Helper()
	var gs [][]float64
	for wrt := range in {
		dst := make([]float64, len(in[wrt].data))
		if err := k.backward(wrt, in, out, g, dst); err != nil {
			t.Fatal(err)
		}
		gs = append(gs, dst)
	}
	return gs
}

// The shared backward pass is recomputed whenever it may be stale: after a forward run, and when a gradient is
// asked for twice in one run (the output gradient may have changed in place); its results are a fresh
// workspace's, bit for bit.
func TestCovWorkspaceRecomputes(t *testing.T) {
	k := covMatrixK{f: covTestSE, ws: new(covWork)}
	in, out, g := covTestArgs(30, 70, 3, 1)
	if err := k.forward(in, out.data); err != nil {
		t.Fatal(err)
	}
	covTestGrads(t, k, in, out, g)
	for i := range g.data { // a new output gradient in the same storage: asking again recomputes
		g.data[i] = -g.data[i] / 3
	}
	again := covTestGrads(t, k, in, out, g)
	fresh := covMatrixK{f: covTestSE, ws: new(covWork)}
	out2 := arg{make([]float64, len(out.data)), out.shape}
	if err := fresh.forward(in, out2.data); err != nil {
		t.Fatal(err)
	}
	want := covTestGrads(t, fresh, in, out2, g)
	for wrt := range want {
		for i := range want[wrt] {
			if math.Float64bits(again[wrt][i]) != math.Float64bits(want[wrt][i]) {
				t.Fatalf("operand %d [%d]: %v after a change of G, %v fresh", wrt, i, again[wrt][i], want[wrt][i])
			}
		}
	}
	// New input values in the same storage and a forward run: the next gradients are the new values'.
	in2, _, _ := covTestArgs(30, 70, 3, 2)
	for i := range in {
		copy(in[i].data, in2[i].data)
	}
	if err := k.forward(in, out.data); err != nil {
		t.Fatal(err)
	}
	got := covTestGrads(t, k, in, out, g)
	fresh = covMatrixK{f: covTestSE, ws: new(covWork)}
	if err := fresh.forward(in, out2.data); err != nil {
		t.Fatal(err)
	}
	want = covTestGrads(t, fresh, in, out2, g)
	for wrt := range want {
		for i := range want[wrt] {
			if math.Float64bits(got[wrt][i]) != math.Float64bits(want[wrt][i]) {
				t.Fatalf("after new inputs: operand %d [%d]: %v, %v fresh", wrt, i, got[wrt][i], want[wrt][i])
			}
		}
	}
}

// Steady-state runs of the fused op reuse the workspace's buffers: a forward and every gradient of K(Z, X) at
// the SVGP's shape allocate only a few small values per run (never a buffer of the matrix's size).
func TestCovWorkspaceReused(t *testing.T) {
	k := covMatrixK{f: covTestSE, ws: new(covWork)}
	in, out, g := covTestArgs(200, 1024, 8, 3)
	dst := make([][]float64, len(in))
	for i := range in {
		dst[i] = make([]float64, len(in[i].data))
	}
	run := func() {
		if err := k.forward(in, out.data); err != nil {
			t.Fatal(err)
		}
		for wrt := range in {
			if err := k.backward(wrt, in, out, g, dst[wrt]); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	run()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 10
	for range runs {
		run()
	}
	runtime.ReadMemStats(&after)
	if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > 4096 {
		t.Errorf("%d bytes allocated per run (the matrix is %d bytes)", perRun, 8*len(out.data))
	}
}
