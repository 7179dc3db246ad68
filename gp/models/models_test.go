package models_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// Shared fixtures (gp/gptest).
var (
	toy      = gptest.ToyRegression
	kernel   = gptest.ARDKernel
	value    = gptest.EvalScalar
	exactLML = gptest.ExactLML
	kxx      = gptest.KernelMatrix
)

func gaussian(t testing.TB, v float64) *likelihoods.Gaussian {
	t.Helper()
	l, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: v})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// setOptimalQ sets the whitened layer's q(v) to the exact posterior for Z = X and Gaussian noise σ²:
// y = L v + ε, v ~ N(0, I) ⇒ S = (LᵀL/σ² + I)⁻¹, m = S Lᵀ y / σ² (per output).
func setOptimalQ(t testing.TB, l *layers.SVGP, k gp.Kernel, x, y *mat.Dense, noise float64) {
	t.Helper()
	n, _ := x.Dims()
	_, p := y.Dims()
	var ch mat.Cholesky
	if !ch.Factorize(kxx(t, k, x, l.Jitter())) {
		t.Fatal("K not PD")
	}
	var lu mat.TriDense
	ch.LTo(&lu)
	prec := mat.NewSymDense(n, nil)
	var ltl mat.Dense
	ltl.Mul(lu.T(), &lu)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := ltl.At(i, j) / noise
			if i == j {
				v++
			}
			prec.SetSym(i, j, v)
		}
	}
	var pc mat.Cholesky
	if !pc.Factorize(prec) {
		t.Fatal("precision not PD")
	}
	var s mat.SymDense
	if err := pc.InverseTo(&s); err != nil { // test oracle only: the library never forms inverses
		t.Fatal(err)
	}
	var sc mat.Cholesky
	if !sc.Factorize(&s) {
		t.Fatal("S not PD")
	}
	var ls mat.TriDense
	sc.LTo(&ls)
	var lty, m mat.Dense
	lty.Mul(lu.T(), y)
	lty.Scale(1/noise, &lty)
	m.Mul(&s, &lty)
	if err := l.Q.Mu.Set(m.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	lsd := mat.DenseCopyOf(&ls).RawMatrix().Data
	for k := 0; k < p; k++ {
		if err := l.Q.SetSqrt(k, lsd); err != nil {
			t.Fatal(err)
		}
	}
}

// SVGP with Z = X, a Gaussian likelihood and the optimal q has ELBO = exact log marginal likelihood and the
// exact GP's predictions (GPflow's test_method_equivalence; MATH.md §3).
func TestSVGPOptimalQEqualsExactGP(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := toy(rng, 25, 2, 1)
	k := kernel(t, 2)
	const noise = 0.05
	// A negligible Kuu jitter, so that Kuu = K_ff as in the exact GP (the default 1e-6 would shift the bound
	// by O(1e-6) relative).
	l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: x, Jitter: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	lik := gaussian(t, noise)
	m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: 25})
	if err != nil {
		t.Fatal(err)
	}
	setOptimalQ(t, l, k, x, y, noise)
	elbo := value(t, m.ELBO, x, y)
	lml := exactLML(t, k, noise, x, y)
	if math.Abs(elbo-lml) > 1e-6*math.Abs(lml) {
		t.Errorf("ELBO at the optimal q = %.10g, exact log p(y) = %.10g", elbo, lml)
	}
	xs, _ := toy(rng, 7, 2, 1)
	got, err := m.Predict(xs, gp.PredictOptions{ChunkRows: 3, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	fm, fv := got.FMean, got.FVar
	gpr, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: noise, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	want, err := gpr.Predict(xs, gp.PredictOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		if math.Abs(fm.At(i, 0)-want.FMean.At(i, 0)) > 1e-5 || math.Abs(fv.At(i, 0)-want.FVar.At(i, 0)) > 1e-5 {
			t.Errorf("row %d: SVGP %v ± %v, exact %v ± %v", i, fm.At(i, 0), fv.At(i, 0), want.FMean.At(i, 0), want.FVar.At(i, 0))
		}
		if math.Abs(got.YVar.At(i, 0)-want.YVar.At(i, 0)) > 1e-5 {
			t.Errorf("row %d: SVGP y variance %v, exact %v", i, got.YVar.At(i, 0), want.YVar.At(i, 0))
		}
		for j := 0; j < 7; j++ {
			if math.Abs(got.FCov[0].At(i, j)-want.FCov[0].At(i, j)) > 1e-5 {
				t.Errorf("cov[%d,%d]: SVGP %v, exact %v", i, j, got.FCov[0].At(i, j), want.FCov[0].At(i, j))
			}
		}
	}
}

// Whitened and unwhitened layers give the same ELBO at corresponding parameters: m_u = L_u m_v and
// L_S,u = L_u L_S,v.
func TestWhitenedUnwhitenedAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	x, y := toy(rng, 30, 2, 2)
	z, _ := toy(rng, 6, 2, 1)
	k := kernel(t, 2)
	wl, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	ul, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Unwhitened: true})
	if err != nil {
		t.Fatal(err)
	}
	mv := make([]float64, 12)
	for i := range mv {
		mv[i] = rng.NormFloat64()
	}
	if err := wl.Q.Mu.Set(mv); err != nil {
		t.Fatal(err)
	}
	var ch mat.Cholesky
	if !ch.Factorize(kxx(t, k, z, wl.Jitter())) { // 0 by default (gp.JitterOnFailure): this Kuu factorises as is
		t.Fatal("Kuu not PD")
	}
	var lu mat.TriDense
	ch.LTo(&lu)
	var mu mat.Dense
	mu.Mul(&lu, mat.NewDense(6, 2, mv))
	if err := ul.Q.Mu.Set(mu.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < 2; p++ {
		lv := mat.NewTriDense(6, mat.Lower, nil)
		for i := 0; i < 6; i++ {
			for j := 0; j <= i; j++ {
				v := 0.3 * rng.NormFloat64()
				if i == j {
					v = 0.5 + rng.Float64()
				}
				lv.SetTri(i, j, v)
			}
		}
		if err := wl.Q.SetSqrt(p, mat.DenseCopyOf(lv).RawMatrix().Data); err != nil {
			t.Fatal(err)
		}
		var lS mat.Dense
		lS.Mul(&lu, lv)
		if err := ul.Q.SetSqrt(p, lS.RawMatrix().Data); err != nil {
			t.Fatal(err)
		}
	}
	lik := gaussian(t, 0.2)
	wm, _ := models.NewSVGP(models.SVGPConfig{Layer: wl, Likelihood: lik, NumData: 30})
	um, _ := models.NewSVGP(models.SVGPConfig{Layer: ul, Likelihood: lik, NumData: 30})
	ew, eu := value(t, wm.ELBO, x, y), value(t, um.ELBO, x, y)
	if math.Abs(ew-eu) > 1e-9*math.Abs(ew) {
		t.Errorf("whitened ELBO %.12g, unwhitened %.12g", ew, eu)
	}
	kw := value(t, func(x, _ *graph.Node) *graph.Node { return wl.KL(x.Graph()) }, x, y)
	ku := value(t, func(x, _ *graph.Node) *graph.Node { return ul.KL(x.Graph()) }, x, y)
	if math.Abs(kw-ku) > 1e-9*math.Max(1, math.Abs(kw)) || kw <= 0 {
		t.Errorf("KL whitened %v, unwhitened %v (must agree and be positive)", kw, ku)
	}
}

// SGPR ≤ exact log p(y), with equality at Z = X.
func TestSGPRBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	x, y := toy(rng, 40, 2, 1)
	k := kernel(t, 2)
	const noise = 0.1
	lml := exactLML(t, k, noise, x, y)
	for _, m := range []int{3, 10, 40} {
		z := x
		if m < 40 {
			z = mat.DenseCopyOf(x.Slice(0, m, 0, 2))
		}
		s, err := models.NewSGPR(models.SGPRConfig{Kernel: k, Z: z, NoiseVariance: noise, Jitter: 1e-12})
		if err != nil {
			t.Fatal(err)
		}
		b := value(t, s.ELBO, x, y)
		if b > lml+1e-8*math.Abs(lml) {
			t.Errorf("M=%d: SGPR bound %v exceeds log p(y) = %v", m, b, lml)
		}
		if m == 40 && math.Abs(b-lml) > 1e-6*math.Abs(lml) {
			t.Errorf("Z = X: SGPR bound %.10g, log p(y) %.10g", b, lml)
		}
		if m == 40 {
			xs, _ := toy(rng, 5, 2, 1)
			if err := s.SetTrainingData(x, y); err != nil {
				t.Fatal(err)
			}
			got, err := s.Predict(xs, gp.PredictOptions{ChunkRows: 2, Full: true})
			if err != nil {
				t.Fatal(err)
			}
			gpr, _ := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: noise, X: x, Y: y})
			want, err := gpr.Predict(xs, gp.PredictOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 5; i++ {
				if math.Abs(got.FMean.At(i, 0)-want.FMean.At(i, 0)) > 1e-5 || math.Abs(got.FVar.At(i, 0)-want.FVar.At(i, 0)) > 1e-5 {
					t.Errorf("row %d: SGPR %v ± %v, exact %v ± %v", i, got.FMean.At(i, 0), got.FVar.At(i, 0), want.FMean.At(i, 0), want.FVar.At(i, 0))
				}
				if got.YVar.At(i, 0) != got.FVar.At(i, 0)+s.NoiseVariance() {
					t.Errorf("row %d: y variance %v, want f's + noise", i, got.YVar.At(i, 0))
				}
				for j := 0; j < 5; j++ {
					if math.Abs(got.FCov[0].At(i, j)-want.FCov[0].At(i, j)) > 1e-5 {
						t.Errorf("cov[%d,%d]: SGPR %v, exact %v", i, j, got.FCov[0].At(i, j), want.FCov[0].At(i, j))
					}
				}
			}
		}
	}
}

// ELBO gradients w.r.t. every parameter (q, Z, kernel, likelihood, mean function) pass FD checks, and every
// Param of the model gets a non-zero gradient (a Param left out of Params() would be frozen and caught here).
func TestSVGPGradients(t *testing.T) {
	t.Parallel()
	for _, unwhitened := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(4, 4))
		x, y := toy(rng, 9, 2, 2)
		z, _ := toy(rng, 4, 2, 1)
		mean, err := gp.NewLinearMean("mean", 2, 2, []float64{0.1, 0.2, -0.3, 0.1}, []float64{0.05, -0.1})
		if err != nil {
			t.Fatal(err)
		}
		l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kernel(t, 2), Z: z, OutputDim: 2, Mean: mean, Unwhitened: unwhitened, QSqrtScale: 0.7})
		if err != nil {
			t.Fatal(err)
		}
		mv := make([]float64, 8)
		for i := range mv {
			mv[i] = 0.5 * rng.NormFloat64()
		}
		if err := l.Q.Mu.Set(mv); err != nil {
			t.Fatal(err)
		}
		m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: gaussian(t, 0.3), NumData: 20})
		if err != nil {
			t.Fatal(err)
		}
		g := graph.New(graph.Options{})
		xn, yn := g.Input("x", 9, 2), g.Input("y", 9, 2)
		prog, err := g.Compile(m.Loss(xn, yn), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Set("x", x.RawMatrix().Data); err != nil {
			t.Fatal(err)
		}
		if err := prog.Set("y", y.RawMatrix().Data); err != nil {
			t.Fatal(err)
		}
		if got, want := len(prog.Params()), len(m.Params()); got != want {
			t.Fatalf("program differentiates %d params, model has %d", got, want)
		}
		gradcheck.CheckProgram(t, prog)
		for _, p := range prog.Params() {
			nz := false
			for _, v := range prog.Grad(p) {
				nz = nz || v != 0
			}
			if !nz {
				t.Errorf("unwhitened=%v: param %s has an all-zero gradient", unwhitened, p.Name())
			}
		}
		prog.Close()
	}
}

// TestSGPRShared: an SGPR over an SVGP layer's inducing inputs and a Gaussian likelihood's variance gives the
// same bound as one built from their values, and L-BFGS on it moves those very Params.
func TestSGPRShared(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	x, y := toy(rng, 30, 2, 1)
	k := kernel(t, 2)
	z := mat.DenseCopyOf(x.Slice(0, 5, 0, 2))
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z})
	if err != nil {
		t.Fatal(err)
	}
	lik := gaussian(t, 0.3)
	s, err := models.NewSGPRShared(k, layer.Z, lik.Params()[0], nil, layer.Jitter())
	if err != nil {
		t.Fatal(err)
	}
	own, err := models.NewSGPR(models.SGPRConfig{Kernel: k, Z: z, NoiseVariance: 0.3, Jitter: layer.Jitter()})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := value(t, s.ELBO, x, y), value(t, own.ELBO, x, y); math.Abs(a-b) > 1e-12*math.Abs(b) {
		t.Errorf("shared bound %.15g, own %.15g", a, b)
	}
	z0 := layer.Z.Value()
	if _, err := train.TrainLBFGS(s, x, y, train.LBFGSConfig{Iters: 5}); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(z0, layer.Z.Value()) || lik.Variance() == 0.3 {
		t.Errorf("training the shared SGPR left the layer's Z or the likelihood's variance unchanged")
	}
	if _, err := models.NewSGPRShared(k, lik.Params()[0], lik.Params()[0], nil, 0); err == nil {
		t.Error("a scalar as Z: want a shape error")
	}
	if _, err := models.NewSGPRShared(k, layer.Z, layer.Z, nil, 0); err == nil {
		t.Error("a matrix as the noise variance: want a shape error")
	}
	if _, err := models.NewSGPRShared(k, layer.Z, lik.Params()[0], nil, -1); err == nil {
		t.Error("negative jitter: want an error")
	}
}
