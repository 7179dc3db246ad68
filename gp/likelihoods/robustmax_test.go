package likelihoods_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
)

// Helpers of the multiclass likelihood tests (prefix cls).

// clsData returns means in [−2, 2), variances in [0.05, 2) ([n,k], row-major) and uniform labels [n].
func clsData(rng *rand.Rand, n, k int) (mu, v, y []float64) {
	mu, v, y = make([]float64, n*k), make([]float64, n*k), make([]float64, n)
	for i := range mu {
		mu[i] = 4*rng.Float64() - 2
		v[i] = 0.05 + 1.95*rng.Float64()
	}
	for i := range y {
		y[i] = float64(rng.IntN(k))
	}
	return mu, v, y
}

// clsProgram builds the loss −Σ_n VE_n with μ (Identity) and v (Positive) as Params and the labels as input "y"
// [n,1], and returns the compiled program (labels set) and the VE node's output name "ve".
func clsProgram(t *testing.T, mu, v, y []float64, n, k int,
	ve func(g *graph.Graph, fm, fv, yy *graph.Node) *graph.Node) *graph.Program {
	t.Helper()
	pm, err := graph.NewParam("f.mu", mu, graph.Identity{}, n, k)
	if err != nil {
		t.Fatal(err)
	}
	pv, err := graph.NewParam("f.var", v, graph.Positive{}, n, k)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	e := ve(g, g.Param(pm), g.Param(pv), g.Input("y", n, 1))
	prog, err := g.Compile(g.Neg(g.Sum(e)), map[string]*graph.Node{"ve": e})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	if err := prog.Set("y", y); err != nil {
		t.Fatal(err)
	}
	return prog
}

// clsNoPanic fails t if f panics or returns no error.
func clsNoPanic(t *testing.T, name string, f func() error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v", name, r)
		}
	}()
	if err := f(); err == nil {
		t.Errorf("%s: no error", name)
	}
}

func newRobustMax(t *testing.T, k int) *likelihoods.RobustMax {
	t.Helper()
	r, err := likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: k})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRobustMaxConfig(t *testing.T) {
	t.Parallel()
	r := newRobustMax(t, 4)
	if r.Epsilon() != likelihoods.DefaultRobustMaxEpsilon || r.NumClasses() != 4 {
		t.Errorf("defaults: %v", r)
	}
	if !strings.Contains(r.String(), "quadPoints=20") {
		t.Errorf("String %q does not show the default 20 quadrature points", r.String())
	}
	if l, err := r.LatentDim(1); err != nil || l != 4 {
		t.Errorf("LatentDim(1) = %d, %v; want 4", l, err)
	}
	if _, err := r.LatentDim(2); err == nil {
		t.Error("LatentDim(2) accepted")
	}
	if r.Params() != nil {
		t.Error("Params not nil")
	}
	for name, c := range map[string]likelihoods.RobustMaxConfig{
		"K=0": {}, "K=1": {NumClasses: 1}, "eps=1": {NumClasses: 3, Epsilon: 1}, "eps<0": {NumClasses: 3, Epsilon: -0.1},
		"eps NaN": {NumClasses: 3, Epsilon: math.NaN()}, "points<0": {NumClasses: 3, QuadPoints: -1},
	} {
		if _, err := likelihoods.NewRobustMax(c); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%s: error %v, want gp.ErrConfig", name, err)
		}
	}
}

// TestRobustMaxLikelihoodGrad: central finite differences of −Σ VE with respect to the raw μ and v Params.
func TestRobustMaxLikelihoodGrad(t *testing.T) {
	t.Parallel()
	for _, k := range []int{3, 10} {
		rng := rand.New(rand.NewPCG(uint64(k), 77))
		const n = 4
		mu, v, y := clsData(rng, n, k)
		r := newRobustMax(t, k)
		prog := clsProgram(t, mu, v, y, n, k, func(g *graph.Graph, fm, fv, yy *graph.Node) *graph.Node {
			return r.VariationalExpectations(fm, fv, yy)
		})
		gradcheck.CheckProgram(t, prog)
		// The VE values are P·log(1−ε) + (1−P)·log(ε/(K−1)) with P from ops.RobustMaxArgmaxProb.
		ve := prog.Output("ve")
		eps := r.Epsilon()
		for i := 0; i < n; i++ {
			p, err := ops.RobustMaxArgmaxProb(mu[i*k:(i+1)*k], v[i*k:(i+1)*k], int(y[i]), ops.DefaultQuadPoints)
			if err != nil {
				t.Fatal(err)
			}
			// v went through softplus⁻¹ and softplus: a few ulps.
			want := p*math.Log1p(-eps) + (1-p)*math.Log(eps/float64(k-1))
			if math.Abs(ve[i]-want) > 1e-12*math.Abs(want) {
				t.Errorf("K=%d row %d: VE %.17g, want %.17g", k, i, ve[i], want)
			}
		}
	}
}

func TestRobustMaxPredict(t *testing.T) {
	t.Parallel()
	const n, k = 5, 4
	rng := rand.New(rand.NewPCG(3, 33))
	mu, v, y := clsData(rng, n, k)
	r := newRobustMax(t, k)
	mean, variance, err := r.PredictMeanVar(mu, v, n)
	if err != nil {
		t.Fatal(err)
	}
	lpd, err := r.PredictLogDensity(mu, v, y, n)
	if err != nil {
		t.Fatal(err)
	}
	eps := r.Epsilon()
	for i := 0; i < n; i++ {
		// Direct computation: P_c by quadrature, normalised, then (1−ε)P + (ε/(K−1))(1−P).
		ps := make([]float64, k)
		sum, rowSum := 0.0, 0.0
		for c := range ps {
			if ps[c], err = ops.RobustMaxArgmaxProb(mu[i*k:(i+1)*k], v[i*k:(i+1)*k], c, ops.DefaultQuadPoints); err != nil {
				t.Fatal(err)
			}
			sum += ps[c]
		}
		for c := range ps {
			p := ps[c] / sum
			want := (1-eps)*p + eps/(k-1)*(1-p)
			got := mean[i*k+c]
			rowSum += got
			if math.Abs(got-want) > 1e-14 {
				t.Errorf("row %d class %d: p %.17g, want %.17g", i, c, got, want)
			}
			if math.Abs(variance[i*k+c]-got*(1-got)) > 1e-15 {
				t.Errorf("row %d class %d: variance %v, want p(1−p)", i, c, variance[i*k+c])
			}
			if c == int(y[i]) && math.Abs(lpd[i]-math.Log(want)) > 1e-13 {
				t.Errorf("row %d: log density %.17g, want %.17g", i, lpd[i], math.Log(want))
			}
		}
		if math.Abs(rowSum-1) > 1e-14 {
			t.Errorf("row %d: probabilities sum to %.17g", i, rowSum)
		}
	}
}

// TestRobustMaxErrors: bad shapes are recorded in the graph, bad labels fail the run (ops.ErrLabel), and the
// plain-Go predictive methods return errors; nothing panics.
func TestRobustMaxErrors(t *testing.T) {
	t.Parallel()
	const n, k = 3, 3
	r := newRobustMax(t, k)
	build := func(ms, vs, ys []int) error {
		g := graph.New(graph.Options{})
		out := r.VariationalExpectations(g.Input("m", ms...), g.Input("v", vs...), g.Input("y", ys...))
		if out == nil {
			return errors.New("nil node")
		}
		return g.Err()
	}
	clsNoPanic(t, "K mismatch", func() error { return build([]int{n, 2}, []int{n, 2}, []int{n, 1}) })
	clsNoPanic(t, "fVar shape", func() error { return build([]int{n, k}, []int{n + 1, k}, []int{n, 1}) })
	clsNoPanic(t, "y columns", func() error { return build([]int{n, k}, []int{n, k}, []int{n, k}) })
	clsNoPanic(t, "y rows", func() error { return build([]int{n, k}, []int{n, k}, []int{n + 1, 1}) })
	clsNoPanic(t, "vector fMean", func() error { return build([]int{n}, []int{n, k}, []int{n, 1}) })
	clsNoPanic(t, "nil operands", func() error {
		g := graph.New(graph.Options{})
		r.VariationalExpectations(nil, g.Input("v", n, k), nil)
		return g.Err()
	})
	if r.VariationalExpectations(nil, nil, nil) != nil {
		t.Error("all-nil operands: want a nil node")
	}
	if err := build([]int{n, k}, []int{n, k}, []int{n, 1}); err != nil {
		t.Errorf("valid shapes: %v", err)
	}

	rng := rand.New(rand.NewPCG(1, 1))
	mu, v, _ := clsData(rng, n, k)
	prog := clsProgram(t, mu, v, []float64{0, 1, 2}, n, k, func(g *graph.Graph, fm, fv, yy *graph.Node) *graph.Node {
		return r.VariationalExpectations(fm, fv, yy)
	})
	if err := prog.Run(); err != nil {
		t.Fatalf("valid labels: %v", err)
	}
	for _, bad := range [][]float64{{0, 1, 3}, {-1, 0, 0}, {0, 1.5, 2}} {
		if err := prog.Set("y", bad); err != nil {
			t.Fatal(err)
		}
		clsNoPanic(t, "run with labels", func() error {
			err := prog.Run()
			if err != nil && !errors.Is(err, ops.ErrLabel) {
				t.Errorf("labels %v: error %v, want ops.ErrLabel", bad, err)
			}
			return err
		})
	}

	clsNoPanic(t, "PredictMeanVar size", func() error { _, _, err := r.PredictMeanVar(mu[:5], v[:5], n); return err })
	clsNoPanic(t, "PredictMeanVar K", func() error { _, _, err := r.PredictMeanVar(mu[:6], v[:6], n); return err })
	clsNoPanic(t, "PredictMeanVar n=0", func() error { _, _, err := r.PredictMeanVar(mu, v, 0); return err })
	clsNoPanic(t, "PredictMeanVar NaN", func() error {
		m := append([]float64(nil), mu...)
		m[4] = math.NaN()
		_, _, err := r.PredictMeanVar(m, v, n)
		return err
	})
	for _, bad := range [][]float64{{0, 1, 3}, {0, 1}, {0, -1, 1}, {0, 0.5, 1}, {0, math.NaN(), 1}} {
		clsNoPanic(t, "PredictLogDensity labels", func() error { _, err := r.PredictLogDensity(mu, v, bad, n); return err })
	}
}
