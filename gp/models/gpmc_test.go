package models_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// gpmcCase returns a GPMC with a Bernoulli (probit) likelihood on n labelled points and random whitened values.
func gpmcCase(t *testing.T, n int, lik gp.Likelihood) (*models.GPMC, *mat.Dense, *mat.Dense) {
	t.Helper()
	rng := rand.New(rand.NewPCG(31, 32))
	x, f := toy(rng, n, 2, 1)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		if f.At(i, 0) > 0 {
			y.Set(i, 0, 1)
		}
	}
	m, err := models.NewGPMC(models.GPMCConfig{Kernel: kernel(t, 2), Likelihood: lik, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.V.Raw() {
		m.V.Raw()[i] = rng.NormFloat64()
	}
	return m, x, y
}

func bernoulli(t testing.TB) gp.Likelihood {
	t.Helper()
	l, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestGPMCLoss: the loss is −Σ log Φ((2y−1)f) + ½‖v‖² + (N/2) log 2π with f = L v, LLᵀ = K + 10⁻⁶I, computed apart
// with gonum's Cholesky (1e-10 relative), and its gradient in v and the kernel's raw hyperparameters agrees with
// finite differences.
func TestGPMCLoss(t *testing.T) {
	t.Parallel()
	m, x, y := gpmcCase(t, 8, bernoulli(t))
	n := 8
	g := graph.New(graph.Options{})
	loss := m.Loss(g.Input("x", n, 2), g.Input("y", n, 1))
	prog, err := g.Compile(loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(prog.InputData("x"), x.RawMatrix().Data)
	copy(prog.InputData("y"), y.RawMatrix().Data)
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	k := kxx(t, m.Kernel, x, models.DefaultGPMCJitter)
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("K is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	v := m.V.Value()
	want := 0.5 * float64(n) * math.Log(2*math.Pi)
	for i := 0; i < n; i++ {
		f := 0.0
		for j := 0; j <= i; j++ {
			f += l.At(i, j) * v[j]
		}
		want += 0.5*v[i]*v[i] - ops.LogPhiFloat((2*y.At(i, 0)-1)*f)
	}
	if got := prog.Loss(); math.Abs(got-want) > 1e-10*math.Abs(want) {
		t.Errorf("loss %.15g, want %.15g", got, want)
	}
	gradcheck.CheckProgram(t, prog)
}

// TestGPMCPredict: at the training inputs the predictive mean of f is L v (up to the jitter's effect, 1e-4) with a
// variance below 1e-4; the predictor passes the conformance suite; full covariances and draws are consistent;
// the model survives a Spec round trip and predicts the same bits.
func TestGPMCPredict(t *testing.T) {
	t.Parallel()
	m, x, _ := gpmcCase(t, 10, bernoulli(t))
	p, err := m.Predict(x, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := kxx(t, m.Kernel, x, models.DefaultGPMCJitter)
	var ch mat.Cholesky
	ch.Factorize(k)
	var l mat.TriDense
	ch.LTo(&l)
	var f mat.Dense
	f.Mul(&l, mat.NewDense(10, 1, m.V.Value()))
	for i := 0; i < 10; i++ {
		if d := math.Abs(p.FMean.At(i, 0) - f.At(i, 0)); d > 1e-4 {
			t.Errorf("row %d: mean %.8g, L v %.8g", i, p.FMean.At(i, 0), f.At(i, 0))
		}
		if v := p.FVar.At(i, 0); !(v >= 0 && v < 1e-4) {
			t.Errorf("row %d: variance %g at a training input", i, v)
		}
	}
	rng := rand.New(rand.NewPCG(2, 2))
	xs, _ := toy(rng, 7, 2, 1)
	full := gptest.CheckPredictor(t, m, xs, gp.PredictOptions{ChunkRows: 3, Full: true, Draws: 2, OutputCov: true})
	for i := 0; i < 7; i++ {
		if d := math.Abs(full.FCov[0].At(i, i) - full.FVar.At(i, 0)); d > 1e-9 {
			t.Errorf("row %d: full covariance's diagonal %.12g, marginal variance %.12g", i, full.FCov[0].At(i, i), full.FVar.At(i, 0))
		}
	}
	if full.Probs == nil {
		t.Error("no class probabilities from a Bernoulli GPMC")
	}
	back := gptest.CheckSpecRoundTrip(t, m, gp.BuildOptions{}).(*models.GPMC)
	if err := back.SetTrainingData(m.TrainingData()); err != nil {
		t.Fatal(err)
	}
	q, err := back.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(xs, gp.PredictOptions{}) // the same options: OpenBLAS's bits depend on the chunking
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(q.FMean, want.FMean) || !mat.Equal(q.YMean, want.YMean) {
		t.Error("the rebuilt model predicts differently")
	}
	if _, err := models.NewGPMC(models.GPMCConfig{Kernel: kernel(t, 2), Likelihood: bernoulli(t)}); err == nil {
		t.Error("a GPMC without training data was accepted")
	}
}
