package dgp_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

func gaussian(t testing.TB, v float64) *likelihoods.Gaussian {
	t.Helper()
	l, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: v})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// randomQ gives every q of the layer a random mean and square root (so the tests do not sit at the prior).
func randomQ(t testing.TB, q *gp.GaussianQ, rng *rand.Rand) {
	t.Helper()
	mu := gptest.RandomMatrix(rng, q.M(), q.P(), -1, 1)
	if err := q.Mu.Set(mu); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < q.P(); p++ {
		l := make([]float64, q.M()*q.M())
		for i := 0; i < q.M(); i++ {
			for j := 0; j <= i; j++ {
				l[i*q.M()+j] = 0.2 * (rng.Float64() - 0.5)
			}
			l[i*q.M()+i] = 0.3 + 0.5*rng.Float64()
		}
		if err := q.SetSqrt(p, l); err != nil {
			t.Fatal(err)
		}
	}
}

// svgpFactory builds coupled layers (or ORTH layers with |γ| = 0 when orth is set) with m inducing inputs,
// initialised as Build prescribes and then randomised by rng (same rng stream ⇒ same values for both families).
func svgpFactory(t testing.TB, m int, orth bool, rng *rand.Rand) dgp.LayerFactory {
	return func(s dgp.LayerSpec) (gp.Layer, error) {
		k := gp.Kernel(gptest.ARDKernel(t, s.InputDim))
		if s.Inner {
			needWhite(t)
			var err error
			if k, err = dgp.InnerKernel(k, fmt.Sprint("white", s.Index)); err != nil {
				return nil, err
			}
		}
		z, err := s.Inducing(m)
		if err != nil {
			return nil, err
		}
		c := layers.SVGPConfig{Name: fmt.Sprint("layer", s.Index), Kernel: k, Z: z, OutputDim: s.OutputDim, Mean: s.Mean}
		var l gp.Layer
		var q *gp.GaussianQ
		if orth {
			o, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: c})
			if err != nil {
				return nil, err
			}
			l, q = o, o.BetaQ()
		} else {
			sv, err := layers.NewSVGP(c)
			if err != nil {
				return nil, err
			}
			l, q = sv, sv.Q
		}
		randomQ(t, q, rng)
		return l, nil
	}
}

// needWhite skips the test if kernel white is not registered (kernel_white.go deleted): an inner layer's
// kernel adds one (dgp.InnerKernel).
func needWhite(tb testing.TB) {
	tb.Helper()
	gptest.NeedKernel(tb, "white", "the deep GP's inner layers add a white kernel (dgp.InnerKernel)")
}

func build(t testing.TB, x *mat.Dense, widths []int, out, m int, orth bool, seed uint64) []gp.Layer {
	t.Helper()
	ls, err := dgp.Build(x, dgp.BuildConfig{Widths: widths, OutputDim: out, Rand: rand.New(rand.NewPCG(seed, 1)),
		NewLayer: svgpFactory(t, m, orth, rand.New(rand.NewPCG(seed, 2)))})
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

func closeRel(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if d := math.Abs(got - want); d > tol*math.Max(1, math.Abs(want)) || math.IsNaN(got) {
		t.Errorf("%s = %.15g, want %.15g (diff %.3g)", what, got, want, d)
	}
}

func closeDense(t *testing.T, what string, got, want *mat.Dense, tol float64) {
	t.Helper()
	g, w := got.RawMatrix().Data, want.RawMatrix().Data
	if len(g) != len(w) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(w))
	}
	for i := range g {
		if d := math.Abs(g[i] - w[i]); d > tol*math.Max(1, math.Abs(w[i])) || math.IsNaN(g[i]) {
			t.Fatalf("%s[%d] = %.15g, want %.15g", what, i, g[i], w[i])
		}
	}
}

// A DGP with one layer is the SVGP model: same ELBO, same predictions, same test densities (both summaries).
func TestOneLayerEqualsSVGP(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := gptest.ToyRegression(rng, 40, 3, 2)
	ls := build(t, x, nil, 2, 8, false, 7)
	lik := gaussian(t, 0.1)
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: 40, Samples: 3, Noise: dgp.ZeroNoise})
	if err != nil {
		t.Fatal(err)
	}
	sv, err := models.NewSVGP(models.SVGPConfig{Layer: ls[0], Likelihood: lik, NumData: 40})
	if err != nil {
		t.Fatal(err)
	}
	closeRel(t, "ELBO", gptest.EvalScalar(t, deep.ELBO, x, y), gptest.EvalScalar(t, sv.ELBO, x, y), 1e-12)
	xt, yt := gptest.ToyRegression(rng, 25, 3, 2)
	p, err := deep.Predict(xt, gp.PredictOptions{Samples: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Components) != 1 {
		t.Fatalf("one-layer DGP drew %d samples, want 1", len(p.Components))
	}
	sp, err := sv.Predict(xt, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	closeDense(t, "mean", p.Components[0].FMean, sp.FMean, 1e-12)
	closeDense(t, "var", p.Components[0].FVar, sp.FVar, 1e-12)
	closeDense(t, "mixture mean", p.FMean, sp.FMean, 1e-12)
	closeDense(t, "mixture var", p.FVar, sp.FVar, 1e-12)
	closeDense(t, "y mean", p.YMean, sp.YMean, 1e-12)
	closeDense(t, "y var", p.YVar, sp.YVar, 1e-12)
	ld, err := deep.LogDensity(xt, yt, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := sv.LogDensity(xt, yt, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		closeRel(t, "mixture LL", ld.Mixture[i], want[i], 1e-12)
		closeRel(t, "moment-matched LL", ld.MomentMatched[i], want[i], 1e-12)
	}
}

// fixedNoise draws ε for hidden layers of the given widths, s samples of b rows.
func fixedNoise(rng *rand.Rand, s, b int, widths ...int) dgp.Noise {
	eps := make([][]float64, len(widths))
	for i, w := range widths {
		eps[i] = make([]float64, s*b*w)
		for j := range eps[i] {
			eps[i][j] = rng.NormFloat64()
		}
	}
	return dgp.FixedNoise(eps)
}

// The sampled ELBO of a 2-layer (and a 3-layer, width-changing) DGP with fixed noise: central finite differences
// of every parameter (kernels, white noise, inducing inputs, q of every layer, likelihood variance).
func TestELBOGradients(t *testing.T) {
	for _, tc := range []struct {
		name   string
		widths []int
		out    int
	}{
		{"2layers", []int{2}, 1},     // D=3 → 2 (PCA) → 1
		{"3layers", []int{3, 4}, 2},  // identity, then zero padding
		{"2layersPad", []int{5}, 1},  // zero padding first
		{"2layersWide", []int{3}, 2}, // identity mean
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			x, y := gptest.ToyRegression(rng, 12, 3, tc.out)
			ls := build(t, x, tc.widths, tc.out, 5, false, 9)
			const s = 2
			deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.2), NumData: 30, Samples: s,
				Noise: fixedNoise(rng, s, 12, tc.widths...)})
			if err != nil {
				t.Fatal(err)
			}
			g := graph.New(graph.Options{})
			xn, yn := g.Const("x", x.RawMatrix().Data, 12, 3), g.Const("y", y.RawMatrix().Data, 12, tc.out)
			prog, err := g.Compile(deep.Loss(xn, yn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			if got, want := len(prog.Params()), countTrainable(deep.Params()); got != want {
				t.Fatalf("program differentiates %d params, model has %d trainable", got, want)
			}
			gradcheck.CheckProgram(t, prog)
		})
	}
}

func countTrainable(ps []*graph.Param) int {
	n := 0
	for _, p := range ps {
		if p.Trainable() {
			n++
		}
	}
	return n
}

// A DGP of ORTH layers with |γ| = 0 equals the coupled DGP with the same parameters and noise: ELBO and
// per-sample predictions.
func TestOrthStackEqualsCoupled(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := gptest.ToyRegression(rng, 20, 3, 1)
	xt, _ := gptest.ToyRegression(rng, 7, 3, 1)
	var elbo [2]float64
	var pred [2]*gp.Prediction
	for i, orth := range []bool{false, true} {
		ls := build(t, x, []int{2, 2}, 1, 6, orth, 11)
		deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.1), NumData: 20, Samples: 3,
			Noise: fixedNoise(rand.New(rand.NewPCG(1, 1)), 3, 20, 2, 2)})
		if err != nil {
			t.Fatal(err)
		}
		elbo[i] = gptest.EvalScalar(t, deep.ELBO, x, y)
		if pred[i], err = deep.Predict(xt, gp.PredictOptions{Samples: 4, Rand: rand.New(rand.NewPCG(2, 2))}); err != nil {
			t.Fatal(err)
		}
	}
	closeRel(t, "ELBO", elbo[1], elbo[0], 1e-10)
	for s := range pred[0].Components {
		closeDense(t, "sample mean", pred[1].Components[s].FMean, pred[0].Components[s].FMean, 1e-10)
		closeDense(t, "sample var", pred[1].Components[s].FVar, pred[0].Components[s].FVar, 1e-10)
	}
}

// With ε = 0 a 2-layer DGP is the composition of its layers' means: check against evaluating the layers one
// after the other by hand.
func TestZeroNoiseComposes(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	x, _ := gptest.ToyRegression(rng, 10, 3, 1)
	ls := build(t, x, []int{2}, 1, 5, false, 3)
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.1), NumData: 10, Noise: dgp.ZeroNoise})
	if err != nil {
		t.Fatal(err)
	}
	p, err := deep.PredictWithNoise(x, gp.PredictOptions{Samples: 2, Draws: 2}, dgp.ZeroNoise)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := models.PredictLayer(ls[0], x, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fm, fv, err := models.PredictLayer(ls[1], h, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 2; s++ {
		closeDense(t, "mean", p.Components[s].FMean, fm, 1e-12)
		closeDense(t, "var", p.Components[s].FVar, fv, 1e-12)
		closeDense(t, "draw", p.Draws[s], fm, 1e-12) // every layer passes on its mean
	}
}

// Sampled prediction: the mixture's moments match Monte-Carlo statistics of the samples, and the mixture
// log-density of the training targets is at least the average per-sample log-density (Jensen).
func TestPredictionSummaries(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	x, y := gptest.ToyRegression(rng, 30, 2, 1)
	ls := build(t, x, []int{2}, 1, 6, false, 5)
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.05), NumData: 30, Rand: rand.New(rand.NewPCG(1, 0))})
	if err != nil {
		t.Fatal(err)
	}
	o := gp.PredictOptions{Samples: 50, Rand: rand.New(rand.NewPCG(4, 4)), ChunkRows: 50 * 7} // several chunks
	p, err := deep.Predict(x, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Components) != 50 {
		t.Fatalf("%d samples, want 50", len(p.Components))
	}
	distinct := false
	for i := 0; i < 30; i++ {
		distinct = distinct || p.Components[0].FMean.At(i, 0) != p.Components[1].FMean.At(i, 0)
	}
	if !distinct {
		t.Fatal("two samples have the same means: the noise is not redrawn per sample")
	}
	o.Rand = rand.New(rand.NewPCG(4, 4))
	ld, err := deep.LogDensity(x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Rand = rand.New(rand.NewPCG(4, 4))
	p2, _ := deep.Predict(x, o)
	closeDense(t, "reproducible mean", p2.Components[17].FMean, p.Components[17].FMean, 0)
	lik := gaussian(t, 0.05)
	for i := 0; i < 30; i++ {
		avg := 0.0
		for s := 0; s < 50; s++ {
			lp, _ := lik.PredictLogDensity([]float64{p.Components[s].FMean.At(i, 0)}, []float64{p.Components[s].FVar.At(i, 0)}, []float64{y.At(i, 0)}, 1)
			avg += lp[0] / 50
		}
		if ld.Mixture[i] < avg-1e-12 {
			t.Errorf("row %d: mixture LL %g below the mean per-sample LL %g", i, ld.Mixture[i], avg)
		}
		if math.IsNaN(ld.MomentMatched[i]) {
			t.Errorf("row %d: moment-matched LL is NaN", i)
		}
	}
}

// The inner mean functions: identity, PCA projection onto the top singular directions, zero padding; the
// inducing inputs of later layers are the first layer's pushed through them.
func TestBuildMeansAndInducing(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	n := 200
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ { // dominant direction (1,1,0)/√2, then (0,0,1), little along (1,−1,0)
		a, b, c := 3*rng.NormFloat64(), rng.NormFloat64(), 0.1*rng.NormFloat64()
		x.SetRow(i, []float64{(a + c) / math.Sqrt2, (a - c) / math.Sqrt2, b})
	}
	var specs []dgp.LayerSpec
	var zs []*mat.Dense
	_, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{3, 2, 4}, OutputDim: 1, Rand: rand.New(rand.NewPCG(1, 1)),
		NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
			specs = append(specs, s)
			z, err := s.Inducing(10)
			if err != nil {
				return nil, err
			}
			zs = append(zs, z)
			return layers.NewSVGP(layers.SVGPConfig{Kernel: gptest.ARDKernel(t, s.InputDim), Z: z, OutputDim: s.OutputDim, Mean: s.Mean})
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 4 {
		t.Fatalf("%d layers, want 4", len(specs))
	}
	if _, ok := specs[0].Mean.(gp.IdentityMean); !ok {
		t.Errorf("layer 0 (3→3) mean %T, want identity", specs[0].Mean)
	}
	pca, ok := specs[1].Mean.(*gp.ProjectionMean)
	if !ok {
		t.Fatalf("layer 1 (3→2) mean %T, want a projection", specs[1].Mean)
	}
	w := pca.Weights() // [3,2]: columns ±(1,1,0)/√2 and ±(0,0,1)
	if math.Abs(math.Abs(w[0])-1/math.Sqrt2) > 0.02 || math.Abs(math.Abs(w[2])-1/math.Sqrt2) > 0.02 || math.Abs(math.Abs(w[5])-1) > 0.02 {
		t.Errorf("PCA projection %v, want columns ±(1,1,0)/√2 and ±(0,0,1)", w)
	}
	pad, ok := specs[2].Mean.(*gp.ProjectionMean)
	if !ok {
		t.Fatalf("layer 2 (2→4) mean %T, want zero padding", specs[2].Mean)
	}
	if got := pad.Weights(); fmt.Sprint(got) != fmt.Sprint([]float64{1, 0, 0, 0, 0, 1, 0, 0}) {
		t.Errorf("padding weights %v", got)
	}
	if specs[3].Mean != nil || specs[3].Inner || !specs[2].Inner {
		t.Errorf("last layer: mean %v inner %v; layer 2 inner %v", specs[3].Mean, specs[3].Inner, specs[2].Inner)
	}
	// Layer 2's inducing inputs are layer 0's projected by W; layer 3's are those padded.
	var want mat.Dense
	want.Mul(zs[0], mat.NewDense(3, 2, w))
	closeDense(t, "Z₂", zs[2], &want, 1e-12)
	if r, c := zs[3].Dims(); r != 10 || c != 4 || zs[3].At(3, 0) != want.At(3, 0) || zs[3].At(3, 3) != 0 {
		t.Errorf("Z₃ %d×%d, row 3 %v", r, c, zs[3].RawRowView(3))
	}
	if r, c := specs[2].Inputs.Dims(); r != n || c != 2 {
		t.Errorf("layer 2 inputs %d×%d", r, c)
	}
	gptest.CheckMean(t, pca, 3, rng)
}

func TestConfigErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, _ := gptest.ToyRegression(rng, 10, 2, 1)
	ls := build(t, x, []int{3}, 1, 4, false, 1)
	lik := gaussian(t, 0.1)
	for name, c := range map[string]dgp.Config{
		"no layers":     {Likelihood: lik, NumData: 10},
		"no likelihood": {Layers: ls, NumData: 10, Noise: dgp.ZeroNoise},
		"no data":       {Layers: ls, Likelihood: lik, Noise: dgp.ZeroNoise},
		"no rand":       {Layers: ls, Likelihood: lik, NumData: 10},
		"samples":       {Layers: ls, Likelihood: lik, NumData: 10, Noise: dgp.ZeroNoise, Samples: -1},
		"widths":        {Layers: []gp.Layer{ls[1], ls[0]}, Likelihood: lik, NumData: 10, Noise: dgp.ZeroNoise},
	} {
		if _, err := dgp.New(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{0}, NewLayer: svgpFactory(t, 3, false, rng), Rand: rng}); !errors.Is(err, dgp.ErrConfig) {
		t.Errorf("zero width: %v", err)
	}
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: 10, Noise: dgp.ZeroNoise})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deep.Predict(x, gp.PredictOptions{Samples: -1}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("negative samples: %v", err)
	}
	if _, err := deep.Predict(x, gp.PredictOptions{Full: true}); !errors.Is(err, gp.ErrUnsupported) {
		t.Errorf("full covariance of a deep GP: %v", err)
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 1, math.NaN())
	var nf *ops.NonFiniteError
	if _, err := deep.PredictWithNoise(bad, gp.PredictOptions{}, dgp.ZeroNoise); !errors.As(err, &nf) || nf.Row != 3 || nf.Col != 1 {
		t.Errorf("NaN input at (3,1): %v", err)
	}
	var se *ops.ShapeError
	if _, err := deep.Predict(mat.NewDense(2, 7, nil), gp.PredictOptions{}); !errors.As(err, &se) {
		t.Errorf("wrong width: %v", err)
	}
}

// Layers of different families compose: a decoupled inner layer (Havasi et al.'s μ_GPcent + S-form), an ORTH
// middle layer and a HYBRID last layer, with γ bases and non-zero weights. Central finite differences of the
// sampled ELBO (fixed noise) for every parameter.
func TestMixedFamiliesGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	x, y := gptest.ToyRegression(rng, 10, 2, 1)
	prng := rand.New(rand.NewPCG(23, 24))
	ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{2, 2}, Rand: rand.New(rand.NewPCG(1, 1)),
		NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
			k := gp.Kernel(gptest.ARDKernel(t, s.InputDim))
			name := fmt.Sprint("layer", s.Index)
			zb, err := s.Inducing(4)
			if err != nil {
				return nil, err
			}
			zg, err := s.Inducing(3)
			if err != nil {
				return nil, err
			}
			c := layers.SVGPConfig{Name: name, Kernel: k, Z: zb, OutputDim: s.OutputDim, Mean: s.Mean}
			switch s.Index {
			case 0:
				w := gptest.RandomMatrix(prng, 3, s.OutputDim, -0.5, 0.5)
				return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: k, Zalpha: zg, Zbeta: zb, Weights: w,
					OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS, LBScale: 0.3})
			case 1:
				o, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: c, Zgamma: zg})
				if err != nil {
					return nil, err
				}
				randomQ(t, o.BetaQ(), prng)
				return o, o.Agamma.Set(gptest.RandomMatrix(prng, 3, s.OutputDim, -0.5, 0.5))
			default:
				h, err := layers.NewHybrid(layers.HybridConfig{SVGPConfig: c, Zgamma: zg})
				if err != nil {
					return nil, err
				}
				randomQ(t, h.Beta.Q, prng)
				return h, h.Agamma.Set(gptest.RandomMatrix(prng, 3, s.OutputDim, -0.5, 0.5))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.2), NumData: 20, Samples: 2,
		Noise: fixedNoise(rng, 2, 10, 2, 2)})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	prog, err := g.Compile(deep.Loss(g.Const("x", x.RawMatrix().Data, 10, 2), g.Const("y", y.RawMatrix().Data, 10, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if got, want := len(prog.Params()), countTrainable(deep.Params()); got != want {
		t.Fatalf("program differentiates %d params, model has %d trainable", got, want)
	}
	gradcheck.CheckProgram(t, prog)
}
