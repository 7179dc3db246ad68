package layers_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// Helpers shared by orth_test.go and hybrid_test.go (prefixed og, "orth/γ", to stay clear of other test
// files of this package). They follow gp/models/models_test.go.

// Shared fixtures (gp/gptest).
var (
	ogToy    = gptest.ToyRegression
	ogKernel = gptest.ARDKernel
	ogValue  = gptest.EvalScalar
)

func ogGaussian(t testing.TB, v float64) *likelihoods.Gaussian {
	t.Helper()
	l, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: v})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// ogKL returns l.KL in a fresh graph.
func ogKL(t testing.TB, l gp.Layer) float64 {
	t.Helper()
	one := mat.NewDense(1, 1, []float64{0})
	return ogValue(t, func(x, _ *graph.Node) *graph.Node { return l.KL(x.Graph()) }, one, one)
}

// ogKmat returns K(x1, x2) through the kernel's own graph.
func ogKmat(t testing.TB, k gp.Kernel, x1, x2 *mat.Dense) *mat.Dense {
	t.Helper()
	n1, d := x1.Dims()
	n2, _ := x2.Dims()
	g := graph.New(graph.Options{})
	a, b := g.Input("a", n1, d), g.Input("b", n2, d)
	prog, err := g.CompileForward(map[string]*graph.Node{"k": k.K(a, b)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("a", x1.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("b", x2.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return mat.NewDense(n1, n2, prog.Output("k"))
}

// ogChol returns the Cholesky factorisation of K(z, z) + jitter·I.
func ogChol(t testing.TB, k gp.Kernel, z *mat.Dense, jitter float64) *mat.Cholesky {
	t.Helper()
	kz := ogKmat(t, k, z, z)
	n, _ := z.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := kz.At(i, j)
			if i == j {
				v += jitter
			}
			s.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		t.Fatal("K not PD")
	}
	return &ch
}

func ogExactLML(t testing.TB, k gp.Kernel, noise float64, x, y *mat.Dense) float64 {
	t.Helper()
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: noise})
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.LogMarginalLikelihoodValue(x, y, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ogRandomQ sets q to a random mean and random lower-triangular factors drawn from a PCG stream seeded by seed,
// so that two layers given the same seed get the same q.
func ogRandomQ(t testing.TB, q *gp.GaussianQ, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	m, p := q.M(), q.P()
	if err := q.Mu.Set(gptest.RandomMatrix(rng, m, p, -1, 1)); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < p; k++ {
		l := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j < i; j++ {
				l[i*m+j] = 0.3 * rng.NormFloat64()
			}
			l[i*m+i] = 0.5 + rng.Float64()
		}
		if err := q.SetSqrt(k, l); err != nil {
			t.Fatal(err)
		}
	}
}

// ogPriorQ returns the setPrior function of gptest.CheckLayer for a whitened β block plus γ weights: m = 0,
// S = I, a_γ = 0.
func ogPriorQ(q *gp.GaussianQ, agamma *graph.Param) func() error {
	return func() error {
		m, p := q.M(), q.P()
		if err := q.Mu.Set(make([]float64, m*p)); err != nil {
			return err
		}
		eye := make([]float64, m*m)
		for i := 0; i < m; i++ {
			eye[i*m+i] = 1
		}
		for k := 0; k < p; k++ {
			if err := q.SetSqrt(k, eye); err != nil {
				return err
			}
		}
		if agamma != nil {
			return agamma.Set(make([]float64, agamma.Size()))
		}
		return nil
	}
}

func ogClose(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b)+1e-300 }

// ogSameModel checks that layers l and ref give the same ELBO (through models.SVGP with a Gaussian likelihood)
// and the same predictions at test inputs, relative rel.
func ogSameModel(t *testing.T, l, ref gp.Layer, x, y, xs *mat.Dense, rel float64) {
	t.Helper()
	n, _ := x.Dims()
	lik := ogGaussian(t, 0.1)
	m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: n})
	if err != nil {
		t.Fatal(err)
	}
	mr, err := models.NewSVGP(models.SVGPConfig{Layer: ref, Likelihood: lik, NumData: n})
	if err != nil {
		t.Fatal(err)
	}
	if e, er := ogValue(t, m.ELBO, x, y), ogValue(t, mr.ELBO, x, y); !ogClose(e, er, rel) {
		t.Errorf("ELBO %.15g, coupled SVGP %.15g", e, er)
	}
	fm, fv, err := models.PredictLayer(m.Layer, xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rm, rv, err := models.PredictLayer(mr.Layer, xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := xs.Dims()
	_, c := fm.Dims()
	for i := 0; i < r; i++ {
		for p := 0; p < c; p++ {
			if !ogClose(fm.At(i, p), rm.At(i, p), rel) || !ogClose(fv.At(i, p), rv.At(i, p), rel) {
				t.Errorf("row %d output %d: %v ± %v, coupled SVGP %v ± %v", i, p, fm.At(i, p), fv.At(i, p), rm.At(i, p), rv.At(i, p))
			}
		}
	}
}

// ogConformanceCases are the CheckLayer cases of Orth and Hybrid: Mβ = 4, Mγ = 3, Din = 2.
var ogConformanceCases = []struct {
	name       string
	unwhitened bool
	dout       int
}{{"whitened-1", false, 1}, {"whitened-2", false, 2}, {"unwhitened-1", true, 1}, {"unwhitened-2", true, 2}}

// ogConformanceConfig returns the β block's configuration and the γ bases of a conformance case.
func ogConformanceConfig(t *testing.T, rng *rand.Rand, unwhitened bool, dout int) (layers.SVGPConfig, *mat.Dense) {
	t.Helper()
	k, err := gptest.StationaryKernel(t, "matern52", gp.KernelConfig{InputDim: 2, Lengthscales: []float64{0.9, 1.3}})
	if err != nil {
		t.Fatal(err)
	}
	mean, _ := gp.NewConstantMean("c", make([]float64, dout))
	z := mat.NewDense(4, 2, gptest.RandomMatrix(rng, 4, 2, -1, 1))
	zg := mat.NewDense(3, 2, gptest.RandomMatrix(rng, 3, 2, -1.5, 1.5))
	return layers.SVGPConfig{Kernel: k, Z: z, OutputDim: dout, Mean: mean, Unwhitened: unwhitened, QSqrtScale: 0.8}, zg
}

func TestOrthConformance(t *testing.T) {
	t.Parallel()
	for _, c := range ogConformanceCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 12))
			sc, zg := ogConformanceConfig(t, rng, c.unwhitened, c.dout)
			l, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: sc, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			if l.NumGamma() != 3 || l.Beta.NumInducing() != 4 {
				t.Fatalf("Mγ = %d, Mβ = %d, want 3 and 4", l.NumGamma(), l.Beta.NumInducing())
			}
			if err := l.BetaQ().Mu.Set(gptest.RandomMatrix(rng, 4, c.dout, -1, 1)); err != nil {
				t.Fatal(err)
			}
			if err := l.Agamma.Set(gptest.RandomMatrix(rng, 3, c.dout, -1, 1)); err != nil {
				t.Fatal(err)
			}
			var prior func() error
			if !c.unwhitened {
				prior = ogPriorQ(l.BetaQ(), l.Agamma)
			}
			gptest.CheckLayer(t, l, rng, prior)
		})
	}
}

// ORTH with |γ| = 0, and with a_γ = 0 and Mγ > 0, is exactly the coupled SVGP: same ELBO and predictions.
func TestOrthReducesToSVGP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		unwhitened bool
		gamma      bool
	}{{"no-gamma", false, false}, {"no-gamma-unwhitened", true, false}, {"zero-agamma", false, true}, {"zero-agamma-unwhitened", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, 22))
			x, y := ogToy(rng, 30, 2, 2)
			z, _ := ogToy(rng, 6, 2, 1)
			zg, _ := ogToy(rng, 4, 2, 1)
			xs, _ := ogToy(rng, 7, 2, 1)
			k := ogKernel(t, 2)
			sc := layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Unwhitened: c.unwhitened}
			ref, err := layers.NewSVGP(sc)
			if err != nil {
				t.Fatal(err)
			}
			oc := layers.OrthConfig{SVGPConfig: sc}
			if c.gamma {
				oc.Zgamma = zg
			}
			l, err := layers.NewOrth(oc)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{false: 0, true: 4}[c.gamma]; l.NumGamma() != want {
				t.Fatalf("Mγ = %d, want %d", l.NumGamma(), want)
			}
			if c.gamma {
				if got, want := len(l.Params()), len(ref.Params())+2; got != want {
					t.Errorf("%d Params, want %d", got, want)
				}
			} else if got, want := len(l.Params()), len(ref.Params()); got != want {
				t.Errorf("%d Params, want the SVGP's %d", got, want)
			}
			ogRandomQ(t, ref.Q, 5)
			ogRandomQ(t, l.BetaQ(), 5)
			ogSameModel(t, l, ref, x, y, xs, 1e-10)
			if a, b := ogKL(t, l), ogKL(t, ref); !ogClose(a, b, 1e-10) {
				t.Errorf("KL %.15g, coupled SVGP %.15g", a, b)
			}
		})
	}
}

// The γ part of ORTH's KL is ½‖a_γ‖² in the metric K_γ − K_γβ K_β⁻¹ K_βγ (K_β with the SVGP's jitter),
// non-negative, and independent of q(u_β): the two parts are orthogonal.
func TestOrthKLGammaPart(t *testing.T) {
	t.Parallel()
	for _, unwhitened := range []bool{false, true} {
		name := map[bool]string{false: "whitened", true: "unwhitened"}[unwhitened]
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, 32))
			z, _ := ogToy(rng, 5, 2, 1)
			zg, _ := ogToy(rng, 4, 2, 1)
			k := ogKernel(t, 2)
			l, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Unwhitened: unwhitened}, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			av := gptest.RandomMatrix(rng, 4, 2, -2, 2)
			if err := l.Agamma.Set(av); err != nil {
				t.Fatal(err)
			}
			// Direct gonum computation: ½ Σ_p a_pᵀ(K_γ − K_γβ (K_β + εI)⁻¹ K_βγ) a_p.
			ch := ogChol(t, k, z, l.Beta.Jitter())
			kbg := ogKmat(t, k, z, zg)
			var sol, schur mat.Dense
			if err := ch.SolveTo(&sol, kbg); err != nil {
				t.Fatal(err)
			}
			schur.Mul(kbg.T(), &sol)
			schur.Sub(ogKmat(t, k, zg, zg), &schur)
			a := mat.NewDense(4, 2, av)
			var sa mat.Dense
			sa.Mul(&schur, a)
			want := 0.0
			for p := 0; p < 2; p++ {
				want += 0.5 * mat.Dot(a.ColView(p), sa.ColView(p))
			}
			if !(want > 0) {
				t.Fatalf("direct γ part %v not positive", want)
			}
			for seed := uint64(1); seed <= 2; seed++ {
				ogRandomQ(t, l.BetaQ(), seed)
				got := ogKL(t, l) - ogKL(t, l.Beta)
				if !ogClose(got, want, 1e-8) {
					t.Errorf("q seed %d: KL_orth − KL_SVGP = %.12g, direct ½‖a_γ‖²_{K_γ−K_γβK_β⁻¹K_βγ} = %.12g", seed, got, want)
				}
			}
		})
	}
}

// ORTHNAT: with Z_β = X and a Gaussian likelihood, one train.NatGrad step with γ = 1 on BetaQ() from the prior
// lands on the optimal q(u_β), exactly as for the coupled SVGP (gp/models/natgrad_test.go). With a_γ = 0 (and
// Mγ > 0) the ELBO equals the exact log marginal likelihood and the new q equals the coupled step's on a plain
// SVGP layer with the same q; with a_γ ≠ 0, since the γ part of the mean vanishes at the β bases = X, the ELBO
// equals log p(y) minus the γ part of the KL (the step is unchanged by the orthogonal γ part).
func TestOrthNatGradOneStep(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		unwhitened bool
		agamma     bool
	}{{"whitened", false, false}, {"unwhitened", true, false}, {"whitened-agamma", false, true}, {"unwhitened-agamma", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(6, 6))
			x, y := ogToy(rng, 20, 2, 2)
			zg, _ := ogToy(rng, 3, 2, 1)
			k := ogKernel(t, 2)
			const noise = 0.08
			sc := layers.SVGPConfig{Kernel: k, Z: x, OutputDim: 2, Jitter: 1e-12, Unwhitened: c.unwhitened}
			l, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: sc, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			ref, err := layers.NewSVGP(sc)
			if err != nil {
				t.Fatal(err)
			}
			if c.agamma {
				if err := l.Agamma.Set(gptest.RandomMatrix(rng, 3, 2, -1, 1)); err != nil {
					t.Fatal(err)
				}
			}
			lik := ogGaussian(t, noise)
			step := func(layer gp.Layer, q *gp.GaussianQ) *models.SVGP {
				m, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: 20})
				if err != nil {
					t.Fatal(err)
				}
				ng, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 1})
				if err != nil {
					t.Fatal(err)
				}
				g := graph.New(graph.Options{})
				xn, yn := g.Input("x", 20, 2), g.Input("y", 20, 2)
				prog, err := g.Compile(m.Loss(xn, yn), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer prog.Close()
				if err := prog.Set("x", x.RawMatrix().Data); err != nil {
					t.Fatal(err)
				}
				if err := prog.Set("y", y.RawMatrix().Data); err != nil {
					t.Fatal(err)
				}
				if err := prog.Run(); err != nil {
					t.Fatal(err)
				}
				if err := ng.AfterBackward(&train.Step{Index: 0, Loss: prog.Loss(), Grads: prog, Program: prog}); err != nil {
					t.Fatal(err)
				}
				return m
			}
			m := step(l, l.BetaQ())
			want := ogExactLML(t, k, noise, x, y)
			if c.agamma {
				klg := ogKL(t, l) - ogKL(t, l.Beta)
				if !(klg > 0) {
					t.Fatalf("γ part of the KL %v not positive", klg)
				}
				want -= klg
			}
			if elbo := ogValue(t, m.ELBO, x, y); math.Abs(elbo-want) > 1e-6*math.Abs(want) {
				t.Errorf("after one natural step on BetaQ: ELBO %.10g, want %.10g", elbo, want)
			}
			if c.agamma {
				return
			}
			step(ref, ref.Q)
			for p := 0; p < 2; p++ {
				got, exp := l.BetaQ().SqrtValue(p), ref.Q.SqrtValue(p)
				for i := range got {
					if math.Abs(got[i]-exp[i]) > 1e-8*math.Max(1, math.Abs(exp[i])) {
						t.Fatalf("output %d: factor entry %d is %v after the ORTH step, %v after the coupled step", p, i, got[i], exp[i])
					}
				}
			}
			got, exp := l.BetaQ().MeanValue(), ref.Q.MeanValue()
			for i := range got {
				if math.Abs(got[i]-exp[i]) > 1e-8*math.Max(1, math.Abs(exp[i])) {
					t.Fatalf("mean entry %d is %v after the ORTH step, %v after the coupled step", i, got[i], exp[i])
				}
			}
		})
	}
}

// ogConstructors lets the config-error test run on both decoupled layers.
var ogConstructors = map[string]func(c layers.SVGPConfig, zg *mat.Dense) (gp.Layer, error){
	"orth": func(c layers.SVGPConfig, zg *mat.Dense) (gp.Layer, error) {
		return layers.NewOrth(layers.OrthConfig{SVGPConfig: c, Zgamma: zg})
	},
	"hybrid": func(c layers.SVGPConfig, zg *mat.Dense) (gp.Layer, error) {
		return layers.NewHybrid(layers.HybridConfig{SVGPConfig: c, Zgamma: zg})
	},
}

func TestOrthHybridConfigErrors(t *testing.T) {
	t.Parallel()
	k, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	z := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	zg := mat.NewDense(2, 2, []float64{0.5, 0.5, -1, 1})
	nan := mat.NewDense(2, 2, []float64{0.5, math.NaN(), -1, 1})
	inf := mat.NewDense(2, 2, []float64{0.5, 0.5, math.Inf(1), 1})
	for name, newLayer := range ogConstructors {
		t.Run(name, func(t *testing.T) {
			cases := map[string]struct {
				c    layers.SVGPConfig
				zg   *mat.Dense
				want error
			}{
				"nil kernel":      {layers.SVGPConfig{Z: z}, zg, layers.ErrConfig},
				"nil Z":           {layers.SVGPConfig{Kernel: k}, zg, layers.ErrConfig},
				"negative out":    {layers.SVGPConfig{Kernel: k, Z: z, OutputDim: -1}, zg, layers.ErrConfig},
				"Zgamma width":    {layers.SVGPConfig{Kernel: k, Z: z}, mat.NewDense(2, 3, nil), ops.ErrShape},
				"Zgamma NaN":      {layers.SVGPConfig{Kernel: k, Z: z}, nan, layers.ErrConfig},
				"Zgamma Inf":      {layers.SVGPConfig{Kernel: k, Z: z}, inf, layers.ErrConfig},
				"Z NaN":           {layers.SVGPConfig{Kernel: k, Z: nan}, zg, layers.ErrConfig},
				"Z width":         {layers.SVGPConfig{Kernel: k, Z: mat.NewDense(3, 5, nil)}, zg, ops.ErrShape},
				"negative jitter": {layers.SVGPConfig{Kernel: k, Z: z, Jitter: -1}, zg, layers.ErrConfig},
			}
			for cname, c := range cases {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s: panic %v", cname, r)
						}
					}()
					if _, err := newLayer(c.c, c.zg); !errors.Is(err, c.want) {
						t.Errorf("%s: got %v, want an error wrapping %v", cname, err, c.want)
					}
				}()
			}
			// An empty Zgamma means |γ| = 0.
			l, err := newLayer(layers.SVGPConfig{Kernel: k, Z: z}, &mat.Dense{})
			if err != nil {
				t.Fatalf("empty Zgamma: %v", err)
			}
			ref, _ := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z})
			if got := len(l.Params()); got != len(ref.Params()) {
				t.Errorf("empty Zgamma: %d Params, the SVGP has %d", got, len(ref.Params()))
			}
		})
	}
}
