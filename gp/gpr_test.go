package gp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
)

// seARD is an independent reference implementation of the SE-ARD kernel (double loop, no shared code).
func seARD(x1, x2 *mat.Dense, variance float64, ls []float64) *mat.Dense {
	n, d := x1.Dims()
	m, _ := x2.Dims()
	k := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			r2 := 0.0
			for c := 0; c < d; c++ {
				u := (x1.At(i, c) - x2.At(j, c)) / ls[c]
				r2 += u * u
			}
			k.Set(i, j, variance*math.Exp(-r2/2))
		}
	}
	return k
}

func toyData(rng *rand.Rand, n, d int) (*mat.Dense, *mat.Dense) {
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for c := 0; c < d; c++ {
			v := 4*rng.Float64() - 2
			x.Set(i, c, v)
			s += math.Sin(2 * v / float64(c+1))
		}
		y.Set(i, 0, s+0.1*rng.NormFloat64())
	}
	return x, y
}

func newGPR(t testing.TB, d int, variance float64, ls []float64, noise float64) *gp.GPR {
	t.Helper()
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: variance, Lengthscales: ls})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: noise})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The exact GP's log marginal likelihood equals log N(y | 0, K + σ²I) from gonum's distmv within 1e-9.
func TestGPRLogMarginalLikelihoodClosedForm(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 40} {
		x, y := toyData(rng, n, 2)
		ls := []float64{0.8, 1.3}
		m := newGPR(t, 2, 1.4, ls, 0.05)
		got, err := m.LogMarginalLikelihoodValue(x, y, graph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		k := seARD(x, x, 1.4, ls)
		sym := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := k.At(i, j)
				if i == j {
					v += 0.05
				}
				sym.SetSym(i, j, v)
			}
		}
		nd, ok := distmv.NewNormal(make([]float64, n), sym, nil)
		if !ok {
			t.Fatal("distmv.NewNormal failed")
		}
		want := nd.LogProb(mat.Col(nil, 0, y))
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("n=%d: log p(y) = %.15g, distmv says %.15g", n, got, want)
		}
	}
}

func TestGPRGradients(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := toyData(rng, 12, 2)
	y2 := mat.NewDense(12, 2, nil) // two outputs sharing the kernel
	for i := 0; i < 12; i++ {
		y2.Set(i, 0, y.At(i, 0))
		y2.Set(i, 1, math.Cos(x.At(i, 0)))
	}
	mean, err := gp.NewLinearMean("mean", 2, 2, []float64{0.1, -0.2, 0.3, 0.05}, []float64{0.2, -0.1})
	if err != nil {
		t.Fatal(err)
	}
	k, err := gptest.StationaryKernel(t, "matern52", gp.KernelConfig{InputDim: 2, Variance: 0.9, Lengthscales: []float64{0.7, 1.2}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, Mean: mean, NoiseVariance: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	xn, yn := g.Input("x", 12, 2), g.Input("y", 12, 2)
	prog, err := g.Compile(m.Loss(xn, yn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", x.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("y", y2.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if len(prog.Params()) != len(m.Params()) {
		t.Fatalf("program differentiates %d params, model has %d", len(prog.Params()), len(m.Params()))
	}
	gradcheck.CheckProgram(t, prog)
}

// Predictions agree with a direct gonum computation: μ* = K*ₓ(K+σ²I)⁻¹y, σ²* = k** − K*ₓ(K+σ²I)⁻¹Kₓ*.
func TestGPRPredict(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := toyData(rng, 30, 1)
	xs, _ := toyData(rng, 11, 1)
	ls := []float64{0.6}
	m := newGPR(t, 1, 1.1, ls, 0.03)
	if err := m.SetTrainingData(x, y); err != nil {
		t.Fatal(err)
	}
	pred, err := m.Predict(xs, gp.PredictOptions{ChunkRows: 4}) // 3 chunks, the last one padded
	if err != nil {
		t.Fatal(err)
	}
	k := seARD(x, x, 1.1, ls)
	for i := 0; i < 30; i++ {
		k.Set(i, i, k.At(i, i)+0.03)
	}
	ksx := seARD(xs, x, 1.1, ls)
	var alpha, b mat.Dense
	if err := alpha.Solve(k, y); err != nil {
		t.Fatal(err)
	}
	var mu mat.Dense
	mu.Mul(ksx, &alpha)
	if err := b.Solve(k, ksx.T()); err != nil {
		t.Fatal(err)
	}
	full, err := m.Predict(xs, gp.PredictOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	mean, cov := full.FMean, full.FCov[0]
	kss := seARD(xs, xs, 1.1, ls)
	for i := 0; i < 11; i++ {
		for j := 0; j < 11; j++ {
			want := kss.At(i, j) - mat.Dot(ksx.RowView(i), b.ColView(j))
			if math.Abs(cov.At(i, j)-want) > 1e-8 {
				t.Errorf("cov[%d,%d] = %v, want %v", i, j, cov.At(i, j), want)
			}
		}
		if math.Abs(mean.At(i, 0)-mu.At(i, 0)) > 1e-8 {
			t.Errorf("full prediction's mean[%d] = %v, want %v", i, mean.At(i, 0), mu.At(i, 0))
		}
	}
	for i := 0; i < 11; i++ {
		v := 1.1 - mat.Dot(ksx.RowView(i), b.ColView(i))
		if math.Abs(pred.FMean.At(i, 0)-mu.At(i, 0)) > 1e-8 || math.Abs(pred.FVar.At(i, 0)-v) > 1e-8 {
			t.Errorf("row %d: mean %v var %v; want %v %v", i, pred.FMean.At(i, 0), pred.FVar.At(i, 0), mu.At(i, 0), v)
		}
		if pred.YMean.At(i, 0) != pred.FMean.At(i, 0) || pred.YVar.At(i, 0) != pred.FVar.At(i, 0)+0.03 {
			t.Errorf("row %d: y mean %v var %v, want f's mean and variance + noise", i, pred.YMean.At(i, 0), pred.YVar.At(i, 0))
		}
	}
}

func TestGPRBadInput(t *testing.T) {
	t.Parallel()
	m := newGPR(t, 2, 1, nil, 0.1)
	x := mat.NewDense(3, 2, []float64{1, 2, 3, math.NaN(), 5, 6})
	y := mat.NewDense(3, 1, []float64{1, 2, 3})
	err := m.SetTrainingData(x, y)
	var nf *ops.NonFiniteError
	if !errors.As(err, &nf) || nf.Row != 1 || nf.Col != 1 {
		t.Errorf("NaN at (1,1): got %v", err)
	}
	good := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	if _, err := m.Predict(good, gp.PredictOptions{}); !errors.Is(err, gp.ErrNoTrainingData) {
		t.Errorf("no training data: %v", err)
	}
	if err := m.SetTrainingData(good, mat.NewDense(2, 1, nil)); !errors.Is(err, ops.ErrShape) {
		t.Errorf("rows mismatch: %v", err)
	}
	if err := m.SetTrainingData(good, nil); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("nil targets: %v", err)
	}
	if err := m.SetTrainingData(good, y); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Predict(mat.NewDense(2, 3, nil), gp.PredictOptions{}); !errors.Is(err, ops.ErrShape) {
		t.Errorf("test dims mismatch: %v", err)
	}
	bad := mat.NewDense(2, 2, []float64{0, 1, math.Inf(1), 0})
	if _, err := m.Predict(bad, gp.PredictOptions{}); !errors.As(err, &nf) || nf.Row != 1 || nf.Col != 0 {
		t.Errorf("Inf test input at (1,0): %v", err)
	}
	if _, err := m.LogMarginalLikelihoodValue(nil, y, graph.Options{}); err == nil {
		t.Error("nil data accepted")
	}
	if _, err := gp.NewGPR(gp.GPRConfig{}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("nil kernel: %v", err)
	}
}
