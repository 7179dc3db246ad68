package likelihoods_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// Shared fixtures: a VE program whose loss is −Σ VE(μ, v, y) with μ (Identity) and v (Positive) as Params, so
// every gradient path (latent marginals and likelihood parameters) is checked by finite differences.

// veData is one set of latent marginals and observations, [n,l] row-major.
type veData struct {
	n, l     int
	mu, v, y []float64
}

// randomVE returns marginals with μ in [−1.5, 1.5), v in [0.05, 1.05) and y from obs.
func randomVE(seed uint64, n, l int, obs func(rng *rand.Rand) float64) veData {
	rng := rand.New(rand.NewPCG(seed, 99))
	d := veData{n: n, l: l, mu: make([]float64, n*l), v: make([]float64, n*l), y: make([]float64, n*l)}
	for i := range d.mu {
		d.mu[i] = 3*rng.Float64() - 1.5
		d.v[i] = 0.05 + rng.Float64()
		d.y[i] = obs(rng)
	}
	return d
}

// veProgram is a compiled VE program and its latent Params.
type veProgram struct {
	prog  *graph.Program
	mu, v *graph.Param
}

// buildVE compiles loss = −Σ_n VE_n with outputs "ve" and any extra outputs from extra. vFloor is the floor of
// v's Positive transform (0: the default).
func buildVE(t *testing.T, lik gp.Likelihood, d veData, vFloor float64,
	extra func(gr *graph.Graph, mu, v, y *graph.Node) map[string]*graph.Node) veProgram {
	t.Helper()
	muP, err := graph.NewParam("q.mu", d.mu, nil, d.n, d.l)
	if err != nil {
		t.Fatal(err)
	}
	vP, err := graph.NewParam("q.var", d.v, graph.Positive{Floor: vFloor}, d.n, d.l)
	if err != nil {
		t.Fatal(err)
	}
	gr := graph.New(graph.Options{})
	mu, v, y := gr.Param(muP), gr.Param(vP), gr.Input("y", d.n, d.l)
	ve := lik.VariationalExpectations(mu, v, y)
	outs := map[string]*graph.Node{"ve": ve}
	if extra != nil {
		for k, n := range extra(gr, mu, v, y) {
			outs[k] = n
		}
	}
	prog, err := gr.Compile(gr.Neg(gr.Sum(ve)), outs)
	if err != nil {
		t.Fatalf("%v: compile: %v", lik, err)
	}
	t.Cleanup(func() { prog.Close() })
	if err := prog.Set("y", d.y); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatalf("%v: run: %v", lik, err)
	}
	return veProgram{prog: prog, mu: muP, v: vP}
}

// checkVEGradients runs gradcheck.CheckProgram and requires a non-zero gradient for μ, v and every trainable
// Param of lik (a Param missing from the loss or from Params() fails here).
func checkVEGradients(t *testing.T, lik gp.Likelihood, d veData) {
	t.Helper()
	p := buildVE(t, lik, d, 0, nil)
	gradcheck.CheckProgram(t, p.prog)
	want := append([]*graph.Param{p.mu, p.v}, lik.Params()...)
	for _, param := range want {
		if !param.Trainable() {
			if p.prog.Grad(param) != nil {
				t.Errorf("%v: frozen %s has a gradient", lik, param.Name())
			}
			continue
		}
		g := p.prog.Grad(param)
		nonzero := false
		for _, x := range g {
			if x != 0 && !math.IsNaN(x) {
				nonzero = true
			}
		}
		if !nonzero {
			t.Errorf("%v: Param %s gets no (or a zero) gradient: %v", lik, param.Name(), g)
		}
	}
}

// checkQuadOp runs gradcheck.Check on ops.QuadratureVE of the scalar model lik with respect to mu, v and θ.
func checkQuadOp(t *testing.T, lik ops.ScalarLogLik, d veData, theta ...float64) {
	t.Helper()
	ins := []gradcheck.Input{
		{Name: "mu", Shape: []int{d.n, d.l}, Value: d.mu},
		{Name: "v", Shape: []int{d.n, d.l}, Value: d.v},
		{Name: "y", Shape: []int{d.n, d.l}, Value: d.y, NoGrad: true},
	}
	for _, th := range theta {
		ins = append(ins, gradcheck.Input{Name: "theta", Value: []float64{th}})
	}
	gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return ops.QuadratureVE(lik, ops.DefaultQuadPoints, in[0], in[1], in[2], in[3:]...)
	}, ins)
}

// closeTo fails t unless |got − want| ≤ tol·max(1, |want|).
func closeTo(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))) {
		t.Errorf("%s = %.15g, want %.15g (diff %.3g, tol %g)", what, got, want, got-want, tol)
	}
}

// noPanic fails t if f panics or returns no error.
func noPanic(t *testing.T, name string, f func() error) {
	t.Helper()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic: %v", name, r)
			}
		}()
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}()
}

// wantShapeErr fails t unless the graph recorded a *ops.ShapeError.
func wantShapeErr(t *testing.T, name string, gr *graph.Graph) {
	t.Helper()
	var se *ops.ShapeError
	if !errors.As(gr.Err(), &se) {
		t.Errorf("%s: graph error %v, want a *ops.ShapeError", name, gr.Err())
	}
}

// likelihoodsUnderTest returns one default instance of every likelihood of this file set.
func likelihoodsUnderTest(t *testing.T) map[string]gp.Likelihood {
	t.Helper()
	g, err1 := likelihoods.NewGaussian(likelihoods.GaussianConfig{})
	b, err2 := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	s, err3 := likelihoods.NewStudentT(likelihoods.StudentTConfig{})
	p, err4 := likelihoods.NewPoisson(likelihoods.PoissonConfig{})
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	return map[string]gp.Likelihood{"Gaussian": g, "Bernoulli": b, "StudentT": s, "Poisson": p}
}

// TestVEBadShapes: mismatched or non-matrix operands record a *ops.ShapeError in the graph (never a panic), and
// nil operands give an invalid node.
func TestVEBadShapes(t *testing.T) {
	t.Parallel()
	for name, lik := range likelihoodsUnderTest(t) {
		cases := map[string]func(gr *graph.Graph) (mu, v, y *graph.Node){
			"y shape": func(gr *graph.Graph) (mu, v, y *graph.Node) {
				return gr.Input("mu", 4, 2), gr.Input("v", 4, 2), gr.Input("y", 4, 3)
			},
			"v shape": func(gr *graph.Graph) (mu, v, y *graph.Node) {
				return gr.Input("mu", 4, 2), gr.Input("v", 2, 4), gr.Input("y", 4, 2)
			},
			"vectors": func(gr *graph.Graph) (mu, v, y *graph.Node) {
				return gr.Input("mu", 4), gr.Input("v", 4), gr.Input("y", 4)
			},
			"scalar y": func(gr *graph.Graph) (mu, v, y *graph.Node) {
				return gr.Input("mu", 4, 2), gr.Input("v", 4, 2), gr.Scalar("y", 1)
			},
			"3-d input": func(gr *graph.Graph) (mu, v, y *graph.Node) {
				return gr.Input("mu", 2, 2, 2), gr.Input("v", 2, 2, 2), gr.Input("y", 2, 2, 2)
			},
		}
		for cname, mk := range cases {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s %s: panic %v", name, cname, r)
					}
				}()
				gr := graph.New(graph.Options{})
				mu, v, y := mk(gr)
				lik.VariationalExpectations(mu, v, y)
				wantShapeErr(t, name+" "+cname, gr)
			}()
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s nil operands: panic %v", name, r)
				}
			}()
			gr := graph.New(graph.Options{})
			lik.VariationalExpectations(gr.Input("mu", 2, 1), nil, gr.Input("y", 2, 1))
			if gr.Err() == nil {
				t.Errorf("%s: nil fVar accepted", name)
			}
			if n := lik.VariationalExpectations(nil, nil, nil); n != nil && n.Graph() != nil {
				t.Errorf("%s: all-nil operands gave a node of a graph", name)
			}
		}()
		if _, err := lik.LatentDim(0); err == nil {
			t.Errorf("%s: LatentDim(0) accepted", name)
		}
		if l, err := lik.LatentDim(3); err != nil || l != 3 {
			t.Errorf("%s: LatentDim(3) = %d, %v", name, l, err)
		}
	}
}

// TestPredictBadInput: every plain-Go predictive method returns an error (no panic) for bad sizes and non-finite
// values.
func TestPredictBadInput(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for name, lik := range likelihoodsUnderTest(t) {
		mv := func(m, v []float64, n int) func() error {
			return func() error { _, _, err := lik.PredictMeanVar(m, v, n); return err }
		}
		ld := func(m, v, y []float64, n int) func() error {
			return func() error { _, err := lik.PredictLogDensity(m, v, y, n); return err }
		}
		ok := []float64{0.1, 0.2, 0.3, 0.4}
		noPanic(t, name+" MeanVar n=0", mv(ok, ok, 0))
		noPanic(t, name+" MeanVar n=3", mv(ok, ok, 3))
		noPanic(t, name+" MeanVar len", mv(ok, ok[:3], 2))
		noPanic(t, name+" MeanVar empty", mv(nil, nil, 1))
		noPanic(t, name+" MeanVar NaN mean", mv([]float64{0, nan}, []float64{1, 1}, 2))
		noPanic(t, name+" MeanVar Inf var", mv([]float64{0, 0}, []float64{1, math.Inf(1)}, 2))
		noPanic(t, name+" LogDensity y len", ld(ok, ok, ok[:2], 2))
		noPanic(t, name+" LogDensity NaN y", ld([]float64{0, 0}, []float64{1, 1}, []float64{nan, 1}, 2))
		noPanic(t, name+" LogDensity n=-1", ld(ok, ok, ok, -1))
		if _, _, err := lik.PredictMeanVar(ok, ok, 2); err != nil {
			t.Errorf("%s: valid PredictMeanVar: %v", name, err)
		}
		if _, err := lik.PredictLogDensity(ok, ok, []float64{0, 1, 1, 0}, 2); err != nil {
			t.Errorf("%s: valid PredictLogDensity: %v", name, err)
		}
	}
}

// TestQuadratureVEHash: quadrature nodes over the same operands with different likelihoods, constants or point
// counts are distinct nodes with distinct values; the same model built twice is merged.
func TestQuadratureVEHash(t *testing.T) {
	t.Parallel()
	gr := graph.New(graph.Options{})
	mu := gr.Const("mu", []float64{0.3, -0.5, 1.2, 0.1}, 2, 2)
	v := gr.Const("v", []float64{0.4, 1.5, 0.2, 2.5}, 2, 2)
	y := gr.Const("y", []float64{1, 0, 2, 3}, 2, 2)
	s, nu := gr.Scalar("scale", 0.7), gr.Scalar("df", 4)
	nodes := map[string]*graph.Node{
		"bernoulli,20":   gr.QuadratureVE(likelihoods.BernoulliLogLik{}, 20, mu, v, y),
		"bernoulli,5":    gr.QuadratureVE(likelihoods.BernoulliLogLik{}, 5, mu, v, y),
		"poisson,b=1":    gr.QuadratureVE(likelihoods.PoissonLogLik{BinSize: 1}, 20, mu, v, y),
		"poisson,b=2":    gr.QuadratureVE(likelihoods.PoissonLogLik{BinSize: 2}, 20, mu, v, y),
		"poisson,b=2,p3": gr.QuadratureVE(likelihoods.PoissonLogLik{BinSize: 2}, 3, mu, v, y),
		"studentt":       gr.QuadratureVE(likelihoods.StudentTLogLik{}, 20, mu, v, y, s, nu),
		"gaussian":       gr.QuadratureVE(likelihoods.GaussianLogLik{}, 20, mu, v, y, s),
	}
	again := gr.QuadratureVE(likelihoods.PoissonLogLik{}, 20, mu, v, y) // BinSize 0 means 1: same model
	prog, err := gr.CompileForward(nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	if again.Name() != nodes["poisson,b=1"].Name() {
		t.Errorf("Poisson{0} and Poisson{1} not merged: %s vs %s", again.Name(), nodes["poisson,b=1"].Name())
	}
	for a, na := range nodes {
		for b, nb := range nodes {
			if a >= b {
				continue
			}
			if na.Name() == nb.Name() {
				t.Errorf("%s and %s merged into one node %s", a, b, na.Name())
			}
			va, vb := prog.Output(a), prog.Output(b)
			if va[0] == vb[0] && va[1] == vb[1] {
				t.Errorf("%s and %s have equal values %v", a, b, va)
			}
		}
	}
}
