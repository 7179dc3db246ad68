package advgp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/advgp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// problem is a small ADVGP regression problem: SE kernel with ARD length-scales ≠ 1, random Z, x, y and a random
// q(w) (μ and a lower factor with positive diagonal), noise variance 0.3, NumData = N.
type problem struct {
	m    *advgp.Model
	x, y *mat.Dense
	n    int
}

func newProblem(t testing.TB, seed uint64, nm, d, n int, randomQ bool) *problem {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.6 + 0.5*float64(i) + 0.2*rng.Float64()
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 1.4, Lengthscales: ls})
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(nm, d, uniform(rng, nm*d, -1.5, 1.5))
	x := mat.NewDense(n, d, uniform(rng, n*d, -2, 2))
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			s += math.Sin(1.3*x.At(i, j) + float64(j))
		}
		y.Set(i, 0, s+0.3*rng.NormFloat64())
	}
	m, err := advgp.New(advgp.Config{Kernel: k, Z: z, NoiseVariance: 0.3, NumData: n})
	if err != nil {
		t.Fatal(err)
	}
	if randomQ {
		if err := m.Mu().Set(uniform(rng, nm, -1, 1)); err != nil {
			t.Fatal(err)
		}
		if err := m.Sqrt().Set(randomLower(rng, nm)); err != nil {
			t.Fatal(err)
		}
	}
	return &problem{m: m, x: x, y: y, n: n}
}

func uniform(rng *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// randomLower returns a lower-triangular [n,n] factor: diagonal in [0.5, 1.5), strictly lower in [−0.4, 0.4).
func randomLower(rng *rand.Rand, n int) []float64 {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = 0.8*rng.Float64() - 0.4
		}
		l[i*n+i] = 0.5 + rng.Float64()
	}
	return l
}

// program compiles loss(x, y) on the full batch of p and binds the data.
func (p *problem) program(t testing.TB, loss func(x, y *graph.Node) *graph.Node) *graph.Program {
	t.Helper()
	_, d := p.x.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(loss(g.Input("x", p.n, d), g.Input("y", p.n, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	if err := prog.Set("x", p.x.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("y", p.y.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	return prog
}

// shardProgram compiles the data term of the whole data set (one shard of N points, full batch).
func (p *problem) shardProgram(t testing.TB) *graph.Program {
	t.Helper()
	st, err := p.m.ShardTerm(p.n)
	if err != nil {
		t.Fatal(err)
	}
	return p.program(t, st.Loss)
}

func relErr(a, b float64) float64 {
	s := math.Max(math.Abs(a), math.Abs(b))
	if s == 0 {
		return 0
	}
	return math.Abs(a-b) / s
}

// normRelErr returns ‖a − b‖ / max(‖a‖, ‖b‖).
func normRelErr(a, b []float64) float64 {
	var d, na, nb float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	s := math.Sqrt(math.Max(na, nb))
	if s == 0 {
		return 0
	}
	return math.Sqrt(d) / s
}

// Every Param's gradient of ShardTerm's full-batch program (kernel variance and length-scales, Z, μ, the factor,
// the noise variance) against central finite differences of the program's loss.
func TestShardTermGradCheck(t *testing.T) {
	p := newProblem(t, 3, 7, 2, 23, true)
	prog := p.shardProgram(t)
	if got, want := len(prog.Params()), len(p.m.Params()); got != want || want != 6 {
		t.Fatalf("program differentiates %d Params, model has %d (want 6)", got, want)
	}
	worst := gradcheck.CheckProgram(t, prog)
	// CheckProgram forgives differences below an absolute floor scaled by the loss; also bound the plain relative
	// error of every entry whose gradient is not tiny.
	runLoss(t, prog)
	analytic := make([][]float64, len(prog.Params()))
	for i, par := range prog.Params() {
		analytic[i] = append([]float64(nil), prog.Grad(par)...)
	}
	maxRel := 0.0
	for i, par := range prog.Params() {
		raw := par.Raw()
		for j := range raw {
			x0, h := raw[j], gradcheck.Step*math.Max(1, math.Abs(raw[j]))
			raw[j] = x0 + h
			fp := runLoss(t, prog)
			raw[j] = x0 - h
			fm := runLoss(t, prog)
			raw[j] = x0
			if a := analytic[i][j]; math.Abs(a) > 1e-2 {
				maxRel = math.Max(maxRel, relErr(a, (fp-fm)/(2*h)))
			}
		}
	}
	t.Logf("CheckProgram worst %.3g; largest relative error of entries with |∂| > 1e-2: %.3g", worst, maxRel)
	if !(maxRel <= 1e-6) {
		t.Errorf("largest relative error %.3g > 1e-6", maxRel)
	}
}

func runLoss(t testing.TB, prog *graph.Program) float64 {
	t.Helper()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return prog.Loss()
}

func TestShardTermErrors(t *testing.T) {
	p := newProblem(t, 3, 4, 2, 10, false)
	for _, n := range []int{0, -3} {
		if _, err := p.m.ShardTerm(n); !errors.Is(err, advgp.ErrConfig) {
			t.Errorf("ShardTerm(%d): %v, want ErrConfig", n, err)
		}
	}
	// A batch larger than the shard is refused with a ShapeError.
	st, err := p.m.ShardTerm(5)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	_, err = g.Compile(st.Loss(g.Input("x", 10, 2), g.Input("y", 10, 1)), nil)
	var se *ops.ShapeError
	if !errors.As(err, &se) {
		t.Errorf("batch of 10 rows on a shard of 5: %v, want *ops.ShapeError", err)
	}
}

func TestNewDefaultsAndErrors(t *testing.T) {
	k, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	z := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	for name, c := range map[string]advgp.Config{
		"nil kernel": {Z: z, NumData: 5},
		"nil Z":      {Kernel: k, NumData: 5},
		"no NumData": {Kernel: k, Z: z},
	} {
		if _, err := advgp.New(c); !errors.Is(err, advgp.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	m, err := advgp.New(advgp.Config{Kernel: k, Z: z, NumData: 5})
	if err != nil {
		t.Fatal(err)
	}
	// q(w) = N(0, I): h = 0.
	if h := m.H(); h != 0 {
		t.Errorf("h at q = N(0, I) is %g, want 0", h)
	}
	if m.M() != 3 {
		t.Errorf("M = %d, want 3", m.M())
	}
}

func TestFromSVGP(t *testing.T) {
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Lengthscales: []float64{0.8, 1.2}})
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	gauss, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	bern, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		t.Fatal(err)
	}
	build := func(c layers.SVGPConfig, lik gp.Likelihood) *models.SVGP {
		t.Helper()
		c.Kernel, c.Z = k, z
		l, err := layers.NewSVGP(c)
		if err != nil {
			t.Fatal(err)
		}
		s, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: 10})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	mean, err := gp.NewZeroMean(1)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*models.SVGP{
		"nil":           nil,
		"unwhitened":    build(layers.SVGPConfig{Unwhitened: true}, gauss),
		"multi-output":  build(layers.SVGPConfig{OutputDim: 2}, gauss),
		"mean-field q":  build(layers.SVGPConfig{QDiag: true}, gauss),
		"mean function": build(layers.SVGPConfig{Mean: mean}, gauss),
		"Bernoulli":     build(layers.SVGPConfig{}, bern),
	} {
		if _, err := advgp.FromSVGP(s); !errors.Is(err, advgp.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	s := build(layers.SVGPConfig{}, gauss)
	m, err := advgp.FromSVGP(s)
	if err != nil {
		t.Fatalf("whitened single-output SVGP with a Gaussian likelihood refused: %v", err)
	}
	lay := s.Layer.(*layers.SVGP)
	if m.Mu() != lay.Q.Mu || m.Sqrt() != lay.Q.Sqrt[0] || m.Lik != gauss || m.SVGP != s || m.M() != 3 {
		t.Error("FromSVGP does not share the SVGP's Params")
	}
}
