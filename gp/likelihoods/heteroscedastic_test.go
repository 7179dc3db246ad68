package likelihoods_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

func newHetero(t *testing.T, points int) *likelihoods.Heteroscedastic {
	t.Helper()
	h, err := likelihoods.NewHeteroscedastic(likelihoods.HeteroscedasticConfig{QuadPoints: points})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// heteroData returns marginals μ, v [n,2p] (μ in [−1.5, 1.5), v in [0.05, 1.05)) and observations y [n,p] in
// [−2, 2).
func heteroData(seed uint64, n, p int) (mu, v, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 32))
	mu, v, y = make([]float64, n*2*p), make([]float64, n*2*p), make([]float64, n*p)
	for i := range mu {
		mu[i], v[i] = 3*rng.Float64()-1.5, 0.05+rng.Float64()
	}
	for i := range y {
		y[i] = 4*rng.Float64() - 2
	}
	return mu, v, y
}

// heteroVE evaluates lik's VariationalExpectations at μ, v [n,l] and y [n,p] in a forward program.
func heteroVE(t *testing.T, lik gp.Likelihood, mu, v, y []float64, n, l, p int) []float64 {
	t.Helper()
	g := graph.New(graph.Options{})
	ve := lik.VariationalExpectations(g.Const("mu", mu, n, l), g.Const("v", v, n, l), g.Const("y", y, n, p))
	prog, err := g.CompileForward(map[string]*graph.Node{"ve": ve})
	if err != nil {
		t.Fatalf("%v: %v", lik, err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatalf("%v: %v", lik, err)
	}
	return slices.Clone(prog.Output("ve"))
}

// relClose fails t unless |got − want| ≤ tol·|want|.
func relClose(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol*math.Abs(want)) {
		t.Errorf("%s = %.17g, want %.17g (relative error %.3g > %g)", what, got, want, math.Abs(got-want)/math.Abs(want), tol)
	}
}

func TestHeteroscedasticConfig(t *testing.T) {
	t.Parallel()
	h := newHetero(t, 0)
	if h.QuadPoints() != ops.DefaultQuadPoints || h.Params() != nil {
		t.Errorf("defaults: %v, Params %v", h, h.Params())
	}
	for p, want := range map[int]int{1: 2, 3: 6} {
		if l, err := h.LatentDim(p); err != nil || l != want {
			t.Errorf("LatentDim(%d) = %d, %v; want %d", p, l, err, want)
		}
	}
	if _, err := h.LatentDim(0); err == nil {
		t.Error("LatentDim(0) accepted")
	}
	if _, err := likelihoods.NewHeteroscedastic(likelihoods.HeteroscedasticConfig{QuadPoints: -1}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("QuadPoints −1: error %v, want gp.ErrConfig", err)
	}
	fam, ok := gp.LookupLikelihood("heteroscedastic")
	if !ok || fam.Kind != likelihoods.KindHeteroscedastic || fam.Classes || fam.RawTargets || fam.Doc == "" {
		t.Fatalf("family: %+v, %v", fam, ok)
	}
	lik, err := fam.New(gp.LikelihoodOptions{Outputs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := lik.LatentDim(2); err != nil || l != 4 {
		t.Errorf("the family's likelihood: LatentDim(2) = %d, %v", l, err)
	}
}

// TestHeteroscedasticVEGradients: central finite differences of −Σ VE with respect to μ and v (both latents, P =
// 3 outputs) against the graph's gradients (relative ≤ 1e-6).
func TestHeteroscedasticVEGradients(t *testing.T) {
	t.Parallel()
	const n, p = 5, 3
	mu, v, y := heteroData(1, n, p)
	muP, err := graph.NewParam("q.mu", mu, nil, n, 2*p)
	if err != nil {
		t.Fatal(err)
	}
	vP, err := graph.NewParam("q.var", v, graph.Positive{}, n, 2*p)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	ve := newHetero(t, 0).VariationalExpectations(g.Param(muP), g.Param(vP), g.Const("y", y, n, p))
	prog, err := g.Compile(g.Neg(g.Sum(ve)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	gradcheck.CheckProgram(t, prog)
	for _, q := range []*graph.Param{muP, vP} {
		for j, x := range prog.Grad(q) {
			if x == 0 || math.IsNaN(x) {
				t.Errorf("∂/∂%s[%d] = %v", q.Name(), j, x)
			}
		}
	}
}

// TestHeteroscedasticVEVsQuadrature: the closed form against E_q[log N(y | f, e^g)] by a 40×40-point
// Gauss–Hermite product rule over (f, g) (exact in f, where the integrand is quadratic; converged to round-off in
// g at these variances): relative 1e-10.
func TestHeteroscedasticVEVsQuadrature(t *testing.T) {
	t.Parallel()
	const n, p = 6, 2
	mu, v, y := heteroData(2, n, p)
	ve := heteroVE(t, newHetero(t, 0), mu, v, y, n, 2*p, p)
	x, w, err := ops.GaussHermite(40)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := 0.0
		for j := range p {
			mf, vf, mg, vg := mu[i*2*p+j], v[i*2*p+j], mu[i*2*p+p+j], v[i*2*p+p+j]
			for a := range x {
				f := mf + math.Sqrt(2*vf)*x[a]
				for b := range x {
					gg := mg + math.Sqrt(2*vg)*x[b]
					r := y[i*p+j] - f
					want += w[a] * w[b] / math.Pi * (-0.5*(math.Log(2*math.Pi)+gg) - 0.5*r*r*math.Exp(-gg))
				}
			}
		}
		relClose(t, "VE", ve[i], want, 1e-10)
	}
}

// TestHeteroscedasticPredict: the predictive variance vf + exp(μg + vg/2) against E[(y − μf)²] by Gauss–Hermite
// over g, and the predictive log density (20-point Gauss–Hermite over g) against log ∫ N(y | μf, vf + e^g) q(g) dg
// by Simpson's rule on μg ± 12√vg with 4000 intervals, an independent rule (relative 1e-9).
func TestHeteroscedasticPredict(t *testing.T) {
	t.Parallel()
	const n, p = 4, 2
	mu, v, y := heteroData(3, n, p)
	h := newHetero(t, 0)
	mean, variance, err := h.PredictMeanVar(mu, v, n)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := h.PredictLogDensity(mu, v, y, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(mean) != n*p || len(variance) != n*p || len(ld) != n {
		t.Fatalf("sizes %d, %d, %d", len(mean), len(variance), len(ld))
	}
	x, w, err := ops.GaussHermite(60)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := 0.0
		for j := range p {
			mf, vf, mg, vg := mu[i*2*p+j], v[i*2*p+j], mu[i*2*p+p+j], v[i*2*p+p+j]
			if mean[i*p+j] != mf {
				t.Errorf("mean[%d,%d] = %v, want μf %v", i, j, mean[i*p+j], mf)
			}
			ev := 0.0
			for b := range x {
				ev += w[b] / math.SqrtPi * math.Exp(mg+math.Sqrt(2*vg)*x[b])
			}
			relClose(t, "predictive variance", variance[i*p+j], vf+ev, 1e-10)
			r, sg := y[i*p+j]-mf, math.Sqrt(vg)
			const k = 4000
			step := 24 * sg / k
			dens := 0.0
			for s := 0; s <= k; s++ {
				gg := mg - 12*sg + float64(s)*step
				tv := vf + math.Exp(gg)
				f := math.Exp(-0.5*(math.Log(2*math.Pi*tv)+r*r/tv)) * math.Exp(-0.5*(gg-mg)*(gg-mg)/vg) / math.Sqrt(2*math.Pi*vg)
				c := 2.0 + 2*float64(s%2) // Simpson's weights 1, 4, 2, 4, …, 4, 1
				if s == 0 || s == k {
					c = 1
				}
				dens += c * f
			}
			want += math.Log(dens * step / 3)
		}
		relClose(t, "predictive log density", ld[i], want, 1e-9)
	}
}

// TestHeteroscedasticEqualsGaussian: with a constant log-noise latent (μg = log σ², vg = 0) the expectations,
// the predictive moments and the predictive log density are the Gaussian likelihood's with variance σ²
// (relative 1e-12).
func TestHeteroscedasticEqualsGaussian(t *testing.T) {
	t.Parallel()
	const n, p, s2 = 7, 2, 0.37
	gauss, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: s2})
	if err != nil {
		t.Fatal(err)
	}
	mu, v, y := heteroData(4, n, p)
	fm, fv := make([]float64, n*p), make([]float64, n*p) // the Gaussian's [n,p]
	hm, hv := slices.Clone(mu), slices.Clone(v)          // the heteroscedastic [n,2p]: g columns constant
	for i := range n {
		for j := range p {
			fm[i*p+j], fv[i*p+j] = mu[i*2*p+j], v[i*2*p+j]
			hm[i*2*p+p+j], hv[i*2*p+p+j] = math.Log(gauss.Variance()), 0
		}
	}
	h := newHetero(t, 0)
	veG, veH := heteroVE(t, gauss, fm, fv, y, n, p, p), heteroVE(t, h, hm, hv, y, n, 2*p, p)
	ldG, err := gauss.PredictLogDensity(fm, fv, y, n)
	if err != nil {
		t.Fatal(err)
	}
	ldH, err := h.PredictLogDensity(hm, hv, y, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		relClose(t, "VE", veH[i], veG[i], 1e-12)
		relClose(t, "predictive log density", ldH[i], ldG[i], 1e-12)
	}
	mG, vG, err := gauss.PredictMeanVar(fm, fv, n)
	if err != nil {
		t.Fatal(err)
	}
	mH, vH, err := h.PredictMeanVar(hm, hv, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range mG {
		relClose(t, "predictive mean", mH[i], mG[i], 1e-12)
		relClose(t, "predictive variance", vH[i], vG[i], 1e-12)
	}
}

// TestHeteroscedasticShapes: latent widths other than twice y's are errors, in the graph and in prediction.
func TestHeteroscedasticShapes(t *testing.T) {
	t.Parallel()
	h := newHetero(t, 0)
	for _, c := range []struct{ l, p int }{{3, 1}, {3, 2}, {2, 2}} {
		g := graph.New(graph.Options{})
		out := h.VariationalExpectations(g.Input("mu", 4, c.l), g.Input("v", 4, c.l), g.Input("y", 4, c.p))
		if _, err := g.CompileForward(map[string]*graph.Node{"ve": out}); err == nil {
			t.Errorf("latents [4,%d] with y [4,%d] accepted", c.l, c.p)
		}
	}
	g := graph.New(graph.Options{})
	out := h.VariationalExpectations(g.Input("mu", 4, 2), g.Input("v", 4, 4), g.Input("y", 4, 1))
	if _, err := g.CompileForward(map[string]*graph.Node{"ve": out}); err == nil {
		t.Error("fVar [4,4] with fMean [4,2] accepted")
	}
	odd := []float64{0, 1, 2, 3, 4, 5}
	if _, _, err := h.PredictMeanVar(odd, odd, 2); err == nil {
		t.Error("PredictMeanVar: 3 latent columns accepted")
	}
	if _, err := h.PredictLogDensity(odd, odd, []float64{1, 2}, 2); err == nil {
		t.Error("PredictLogDensity: 3 latent columns accepted")
	}
	four := []float64{0, 1, 2, 3}
	if _, err := h.PredictLogDensity(four, four, []float64{1, 2, 3}, 1); err == nil {
		t.Error("PredictLogDensity: 3 targets for latents [1,4] (want y [1,2]) accepted")
	}
}

// heteroNoiseData draws n points of y = sin(x) + ε·(0.1 + 0.5|x|), x uniform on [−3, 3], ε ~ N(0, 1).
func heteroNoiseData(rng *rand.Rand, n int) (x, y *mat.Dense) {
	x, y = mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := range n {
		xi := 6*rng.Float64() - 3
		x.Set(i, 0, xi)
		y.Set(i, 0, math.Sin(xi)+rng.NormFloat64()*(0.1+0.5*math.Abs(xi)))
	}
	return x, y
}

// TestHeteroscedasticBeatsGaussian: on seeded data whose noise grows with |x|, an SVGP with the heteroscedastic
// likelihood (2 latent GPs: mean and log noise variance) predicts held-out points with a higher log likelihood
// than the same SVGP with the Gaussian likelihood, trained with the same steps and minibatches; its predictive
// standard deviation follows the true noise (small near x = 0, large at |x| = 3) where the Gaussian's is flat.
func TestHeteroscedasticBeatsGaussian(t *testing.T) {
	t.Parallel()
	const nTrain, nTest, m, iters, batch = 400, 400, 15, 1500, 100
	rng := rand.New(rand.NewPCG(32, 4))
	x, y := heteroNoiseData(rng, nTrain)
	xTest, yTest := heteroNoiseData(rng, nTest)
	z, err := gp.KMeans(x, m, 25, rng)
	if err != nil {
		t.Fatal(err)
	}
	edges := mat.NewDense(2, 1, []float64{0, 3}) // the true noise sd: 0.1 and 1.6
	type fit struct{ ll, sd0, sd3 float64 }
	run := func(name string) fit {
		fam, ok := gp.LookupLikelihood(name)
		if !ok {
			t.Fatalf("no likelihood %q", name)
		}
		lik, err := fam.New(gp.LikelihoodOptions{Outputs: 1, NoiseVariance: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		latent, err := lik.LatentDim(1)
		if err != nil {
			t.Fatal(err)
		}
		kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
		if err != nil {
			t.Fatal(err)
		}
		layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: mat.DenseCopyOf(z), OutputDim: latent})
		if err != nil {
			t.Fatal(err)
		}
		model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: nTrain})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := train.Train(model, x, y, rand.New(rand.NewPCG(7, 7)), train.Config{Iters: iters, BatchSize: batch, Optimizer: &train.Adam{LR: 0.03}}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ld, err := model.LogDensity(xTest, yTest, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := model.Predict(edges, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f := fit{ll: 0, sd0: math.Sqrt(pr.YVar.At(0, 0)), sd3: math.Sqrt(pr.YVar.At(1, 0))}
		for _, l := range ld {
			f.ll += l / nTest
		}
		t.Logf("%-60v test LL %.4f per point; predictive sd at x = 0: %.3f, at x = 3: %.3f (true noise sd 0.1, 1.6)", lik, f.ll, f.sd0, f.sd3)
		return f
	}
	gauss, het := run("gaussian"), run("heteroscedastic")
	oracle := 0.0 // the test LL of the true distribution, for scale
	for i := range nTest {
		xi := xTest.At(i, 0)
		sd, r := 0.1+0.5*math.Abs(xi), yTest.At(i, 0)-math.Sin(xi)
		oracle += (-0.5*math.Log(2*math.Pi) - math.Log(sd) - 0.5*r*r/(sd*sd)) / nTest
	}
	t.Logf("the true distribution's test LL: %.4f per point", oracle)
	if !(het.ll > gauss.ll+0.2) {
		t.Errorf("heteroscedastic test LL %.4f, Gaussian %.4f: want the heteroscedastic better by more than 0.2 nats per point", het.ll, gauss.ll)
	}
	if !(het.sd3 > 3*het.sd0) {
		t.Errorf("heteroscedastic predictive sd %.3f at x = 0 and %.3f at x = 3: the noise does not follow |x|", het.sd0, het.sd3)
	}
}

// heteroSVGP returns an SVGP with the heteroscedastic likelihood (an SE kernel over 2 latent columns, 8 inducing
// inputs) trained briefly on seeded data whose noise grows with |x|, and test inputs.
func heteroSVGP(t *testing.T) (*models.SVGP, *mat.Dense) {
	t.Helper()
	rng := rand.New(rand.NewPCG(32, 5))
	x, y := heteroNoiseData(rng, 120)
	xTest, _ := heteroNoiseData(rng, 7)
	z, err := gp.KMeans(x, 8, 10, rng)
	if err != nil {
		t.Fatal(err)
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: z, OutputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: newHetero(t, 0), NumData: 120})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.Train(model, x, y, rand.New(rand.NewPCG(7, 8)), train.Config{Iters: 150, BatchSize: 60, Optimizer: &train.Adam{LR: 0.03}}); err != nil {
		t.Fatal(err)
	}
	return model, xTest
}

// TestHeteroscedasticPredictor: an SVGP with the heteroscedastic likelihood passes gp.Predictor's conformance
// suite: f is [N,2P] (means, log noise variances), y [N,P] (PredictiveDim: the likelihood's gp.PredictiveDimer),
// full covariances, covariances between the latents and draws included; the family is found by the registry.
func TestHeteroscedasticPredictor(t *testing.T) {
	t.Parallel()
	h := newHetero(t, 0)
	for l, want := range map[int]int{2: 1, 4: 2, 6: 3} {
		if got, err := gp.PredictiveDim(h, l); err != nil || got != want {
			t.Errorf("PredictiveDim(%d) = %d, %v; want %d", l, got, err, want)
		}
	}
	for _, l := range []int{0, 1, 3, -2} {
		var se *ops.ShapeError
		if _, err := gp.PredictiveDim(h, l); !errors.As(err, &se) {
			t.Errorf("PredictiveDim(%d): %v, want a *ops.ShapeError", l, err)
		}
	}
	if fam, ok := gp.LikelihoodFamilyOf(h); !ok || fam.Name != "heteroscedastic" || fam.Classes || fam.RawTargets {
		t.Errorf("LikelihoodFamilyOf: %+v, %v", fam, ok)
	}
	model, xTest := heteroSVGP(t)
	if model.OutputDim() != 2 || model.PredictiveDim() != 1 {
		t.Fatalf("OutputDim %d, PredictiveDim %d; want 2 and 1", model.OutputDim(), model.PredictiveDim())
	}
	pr := gptest.CheckPredictor(t, model, xTest, gp.PredictOptions{Full: true, OutputCov: true, Draws: 2})
	for i := range 7 { // y's marginals are the likelihood's: mean μf, variance vf + exp(μg + vg/2)
		mf, vf, mg, vg := pr.FMean.At(i, 0), pr.FVar.At(i, 0), pr.FMean.At(i, 1), pr.FVar.At(i, 1)
		if pr.YMean.At(i, 0) != mf || math.Abs(pr.YVar.At(i, 0)-(vf+math.Exp(mg+vg/2))) > 1e-12*pr.YVar.At(i, 0) {
			t.Errorf("row %d: y %v, %v from f %v, %v, g %v, %v", i, pr.YMean.At(i, 0), pr.YVar.At(i, 0), mf, vf, mg, vg)
		}
	}
}

// TestHeteroscedasticModelFile: a model file of a heteroscedastic SVGP trained on standardised targets predicts
// y in original units ([N,P]), and with Latent its 2P latent columns: the means in the targets' units (v·s + m,
// variances v·s²), the log noise variances as the model has them; full and per-row covariances likewise (only
// the mean's entries scaled); a standardizer of the wrong target width is a *ops.ShapeError, and a file without
// one names its P outputs.
func TestHeteroscedasticModelFile(t *testing.T) {
	t.Parallel()
	model, xTest := heteroSVGP(t)
	const ym, ys = 10.0, 50.0
	f := &modelfile.File{Model: model, Standardizer: &datasets.Standardizer{XMean: []float64{0}, XStd: []float64{1}, YMean: []float64{ym}, YStd: []float64{ys}}}
	raw, err := model.Predict(xTest, gp.PredictOptions{Full: true, OutputCov: true})
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	y, err := f.Predict(xTest, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, c := y.Mean.Dims(); c != 1 {
		t.Fatalf("y has %d columns, want 1", c)
	}
	lat, err := f.Predict(xTest, modelfile.PredictOptions{Latent: true, FullCov: true, OutputCov: true})
	if err != nil {
		t.Fatalf("Latent: %v", err)
	}
	if _, c := lat.Mean.Dims(); c != 2 || len(lat.Cov) != 2 || len(lat.OutputCov) != 7 {
		t.Fatalf("Latent: %d columns, %d covariances, %d output covariances; want 2, 2, 7", c, len(lat.Cov), len(lat.OutputCov))
	}
	for i := range 7 {
		near("y mean", y.Mean.At(i, 0), raw.YMean.At(i, 0)*ys+ym)
		near("y variance", y.Var.At(i, 0), raw.YVar.At(i, 0)*ys*ys)
		near("latent mean", lat.Mean.At(i, 0), raw.FMean.At(i, 0)*ys+ym)
		near("latent variance", lat.Var.At(i, 0), raw.FVar.At(i, 0)*ys*ys)
		near("latent sd", lat.Std.At(i, 0), math.Sqrt(raw.FVar.At(i, 0))*ys)
		near("log noise mean", lat.Mean.At(i, 1), raw.FMean.At(i, 1))
		near("log noise variance", lat.Var.At(i, 1), raw.FVar.At(i, 1))
		near("log noise sd", lat.Std.At(i, 1), math.Sqrt(raw.FVar.At(i, 1)))
		oc, roc := lat.OutputCov[i], raw.OutputCov[i]
		near("output covariance (0,0)", oc.At(0, 0), roc.At(0, 0)*ys*ys)
		near("output covariance (0,1)", oc.At(0, 1), roc.At(0, 1)*ys)
		near("output covariance (1,1)", oc.At(1, 1), roc.At(1, 1))
		for j := range 7 {
			near("mean's covariance", lat.Cov[0].At(i, j), raw.FCov[0].At(i, j)*ys*ys)
			near("log noise's covariance", lat.Cov[1].At(i, j), raw.FCov[1].At(i, j))
		}
	}
	bad := &modelfile.File{Model: model, Standardizer: &datasets.Standardizer{XMean: []float64{0}, XStd: []float64{1}, YMean: []float64{0, 0}, YStd: []float64{1, 1}}}
	var se *ops.ShapeError
	if _, err := bad.Predict(xTest, modelfile.PredictOptions{Latent: true}); !errors.As(err, &se) {
		t.Errorf("a standardizer of 2 targets for 1: %v, want a *ops.ShapeError", err)
	}
	if names := (&modelfile.File{Model: model}).OutputNames(); !slices.Equal(names, []string{"y0"}) {
		t.Errorf("OutputNames without a standardizer: %v, want [y0]", names)
	}
}
