package ops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func softmaxVE(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
	return ops.SoftmaxMCVE(in[0], in[1], in[2], in[3])
}

// smNoise returns a fixed standard-normal noise input [s·n, k] (data: not differentiated).
func smNoise(rng *rand.Rand, s, n, k int) gradcheck.Input {
	e := make([]float64, s*n*k)
	for i := range e {
		e[i] = rng.NormFloat64()
	}
	return gradcheck.Input{Name: "eps", Shape: []int{s * n, k}, Value: e, NoGrad: true}
}

func TestSoftmaxMCVEGrad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ n, k, s int }{{4, 3, 3}, {3, 10, 2}, {5, 2, 1}} {
		rng := rand.New(rand.NewPCG(uint64(c.k), uint64(c.s)))
		ins := []gradcheck.Input{
			gradcheck.Random("mu", rng, -2, 2, c.n, c.k),
			gradcheck.Random("v", rng, 0.05, 2, c.n, c.k),
			rmLabels(rng, c.n, c.k),
			smNoise(rng, c.s, c.n, c.k),
		}
		gradcheck.Check(t, softmaxVE, ins)
	}
}

// TestSoftmaxMCVEValue compares the op with a direct evaluation of (1/S) Σ_s log softmax(μ + √v ε_s)_y, and checks
// that huge logits (e^1000 overflows) give a finite value: the maximum stays outside the logarithm.
func TestSoftmaxMCVEValue(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	const n, k, s = 3, 4, 5
	mu := gradcheck.Random("mu", rng, -2, 2, n, k)
	v := gradcheck.Random("v", rng, 0.1, 1, n, k)
	y := rmLabels(rng, n, k)
	eps := smNoise(rng, s, n, k)
	_, got := ewEval(t, softmaxVE, mu, v, y, eps)
	for r := 0; r < n; r++ {
		want := 0.0
		for si := 0; si < s; si++ {
			f := make([]float64, k)
			for j := range f {
				f[j] = mu.Value[r*k+j] + math.Sqrt(v.Value[r*k+j])*eps.Value[(si*n+r)*k+j]
			}
			want += f[int(y.Value[r])] - ops.LogSumExp(f)
		}
		want /= s
		if math.Abs(got[r]-want) > 1e-13*math.Max(1, math.Abs(want)) {
			t.Errorf("row %d: %.17g, want %.17g", r, got[r], want)
		}
	}
	_, big := ewEval(t, softmaxVE, ewIn("mu", []int{1, 3}, 1000, 998, -1000), ewIn("v", []int{1, 3}, 0, 0, 0),
		ewIn("y", []int{1, 1}, 1), ewIn("eps", []int{1, 3}, 0, 0, 0))
	if want := -math.Log1p(math.Exp(2)); math.Abs(big[0]-want) > 1e-12 {
		t.Errorf("huge logits: %v, want %v", big[0], want)
	}
}

// TestSoftmaxMCVEBinary: for K = 2 with v = 0 on the second class, the VE is the 1-D expectation
// E[log σ(f_y − f_other)]; with many samples the Monte-Carlo mean matches a fine deterministic quadrature within 4
// standard errors.
func TestSoftmaxMCVEBinary(t *testing.T) {
	t.Parallel()
	const s = 20000
	rng := rand.New(rand.NewPCG(12, 1))
	eps := smNoise(rng, s, 1, 2)
	for i := 1; i < len(eps.Value); i += 2 {
		eps.Value[i] = 0
	}
	mu0, v0, mu1 := 0.4, 1.3, -0.2
	_, got := ewEval(t, softmaxVE, ewIn("mu", []int{1, 2}, mu0, mu1), ewIn("v", []int{1, 2}, v0, 0),
		ewIn("y", []int{1, 1}, 0), eps)
	// E[−log(1 + e^{−(f0 − mu1)})], f0 ~ N(mu0, v0), by the trapezoid rule on ±10 sd and the sample variance.
	g := func(f float64) float64 { return -ops.Log1pExp(-(f - mu1)) }
	want, m2 := 0.0, 0.0
	const steps = 20000
	h := 20 * math.Sqrt(v0) / steps
	for i := 0; i <= steps; i++ {
		f := mu0 - 10*math.Sqrt(v0) + float64(i)*h
		w := h * math.Exp(-(f-mu0)*(f-mu0)/(2*v0)) / math.Sqrt(2*math.Pi*v0)
		if i == 0 || i == steps {
			w /= 2
		}
		want += w * g(f)
		m2 += w * g(f) * g(f)
	}
	se := math.Sqrt((m2 - want*want) / s)
	if math.Abs(got[0]-want) > 4*se {
		t.Errorf("MC VE %v, quadrature %v ± %v", got[0], want, se)
	}
}

func TestSoftmaxMCVEErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m := func(name string, s ...int) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithName(name))
	}
	mu, v, y, e := m("mu", 4, 3), m("v", 4, 3), m("y", 4, 1), m("e", 8, 3)
	for name, args := range map[string][4]*G.Node{
		"eps rows":  {mu, v, y, m("e2", 6, 3)},
		"eps cols":  {mu, v, y, m("e3", 8, 2)},
		"eps short": {m("mu5", 5, 3), m("v5", 5, 3), m("y5", 5, 1), m("e4", 4, 3)},
		"v shape":   {mu, m("v2", 3, 3), y, e},
		"y shape":   {mu, v, m("y2", 4, 3), e},
		"nil":       {mu, v, y, nil},
	} {
		if _, err := ops.SoftmaxMCVE(args[0], args[1], args[2], args[3]); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Run-time label error.
	run := func(y, v []float64) error {
		g := G.NewGraph()
		leaf := func(name string, x []float64, s ...int) *G.Node {
			return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithName(name),
				G.WithValue(tensor.New(tensor.WithShape(s...), tensor.WithBacking(x))))
		}
		if _, err := ops.SoftmaxMCVE(leaf("mu", []float64{0, 1, 2, 3}, 2, 2), leaf("v", v, 2, 2), leaf("y", y, 2, 1),
			leaf("e", []float64{0.1, 0.2, 0.3, 0.4}, 2, 2)); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		return ops.UnwrapVM(vm.RunAll())
	}
	ones := []float64{1, 1, 1, 1}
	if err := run([]float64{0, 2}, ones); !errors.Is(err, ops.ErrLabel) {
		t.Errorf("label 2 of 2 classes: %v, want ErrLabel", err)
	}
	if err := run([]float64{0, 1}, []float64{1, math.NaN(), 1, 1}); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("NaN variance: %v, want ErrNonFinite", err)
	}
	if err := run([]float64{0, 1}, ones); err != nil {
		t.Errorf("valid: %v", err)
	}
}
