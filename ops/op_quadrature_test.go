package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// qGauss is log N(y | f, θ₀) with θ₀ the variance: its expectation has the closed form
// −½log 2πθ₀ − ((y − μ)² + v)/(2θ₀), which Gauss–Hermite integrates exactly (a quadratic in f).
type qGauss struct{}

func (qGauss) Name() string  { return "test.Gauss" }
func (qGauss) NumTheta() int { return 1 }
func (qGauss) LogProb(f, y float64, th []float64) float64 {
	return -0.5*math.Log(2*math.Pi*th[0]) - 0.5*(y-f)*(y-f)/th[0]
}
func (qGauss) DLogProbDF(f, y float64, th []float64) float64 { return (y - f) / th[0] }
func (qGauss) DLogProbDTheta(f, y float64, th []float64, dst []float64) {
	dst[0] = -0.5/th[0] + 0.5*(y-f)*(y-f)/(th[0]*th[0])
}

// qWiggle is a smooth non-polynomial model with two parameters, θ₀·sin(f·y) − θ₁·e^{f/2}: every gradient path of
// the op (mu, v and two thetas) is exercised with non-trivial values.
type qWiggle struct{ c float64 }

func (q qWiggle) Name() string { return fmt.Sprintf("test.Wiggle{c=%v}", q.c) }
func (qWiggle) NumTheta() int  { return 2 }
func (q qWiggle) LogProb(f, y float64, th []float64) float64 {
	return th[0]*math.Sin(f*y+q.c) - th[1]*math.Exp(f/2)
}
func (q qWiggle) DLogProbDF(f, y float64, th []float64) float64 {
	return th[0]*y*math.Cos(f*y+q.c) - 0.5*th[1]*math.Exp(f/2)
}
func (q qWiggle) DLogProbDTheta(f, y float64, th []float64, dst []float64) {
	dst[0], dst[1] = math.Sin(f*y+q.c), -math.Exp(f/2)
}

// qConst is c·f·y with no parameter (for hash tests).
type qConst struct{ c float64 }

func (q qConst) Name() string                                        { return fmt.Sprintf("test.Const{c=%v}", q.c) }
func (qConst) NumTheta() int                                         { return 0 }
func (q qConst) LogProb(f, y float64, _ []float64) float64           { return q.c * f * y }
func (q qConst) DLogProbDF(_, y float64, _ []float64) float64        { return q.c * y }
func (qConst) DLogProbDTheta(_, _ float64, _ []float64, _ []float64) {}

func quadBuild(lik ops.ScalarLogLik, points int) gradcheck.Build {
	return func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return ops.QuadratureVE(lik, points, in[0], in[1], in[2], in[3:]...)
	}
}

func TestQuadratureVEGaussianClosedForm(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	mu := gradcheck.Random("mu", rng, -2, 2, 4, 3)
	v := gradcheck.Random("v", rng, 0.01, 2, 4, 3)
	y := gradcheck.Random("y", rng, -2, 2, 4, 3)
	s2 := 0.7
	shape, got := ewEval(t, quadBuild(qGauss{}, ops.DefaultQuadPoints), mu, v, y, ewIn("s2", nil, s2))
	if !shape.Eq(tensor.Shape{4}) {
		t.Fatalf("shape %v, want [4]", shape)
	}
	want := make([]float64, 4)
	for n := range want {
		for l := 0; l < 3; l++ {
			j := n*3 + l
			r := y.Value[j] - mu.Value[j]
			want[n] += -0.5*math.Log(2*math.Pi*s2) - (r*r+v.Value[j])/(2*s2)
		}
	}
	ewClose(t, "QuadratureVE(Gauss)", got, want, 1e-12)
}

func TestQuadratureVEGradients(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	mu := gradcheck.Random("mu", rng, -1.5, 1.5, 5, 2)
	v := gradcheck.Random("v", rng, 0.05, 1.5, 5, 2)
	y := gradcheck.Random("y", rng, -1, 1, 5, 2)
	y.NoGrad = true
	gradcheck.Check(t, quadBuild(qGauss{}, 10), []gradcheck.Input{mu, v, y, ewIn("s2", nil, 0.8)})
	gradcheck.Check(t, quadBuild(qWiggle{c: 0.3}, ops.DefaultQuadPoints), []gradcheck.Input{mu, v, y, ewIn("a", nil, 1.3), ewIn("b", nil, 0.4)})
}

// TestQuadratureVEZeroVariance: at v = 0 the expectation is g(μ), the μ-gradient g′(μ), and the v-gradient is
// taken at QuadVarGradFloor: finite and ≈ ½g″(μ) (here ½·(−1/θ₀) for the Gaussian model). Negative variances
// count as 0.
func TestQuadratureVEZeroVariance(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	mu := ewLeaf(g, ewIn("mu", []int{2, 1}, 0.3, -0.2))
	v := ewLeaf(g, ewIn("v", []int{2, 1}, 0, -1e-15))
	y := ewLeaf(g, ewIn("y", []int{2, 1}, 1, 0.5))
	s2 := ewLeaf(g, ewIn("s2", nil, 0.5))
	ve, err := ops.QuadratureVE(qGauss{}, ops.DefaultQuadPoints, mu, v, y, s2)
	if err != nil {
		t.Fatal(err)
	}
	loss, _ := ops.Sum(ve)
	grads, err := G.Grad(loss, mu, v)
	if err != nil {
		t.Fatal(err)
	}
	var val G.Value
	G.Read(ve, &val)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	out := val.(*tensor.Dense).Float64s()
	gm := grads[0].Value().(*tensor.Dense).Float64s()
	gv := grads[1].Value().(*tensor.Dense).Float64s()
	ys, ms := []float64{1, 0.5}, []float64{0.3, -0.2}
	for i := range 2 {
		r := ys[i] - ms[i]
		ewClose(t, "VE at v=0", out[i:i+1], []float64{-0.5*math.Log(2*math.Pi*0.5) - r*r/(2*0.5)}, 1e-12)
		ewClose(t, "∂μ at v=0", gm[i:i+1], []float64{r / 0.5}, 1e-9)
		ewClose(t, "∂v at v=0", gv[i:i+1], []float64{-0.5 / 0.5}, 1e-6)
	}
}

func TestQuadratureVEBadInput(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m := func(name string, r, c int) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name))
	}
	a, b, c, d := m("a", 3, 2), m("b", 3, 2), m("c", 3, 2), m("d", 2, 3)
	vec := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("vec"))
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"))
	shapeCases := map[string]func() (*G.Node, error){
		"mu vector":      func() (*G.Node, error) { return ops.QuadratureVE(qConst{1}, 5, vec, vec, vec) },
		"v shape":        func() (*G.Node, error) { return ops.QuadratureVE(qConst{1}, 5, a, d, c) },
		"y shape":        func() (*G.Node, error) { return ops.QuadratureVE(qConst{1}, 5, a, b, d) },
		"theta count":    func() (*G.Node, error) { return ops.QuadratureVE(qGauss{}, 5, a, b, c) },
		"theta too many": func() (*G.Node, error) { return ops.QuadratureVE(qConst{1}, 5, a, b, c, s) },
		"theta matrix":   func() (*G.Node, error) { return ops.QuadratureVE(qGauss{}, 5, a, b, c, d) },
		"nil operand":    func() (*G.Node, error) { return ops.QuadratureVE(qGauss{}, 5, a, nil, c, s) },
	}
	for name, f := range shapeCases {
		n, err := f()
		ewWantShapeError(t, name, n, err)
	}
	for name, f := range map[string]func() (*G.Node, error){
		"nil lik":  func() (*G.Node, error) { return ops.QuadratureVE(nil, 5, a, b, c) },
		"0 points": func() (*G.Node, error) { return ops.QuadratureVE(qConst{1}, 0, a, b, c) },
	} {
		n, err := f()
		ewWantError(t, name, n, err)
	}
	if _, err := ops.QuadratureVE(qGauss{}, 5, a, b, c, s); err != nil {
		t.Errorf("valid operands: %v", err)
	}
}

// TestHashQuadratureVE: the likelihood's name (with its constants) and the number of points are semantic; the
// same likelihood value built twice merges.
func TestHashQuadratureVE(t *testing.T) {
	t.Parallel()
	q := func(lik ops.ScalarLogLik, points int) variant {
		return func(a, b *G.Node) (*G.Node, error) { return ops.QuadratureVE(lik, points, a, b, a) }
	}
	checkHashes(t, 3, map[string]variant{
		"const1,20":      q(qConst{1}, 20),
		"const1,20,copy": q(qConst{c: 1}, 20),
		"const2,20":      q(qConst{2}, 20),
		"const1,10":      q(qConst{1}, 10),
		"const1,21":      q(qConst{1}, 21),
		"swapped":        func(a, b *G.Node) (*G.Node, error) { return ops.QuadratureVE(qConst{1}, 20, b, a, a) },
		"y=b":            func(a, b *G.Node) (*G.Node, error) { return ops.QuadratureVE(qConst{1}, 20, a, b, b) },
		"loggamma":       func(a, _ *G.Node) (*G.Node, error) { return ops.LogGamma(a) },
	}, [2]string{"const1,20", "const1,20,copy"})
}

func TestLogGamma(t *testing.T) {
	t.Parallel()
	in := ewIn("x", []int{2, 3}, 0.5, 1, 2, 3.5, 7, 20)
	_, got := ewEval(t, func(_ *G.ExprGraph, xs []*G.Node) (*G.Node, error) { return ops.LogGamma(xs[0]) }, in)
	want := make([]float64, len(in.Value))
	for i, x := range in.Value {
		want[i], _ = math.Lgamma(x)
	}
	ewClose(t, "LogGamma", got, want, 1e-15)
	rng := rand.New(rand.NewPCG(5, 6))
	gradcheck.Check(t, func(_ *G.ExprGraph, xs []*G.Node) (*G.Node, error) { return ops.LogGamma(xs[0]) },
		[]gradcheck.Input{gradcheck.Random("x", rng, 0.3, 6, 3, 2)})
	n, err := ops.LogGamma(nil)
	ewWantShapeError(t, "LogGamma(nil)", n, err)
}

// TestLogPhiDerivFloat compares with a central difference of LogPhiFloat (step 1e-5: truncation ~1e-10·|f‴|) and
// checks the tails: ≈ −x for very negative x (Mills' ratio), → 0 for large x.
func TestLogPhiDerivFloat(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{-30, -10, -3.5, -2.9, -1, 0, 0.5, 2, 6} {
		h := 1e-5
		fd := (ops.LogPhiFloat(x+h) - ops.LogPhiFloat(x-h)) / (2 * h)
		if got := ops.LogPhiDerivFloat(x); math.Abs(got-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("LogPhiDerivFloat(%v) = %.12g, central FD %.12g", x, got, fd)
		}
	}
	if d := ops.LogPhiDerivFloat(-1e4); math.Abs(d-1e4) > 1e-3 {
		t.Errorf("LogPhiDerivFloat(−1e4) = %v, want ≈ 1e4", d)
	}
	if d := ops.LogPhiDerivFloat(40); d != 0 && !(d > 0 && d < 1e-300) {
		t.Errorf("LogPhiDerivFloat(40) = %v, want ≈ 0", d)
	}
}
