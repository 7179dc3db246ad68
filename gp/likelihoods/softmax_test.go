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
)

func newSoftmax(t *testing.T, k int, rng *rand.Rand) *likelihoods.Softmax {
	t.Helper()
	sm, err := likelihoods.NewSoftmax(likelihoods.SoftmaxConfig{NumClasses: k, Rand: rng})
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

func TestSoftmaxConfig(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	sm := newSoftmax(t, 3, rng)
	if sm.NumSamples() != likelihoods.DefaultSoftmaxSamples || sm.NumClasses() != 3 || sm.Params() != nil {
		t.Errorf("defaults: %v", sm)
	}
	if l, err := sm.LatentDim(1); err != nil || l != 3 {
		t.Errorf("LatentDim(1) = %d, %v", l, err)
	}
	if _, err := sm.LatentDim(3); err == nil {
		t.Error("LatentDim(3) accepted")
	}
	for name, c := range map[string]likelihoods.SoftmaxConfig{
		"nil rng": {NumClasses: 3}, "K=1": {NumClasses: 1, Rand: rng},
		"S<0": {NumClasses: 3, Rand: rng, NumSamples: -1}, "predict S<0": {NumClasses: 3, Rand: rng, PredictSamples: -2},
	} {
		if _, err := likelihoods.NewSoftmax(c); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%s: error %v, want gp.ErrConfig", name, err)
		}
	}
}

// TestSoftmaxLikelihoodGrad: finite differences of −Σ VE with fixed noise (a constant eps through
// VariationalExpectationsWithNoise: with noise redrawn at every run the loss would not be a function of the
// Params).
func TestSoftmaxLikelihoodGrad(t *testing.T) {
	t.Parallel()
	const n, k, s = 4, 3, 5
	rng := rand.New(rand.NewPCG(5, 55))
	mu, v, y := clsData(rng, n, k)
	eps := make([]float64, s*n*k)
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	sm := newSoftmax(t, k, rng)
	prog := clsProgram(t, mu, v, y, n, k, func(g *graph.Graph, fm, fv, yy *graph.Node) *graph.Node {
		return sm.VariationalExpectationsWithNoise(fm, fv, yy, g.Const("eps", eps, s*n, k))
	})
	gradcheck.CheckProgram(t, prog)
}

// TestSoftmaxNoiseLayout: the noise VariationalExpectations draws is S·N·K normals from the generator in row-major
// order of eps [S·N,K] (row s·N + n is sample s of row n): the same seed through VariationalExpectationsWithNoise
// gives the same VE bit for bit. Each run draws fresh noise, and the same seed reproduces the whole sequence.
func TestSoftmaxNoiseLayout(t *testing.T) {
	t.Parallel()
	const n, k = 3, 4
	mu, v, y := clsData(rand.New(rand.NewPCG(6, 6)), n, k)
	veRuns := func(seed uint64, runs int) [][]float64 {
		sm := newSoftmax(t, k, rand.New(rand.NewPCG(seed, 1)))
		prog := clsProgram(t, mu, v, y, n, k, func(_ *graph.Graph, fm, fv, yy *graph.Node) *graph.Node {
			return sm.VariationalExpectations(fm, fv, yy)
		})
		var out [][]float64
		for i := 0; i < runs; i++ {
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			out = append(out, append([]float64(nil), prog.Output("ve")...))
		}
		return out
	}
	a, b := veRuns(42, 3), veRuns(42, 3)
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("run %d: same seed, VE %v vs %v", i, a[i], b[i])
			}
		}
	}
	if a[0][0] == a[1][0] {
		t.Error("two runs gave the same VE: the noise was not redrawn")
	}

	src := rand.New(rand.NewPCG(42, 1))
	s := likelihoods.DefaultSoftmaxSamples
	eps := make([]float64, s*n*k)
	for i := range eps {
		eps[i] = src.NormFloat64()
	}
	sm := newSoftmax(t, k, rand.New(rand.NewPCG(0, 0)))
	prog := clsProgram(t, mu, v, y, n, k, func(g *graph.Graph, fm, fv, yy *graph.Node) *graph.Node {
		return sm.VariationalExpectationsWithNoise(fm, fv, yy, g.Const("eps", eps, s*n, k))
	})
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	for j, got := range prog.Output("ve") {
		// Positive's softplus round trip of v: a few ulps.
		if math.Abs(got-a[0][j]) > 1e-13*math.Abs(got) {
			t.Errorf("row %d: VE with the same noise %.17g, from the generator %.17g", j, got, a[0][j])
		}
	}
}

// TestSoftmaxPredict: with tiny variances the Monte-Carlo predictive is softmax(μ); in general the rows sum to
// 1, the variance is p(1−p), and the log density equals the log of the mean's label entry for the same draws
// (the generator is reseeded between the calls).
func TestSoftmaxPredict(t *testing.T) {
	t.Parallel()
	const n, k = 4, 3
	pcg := rand.NewPCG(9, 9)
	sm := newSoftmax(t, k, rand.New(pcg))
	mu, v, y := clsData(rand.New(rand.NewPCG(2, 3)), n, k)

	tiny := make([]float64, len(v))
	for i := range tiny {
		tiny[i] = 1e-20
	}
	mean, _, err := sm.PredictMeanVar(mu, tiny, n)
	if err != nil {
		t.Fatal(err)
	}
	lpd, err := sm.PredictLogDensity(mu, tiny, y, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		lse := ops.LogSumExp(mu[i*k : (i+1)*k])
		for c := 0; c < k; c++ {
			if want := math.Exp(mu[i*k+c] - lse); math.Abs(mean[i*k+c]-want) > 1e-9 {
				t.Errorf("v≈0, row %d class %d: %v, want softmax %v", i, c, mean[i*k+c], want)
			}
		}
		if want := mu[i*k+int(y[i])] - lse; math.Abs(lpd[i]-want) > 1e-9 {
			t.Errorf("v≈0, row %d: log density %v, want %v", i, lpd[i], want)
		}
	}

	pcg.Seed(1, 1)
	mean, variance, err := sm.PredictMeanVar(mu, v, n)
	if err != nil {
		t.Fatal(err)
	}
	pcg.Seed(1, 1)
	if lpd, err = sm.PredictLogDensity(mu, v, y, n); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		sum := 0.0
		for c := 0; c < k; c++ {
			p := mean[i*k+c]
			sum += p
			if math.Abs(variance[i*k+c]-p*(1-p)) > 1e-15 {
				t.Errorf("row %d class %d: variance %v, want p(1−p)", i, c, variance[i*k+c])
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("row %d: probabilities sum to %v", i, sum)
		}
		if want := math.Log(mean[i*k+int(y[i])]); math.Abs(lpd[i]-want) > 1e-12 {
			t.Errorf("row %d: log density %.15g, log of the mean's entry %.15g", i, lpd[i], want)
		}
	}
}

func TestSoftmaxErrors(t *testing.T) {
	t.Parallel()
	const n, k = 3, 3
	sm := newSoftmax(t, k, rand.New(rand.NewPCG(4, 4)))
	build := func(ms, vs, ys []int) error {
		g := graph.New(graph.Options{})
		sm.VariationalExpectations(g.Input("m", ms...), g.Input("v", vs...), g.Input("y", ys...))
		return g.Err()
	}
	clsNoPanic(t, "K mismatch", func() error { return build([]int{n, 4}, []int{n, 4}, []int{n, 1}) })
	clsNoPanic(t, "y columns", func() error { return build([]int{n, k}, []int{n, k}, []int{n, 2}) })
	clsNoPanic(t, "fVar rows", func() error { return build([]int{n, k}, []int{n - 1, k}, []int{n, 1}) })
	clsNoPanic(t, "noise shape", func() error {
		g := graph.New(graph.Options{})
		sm.VariationalExpectationsWithNoise(g.Input("m", n, k), g.Input("v", n, k), g.Input("y", n, 1), g.Input("e", n+1, k))
		return g.Err()
	})
	if err := build([]int{n, k}, []int{n, k}, []int{n, 1}); err != nil {
		t.Errorf("valid shapes: %v", err)
	}

	mu, v, _ := clsData(rand.New(rand.NewPCG(1, 1)), n, k)
	prog := clsProgram(t, mu, v, []float64{0, 3, 1}, n, k, func(_ *graph.Graph, fm, fv, yy *graph.Node) *graph.Node {
		return sm.VariationalExpectations(fm, fv, yy)
	})
	clsNoPanic(t, "run with label 3", func() error {
		err := prog.Run()
		if err != nil && !errors.Is(err, ops.ErrLabel) {
			t.Errorf("error %v, want ops.ErrLabel", err)
		}
		return err
	})
	clsNoPanic(t, "PredictMeanVar K", func() error { _, _, err := sm.PredictMeanVar(mu[:4], v[:4], 2); return err })
	clsNoPanic(t, "PredictMeanVar Inf", func() error {
		vv := append([]float64(nil), v...)
		vv[0] = math.Inf(1)
		_, _, err := sm.PredictMeanVar(mu, vv, n)
		return err
	})
	for _, bad := range [][]float64{{0, 1, 3}, {0, 1}, {-1, 0, 1}, {0.5, 0, 1}} {
		clsNoPanic(t, "PredictLogDensity labels", func() error { _, err := sm.PredictLogDensity(mu, v, bad, n); return err })
	}
}
