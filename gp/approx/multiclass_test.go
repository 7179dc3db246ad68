package approx_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// threeClasses returns n seeded rows of 2 inputs around three centres (one class each, spread 0.7).
func threeClasses(n int, seed uint64) (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 31))
	centres := [3][2]float64{{-1.5, 0}, {1.5, 0}, {0, 1.8}}
	x, y := mat.NewDense(n, 2, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		c := i % 3
		x.Set(i, 0, centres[c][0]+0.7*rng.NormFloat64())
		x.Set(i, 1, centres[c][1]+0.7*rng.NormFloat64())
		y.Set(i, 0, float64(c))
	}
	return x, y
}

func newMulticlass(t *testing.T, classes int, x, y *mat.Dense, variance float64) *approx.Multiclass {
	t.Helper()
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: variance, Lengthscales: []float64{0.9, 1.2}})
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihoods.NewSoftmax(likelihoods.SoftmaxConfig{NumClasses: classes, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := approx.NewMulticlass(approx.MulticlassConfig{Kernel: k, Likelihood: lik, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMulticlassGradient checks the multi-class Laplace loss's gradient in the kernel's raw hyperparameters
// against central finite differences.
func TestMulticlassGradient(t *testing.T) {
	t.Parallel()
	x, y := threeClasses(24, 1)
	m := newMulticlass(t, 3, x, y, 1.5)
	g := graph.New(graph.Options{})
	prog, err := g.Compile(m.Loss(g.Input("x", 24, 2), g.Input("y", 24, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(prog.InputData("x"), x.RawMatrix().Data)
	copy(prog.InputData("y"), y.RawMatrix().Data)
	worst := gradcheck.CheckProgram(t, prog)
	t.Logf("%d Params, largest relative error %.2g", len(prog.Params()), worst)
}

// TestMulticlassTwoClassesIsLogistic: a two-class softmax GP with kernel K is the binary logistic GP with kernel 2K
// (only f₁ − f₀ meets the data): the same log marginal likelihood to 1e-8, and class probabilities within 0.01
// (Monte Carlo against the logistic predictive).
func TestMulticlassTwoClassesIsLogistic(t *testing.T) {
	t.Parallel()
	x, y := toyData(30, "binary", 4)
	m := newMulticlass(t, 2, x, y, 0.8)
	k2, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: 1.6, Lengthscales: []float64{0.9, 1.2}})
	if err != nil {
		t.Fatal(err)
	}
	logit, err := likelihoods.NewBernoulliLogit(likelihoods.BernoulliConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bin, err := approx.New(approx.Config{Kernel: k2, Likelihood: logit, Inference: approx.Laplace, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := m.Approximation(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := bin.LogMarginalValue(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(lm.LogZ-lb) > 1e-8*math.Abs(lb) {
		t.Errorf("log q: two-class softmax %.12g, logistic with 2K %.12g", lm.LogZ, lb)
	}
	xs, _ := toyData(9, "binary", 8)
	pm, err := m.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := bin.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 9; i++ {
		if d := math.Abs(pm.Probs.At(i, 1) - pb.Probs.At(i, 1)); d > 0.01 || math.Abs(pm.Probs.At(i, 0)+pm.Probs.At(i, 1)-1) > 1e-12 {
			t.Errorf("row %d: p(y = 1) softmax %.4f (p(y = 0) %.4f), logistic %.4f", i, pm.Probs.At(i, 1), pm.Probs.At(i, 0), pb.Probs.At(i, 1))
		}
	}
}

// TestMulticlassFitPredictSave: L-BFGS fits three classes of separated clusters; the fit raises log q, classifies
// at least 90% of held-out rows right, predicts probability rows that sum to 1, passes gp/gptest's Predictor
// checks (but Full and Draws, refused with gp.ErrUnsupported), and round-trips through a model file to the same
// predictions.
func TestMulticlassFitPredictSave(t *testing.T) {
	t.Parallel()
	x, y := threeClasses(60, 2)
	m := newMulticlass(t, 3, x, y, 1)
	before, err := m.Approximation(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := train.TrainLBFGS(m, x, y, train.LBFGSConfig{Iters: 50})
	if err != nil {
		t.Fatal(err)
	}
	after, err := m.Approximation(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(after.LogZ > before.LogZ) {
		t.Errorf("log q %.4f after L-BFGS, %.4f before", after.LogZ, before.LogZ)
	}
	xs, ys := threeClasses(30, 3)
	p, err := m.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i := 0; i < 30; i++ {
		row := p.Probs.RawRowView(i)
		best, s := 0, 0.0
		for c, v := range row {
			s += v
			if v > row[best] {
				best = c
			}
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("row %d: probabilities %v sum to %v", i, row, s)
		}
		if best == int(ys.At(i, 0)) {
			right++
		}
	}
	t.Logf("%d L-BFGS iterations (%s); log q %.3f → %.3f; %d of 30 held-out rows right", res.Steps, res.StopReason, before.LogZ, after.LogZ, right)
	if right < 27 {
		t.Errorf("%d of 30 held-out rows right", right)
	}
	gptest.CheckPredictor(t, m, xs, gp.PredictOptions{OutputCov: true, ChunkRows: 7})
	for _, o := range []gp.PredictOptions{{Full: true}, {Draws: 2}} {
		if _, err := m.Predict(xs, o); !errors.Is(err, gp.ErrUnsupported) {
			t.Errorf("%+v: %v, want gp.ErrUnsupported", o, err)
		}
	}
	var buf bytes.Buffer
	if err := modelfile.Save(&buf, &modelfile.File{Model: m}); err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Load(&buf, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := f.Model.(gp.Predictor).Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(q.Probs, p.Probs) || !mat.Equal(q.FMean, p.FMean) {
		t.Error("the loaded model predicts differently")
	}
}

// TestMulticlassBadLabels: a label outside 0..C−1 is refused with ops.ErrLabel when the loss runs.
func TestMulticlassBadLabels(t *testing.T) {
	t.Parallel()
	x, y := threeClasses(9, 4)
	y.Set(4, 0, 3)
	m := newMulticlass(t, 3, x, y, 1)
	if _, err := m.Approximation(graph.Options{}); !errors.Is(err, ops.ErrLabel) {
		t.Errorf("label 3 of 3 classes: %v", err)
	}
}
