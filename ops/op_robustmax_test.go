package ops_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const rmPoints = 20 // the likelihood's default number of Gauss–Hermite points

// rmLabels returns a label input [n,1] with uniform labels in 0..k−1 (held fixed by gradcheck).
func rmLabels(rng *rand.Rand, n, k int) gradcheck.Input {
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(k))
	}
	return gradcheck.Input{Name: "y", Shape: []int{n, 1}, Value: y, NoGrad: true}
}

func TestRobustMaxVEGrad(t *testing.T) {
	t.Parallel()
	for _, k := range []int{3, 10} {
		for _, points := range []int{rmPoints, 7} {
			t.Run(fmt.Sprintf("K=%d,points=%d", k, points), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(uint64(k), uint64(points)))
				const n = 5
				ins := []gradcheck.Input{
					gradcheck.Random("mu", rng, -2, 2, n, k),
					gradcheck.Random("v", rng, 0.05, 2, n, k),
					rmLabels(rng, n, k),
				}
				worst := gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
					return ops.RobustMaxVE(in[0], in[1], in[2], 1e-3, points)
				}, ins)
				t.Logf("worst relative error %.3g", worst)
			})
		}
	}
}

// TestRobustMaxVEGradTails: a label whose mean lies far below the others (P tiny, the product of Φ's deep in
// the lower tail, computed in log space) and one far above (P ≈ 1).
func TestRobustMaxVEGradTails(t *testing.T) {
	t.Parallel()
	ins := []gradcheck.Input{
		{Name: "mu", Shape: []int{2, 4}, Value: []float64{-6, 3, 2.5, 4, 5, -3, -2, -4}},
		{Name: "v", Shape: []int{2, 4}, Value: []float64{0.3, 0.5, 1.2, 0.8, 0.4, 1, 0.2, 1.5}},
		{Name: "y", Shape: []int{2, 1}, Value: []float64{0, 0}, NoGrad: true},
	}
	gradcheck.Check(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return ops.RobustMaxVE(in[0], in[1], in[2], 1e-2, rmPoints)
	}, ins)
}

// mcArgmax estimates P(argmax f = y), f ~ N(mu, diag v), from n seeded samples, and its standard error.
func mcArgmax(rng *rand.Rand, mu, v []float64, y, n int) (p, se float64) {
	hits := 0
	for s := 0; s < n; s++ {
		best, arg := math.Inf(-1), -1
		for j := range mu {
			if f := mu[j] + math.Sqrt(v[j])*rng.NormFloat64(); f > best {
				best, arg = f, j
			}
		}
		if arg == y {
			hits++
		}
	}
	p = float64(hits) / float64(n)
	return p, math.Sqrt(p * (1 - p) / float64(n))
}

// TestRobustMaxQuadratureVsMonteCarlo: P by quadrature (read off the op's value and from RobustMaxArgmaxProb)
// agrees with a Monte-Carlo estimate from 1e5 seeded samples within 3 standard errors, including rows whose label
// is not the argmax of μ.
func TestRobustMaxQuadratureVsMonteCarlo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		mu   []float64
		v    []float64
		y    int
	}{
		{"label is argmax", []float64{1.5, 0.2, -0.4}, []float64{0.5, 1.0, 0.7}, 0},
		{"label not argmax", []float64{0.3, 1.2, -0.5}, []float64{0.8, 0.4, 1.5}, 0},
		{"label not argmax, lowest mean", []float64{0.7, -0.2, 0.4, -0.6}, []float64{0.6, 0.9, 0.3, 1.8}, 3},
		{"K=2", []float64{-0.3, 0.4}, []float64{1.1, 0.6}, 0},
		{"K=10", []float64{0.1, 0.5, -0.3, 0.9, 0.2, -0.8, 0.4, 0.0, -0.1, 0.6}, []float64{1, 0.5, 0.8, 0.3, 1.2, 0.9, 0.7, 0.4, 1.1, 0.6}, 1},
	}
	const eps, n = 1e-3, 100000
	rng := rand.New(rand.NewPCG(2011, 4))
	for _, c := range cases {
		k := len(c.mu)
		// P from the op: VE = log(ε/(K−1)) + P·(log(1−ε) − log(ε/(K−1))).
		_, ve := ewEval(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return ops.RobustMaxVE(in[0], in[1], in[2], eps, rmPoints)
		}, ewIn("mu", []int{1, k}, c.mu...), ewIn("v", []int{1, k}, c.v...), ewIn("y", []int{1, 1}, float64(c.y)))
		hit, miss := math.Log1p(-eps), math.Log(eps/float64(k-1))
		pOp := (ve[0] - miss) / (hit - miss)
		pQ, err := ops.RobustMaxArgmaxProb(c.mu, c.v, c.y, rmPoints)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(pOp-pQ) > 1e-12 {
			t.Errorf("%s: P from the op %v, from RobustMaxArgmaxProb %v", c.name, pOp, pQ)
		}
		pMC, se := mcArgmax(rng, c.mu, c.v, c.y, n)
		if math.Abs(pQ-pMC) > 3*se {
			t.Errorf("%s: quadrature P = %.5f, Monte Carlo %.5f ± %.5f (more than 3 standard errors apart)", c.name, pQ, pMC, se)
		}
		t.Logf("%s: quadrature %.5f, MC %.5f ± %.5f", c.name, pQ, pMC, se)
	}
}

// TestRobustMaxProbsSum: the predictive probabilities sum to 1 up to rounding (RobustMaxProbs normalises the P_k),
// while the raw P_k = P(argmax f = k) sum to 1 only up to the quadrature error. The integrand Π_j Φ((u−μ_j)/√v_j)
// is a smooth step in the Gauss–Hermite variable x of width about √(v_j/2v_y), and for a label whose mean is low it
// lives in the upper tail of x, where the nodes are sparse; so the error grows with the spread of the variances
// and with K. The tolerances are about twice the worst error measured over 200 random rows (means in [−2, 2]) per
// setting: with 20 points, v ∈ [0.5, 2] gives 3e-5 (K = 3) and 5e-4 (K = 10); v ∈ [0.05, 2] gives 2e-2; 100 points
// with v ∈ [0.5, 2] give 3e-10.
func TestRobustMaxProbsSum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	for _, tc := range []struct {
		lo, hi float64
		k, pts int
		tol    float64
	}{
		{0.5, 2, 3, rmPoints, 1e-4}, {0.5, 2, 10, rmPoints, 1e-3},
		{0.05, 2, 3, rmPoints, 4e-2}, {0.05, 2, 10, rmPoints, 4e-2},
		{0.5, 2, 2, 100, 1e-9}, {0.5, 2, 10, 100, 1e-9},
	} {
		for rep := 0; rep < 20; rep++ {
			k := tc.k
			mu, v := make([]float64, k), make([]float64, k)
			for j := range mu {
				mu[j] = 4*rng.Float64() - 2
				v[j] = tc.lo + (tc.hi-tc.lo)*rng.Float64()
			}
			sumP := 0.0
			for c := 0; c < k; c++ {
				p, err := ops.RobustMaxArgmaxProb(mu, v, c, tc.pts)
				if err != nil {
					t.Fatal(err)
				}
				sumP += p
			}
			if math.Abs(sumP-1) > tc.tol {
				t.Errorf("K=%d, v∈[%g,%g], %d points: Σ_k P_k = %.10f, want 1 ± %g", k, tc.lo, tc.hi, tc.pts, sumP, tc.tol)
			}
			probs := make([]float64, k)
			if err := ops.RobustMaxProbs(mu, v, k, 1e-3, tc.pts, probs); err != nil {
				t.Fatal(err)
			}
			s := 0.0
			for _, p := range probs {
				if !(p > 0 && p < 1) {
					t.Errorf("probability %v outside (0, 1)", p)
				}
				s += p
			}
			if math.Abs(s-1) > 1e-14 {
				t.Errorf("K=%d: Σ p(y=k) = %.17g, want 1", k, s)
			}
		}
	}
}

func TestRobustMaxProbsErrors(t *testing.T) {
	t.Parallel()
	dst := make([]float64, 3)
	mu, v := []float64{0, 1, 2}, []float64{1, 1, 1}
	bad := map[string]func() error{
		"k mismatch":  func() error { return ops.RobustMaxProbs(mu, v, 2, 1e-3, 20, dst) },
		"v length":    func() error { return ops.RobustMaxProbs(mu, v[:2], 3, 1e-3, 20, dst) },
		"dst length":  func() error { return ops.RobustMaxProbs(mu, v, 3, 1e-3, 20, dst[:2]) },
		"eps 0":       func() error { return ops.RobustMaxProbs(mu, v, 3, 0, 20, dst) },
		"eps 1":       func() error { return ops.RobustMaxProbs(mu, v, 3, 1, 20, dst) },
		"points 0":    func() error { return ops.RobustMaxProbs(mu, v, 3, 1e-3, 0, dst) },
		"NaN mean":    func() error { return ops.RobustMaxProbs([]float64{0, math.NaN(), 1}, v, 3, 1e-3, 20, dst) },
		"K=1":         func() error { return ops.RobustMaxProbs(mu[:1], v[:1], 1, 1e-3, 20, dst[:1]) },
		"class range": func() error { _, err := ops.RobustMaxArgmaxProb(mu, v, 3, 20); return err },
	}
	for name, f := range bad {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// rmRunErr builds RobustMaxVE on the given labels and returns the error of the forward run.
func rmRunErr(t *testing.T, y []float64, mu []float64) error {
	t.Helper()
	g := G.NewGraph()
	n := len(y)
	k := len(mu) / n
	leaf := func(name string, v []float64, shape ...int) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
	}
	v := make([]float64, len(mu))
	for i := range v {
		v[i] = 1
	}
	out, err := ops.RobustMaxVE(leaf("mu", mu, n, k), leaf("v", v, n, k), leaf("y", y, n, 1), 1e-3, 20)
	if err != nil {
		t.Fatal(err)
	}
	_ = out
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	return ops.UnwrapVM(vm.RunAll())
}

func TestRobustMaxVEBadLabels(t *testing.T) {
	t.Parallel()
	mu := []float64{0, 1, 2, 3, 4, 5}
	for _, y := range [][]float64{{0, 3}, {-1, 0}, {0.5, 1}, {math.NaN(), 0}, {math.Inf(1), 0}} {
		err := rmRunErr(t, y, mu)
		if !errors.Is(err, ops.ErrLabel) {
			t.Errorf("labels %v: error %v, want ErrLabel", y, err)
		}
	}
	if err := rmRunErr(t, []float64{0, 2}, mu); err != nil {
		t.Errorf("valid labels: %v", err)
	}
	if err := rmRunErr(t, []float64{0, 2}, []float64{0, math.NaN(), 2, 3, 4, 5}); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("NaN mean: error %v, want ErrNonFinite", err)
	}
}

func TestRobustMaxVEBuildErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m := func(name string, s ...int) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithName(name))
	}
	mu, v, y := m("mu", 4, 3), m("v", 4, 3), m("y", 4, 1)
	cases := map[string]func() (*G.Node, error){
		"eps 0":     func() (*G.Node, error) { return ops.RobustMaxVE(mu, v, y, 0, 20) },
		"eps NaN":   func() (*G.Node, error) { return ops.RobustMaxVE(mu, v, y, math.NaN(), 20) },
		"points 0":  func() (*G.Node, error) { return ops.RobustMaxVE(mu, v, y, 1e-3, 0) },
		"v shape":   func() (*G.Node, error) { return ops.RobustMaxVE(mu, m("v2", 4, 2), y, 1e-3, 20) },
		"y shape":   func() (*G.Node, error) { return ops.RobustMaxVE(mu, v, m("y2", 3, 1), 1e-3, 20) },
		"y 2 cols":  func() (*G.Node, error) { return ops.RobustMaxVE(mu, v, m("y3", 4, 2), 1e-3, 20) },
		"K=1":       func() (*G.Node, error) { return ops.RobustMaxVE(m("mu1", 4, 1), m("v1", 4, 1), y, 1e-3, 20) },
		"vector mu": func() (*G.Node, error) { return ops.RobustMaxVE(m("muv", 4), m("vv", 4), y, 1e-3, 20) },
		"nil":       func() (*G.Node, error) { return ops.RobustMaxVE(nil, v, y, 1e-3, 20) },
	}
	for name, f := range cases {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ops.RobustMaxVE(mu, v, m("yv", 4), 1e-3, 20); err != nil {
		t.Errorf("labels [N]: %v", err)
	}
}

// TestHashRobustMaxVE: ε and the number of points are in the hash, so variants over the same operands never merge.
func TestHashRobustMaxVE(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	mu := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("mu"))
	v := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("v"))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 1), G.WithName("y"))
	variants := []struct {
		eps    float64
		points int
	}{{1e-3, 20}, {1e-2, 20}, {1e-3, 21}, {1.0000000001e-3, 20}, {1e-3, 10}}
	nodes := make([]*G.Node, len(variants))
	for i, c := range variants {
		n, err := ops.RobustMaxVE(mu, v, y, c.eps, c.points)
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
	}
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			if nodes[i] == nodes[j] || nodes[i].Hashcode() == nodes[j].Hashcode() {
				t.Errorf("variants %v and %v merged or share a hash", variants[i], variants[j])
			}
		}
	}
	again, err := ops.RobustMaxVE(mu, v, y, 1e-3, 20)
	if err != nil {
		t.Fatal(err)
	}
	if again != nodes[0] {
		t.Error("the same RobustMaxVE built twice was not merged")
	}
}
