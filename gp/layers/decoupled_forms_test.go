package layers_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Helpers of this file are prefixed df (decoupled forms); it also uses the db helpers of decoupled_test.go.

// dfCombos are the nine (mean, covariance) parameterisations: Havasi et al. 2018's six (Tables 1–2) and the
// whitened S-form with each mean.
var dfCombos = []struct {
	mean layers.MeanForm
	cov  layers.CovForm
}{
	{layers.MeanCB, layers.CovB}, {layers.MeanGP, layers.CovB}, {layers.MeanGPCentred, layers.CovB},
	{layers.MeanCB, layers.CovS}, {layers.MeanGP, layers.CovS}, {layers.MeanGPCentred, layers.CovS},
	{layers.MeanCB, layers.CovSWhitened}, {layers.MeanGP, layers.CovSWhitened}, {layers.MeanGPCentred, layers.CovSWhitened},
}

// dfCovForms are the covariance forms.
var dfCovForms = []layers.CovForm{layers.CovB, layers.CovS, layers.CovSWhitened}

// dfSetMean gives the decoupled layer the mean of q(u) = N(m, ·) on α = Z in its own form: A = K⁻¹m (MeanCB),
// m (MeanGP) or L_α⁻¹m (MeanGPCentred), with K = K(Z,Z) + εI = L_α L_αᵀ.
func dfSetMean(t *testing.T, l *layers.Decoupled, kj *mat.SymDense, m *mat.Dense) {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(kj) {
		t.Fatal("K not positive definite")
	}
	var a mat.Dense
	switch l.MeanForm() {
	case layers.MeanCB:
		if err := ch.SolveTo(&a, m); err != nil {
			t.Fatal(err)
		}
	case layers.MeanGP:
		a.CloneFrom(m)
	case layers.MeanGPCentred: // m' = L_α⁻¹m, so L_α⁻ᵀm' = K⁻¹m and ½‖m'‖² = ½mᵀK⁻¹m
		var lt mat.TriDense
		ch.LTo(&lt)
		if err := a.Solve(&lt, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.A.Set(a.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
}

// dfSetCov gives output p of the decoupled layer the covariance S of q(u) on β = Z in its own form: LB[p] =
// chol(S) (CovS), L_β⁻¹chol(S) with L_β = chol(K) (CovSWhitened: S = L_β V Vᵀ L_βᵀ) or chol(S⁻¹ − K⁻¹) (CovB,
// which needs S ≺ K).
func dfSetCov(t *testing.T, l *layers.Decoupled, p int, kinv *mat.Dense, s *mat.SymDense) {
	t.Helper()
	switch l.CovForm() {
	case layers.CovS:
		if err := l.LB[p].Set(dbCholLower(t, s)); err != nil {
			t.Fatal(err)
		}
		return
	case layers.CovSWhitened:
		m := s.SymmetricDim()
		var k mat.Dense
		k.Inverse(kinv)
		var lb, ls mat.TriDense
		var ch mat.Cholesky
		if !ch.Factorize(dbSym(&k)) {
			t.Fatal("K not positive definite")
		}
		ch.LTo(&lb)
		if !ch.Factorize(s) {
			t.Fatal("S not positive definite")
		}
		ch.LTo(&ls)
		var v mat.Dense // V = L_β⁻¹L_S, lower triangular with a positive diagonal
		if err := v.Solve(&lb, &ls); err != nil {
			t.Fatal(err)
		}
		raw := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				raw[i*m+j] = v.At(i, j)
			}
		}
		if err := l.LB[p].Set(raw); err != nil {
			t.Fatal(err)
		}
		return
	}
	var b mat.Dense
	b.Sub(dbInverse(t, s), kinv)
	if err := l.LB[p].Set(dbCholLower(t, dbSym(&b))); err != nil {
		t.Fatal(err)
	}
}

// dfCompare evaluates Predict, PredictFull and KL of both layers on x and fails t unless every entry agrees
// within rel·max|reference| (rel = 1e-10: round-off of different but exact algebra on well-conditioned K).
func dfCompare(t *testing.T, dl *layers.Decoupled, ref gp.Layer, x *mat.Dense) {
	t.Helper()
	got := dbEval(t, x, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
		outs := map[string]*graph.Node{}
		for name, l := range map[string]gp.Layer{"dec": dl, "ref": ref} {
			mean, v := l.Predict(xn)
			fm, covs := l.PredictFull(xn)
			outs[name+".mean"], outs[name+".var"], outs[name+".fmean"], outs[name+".kl"] = mean, v, fm, l.KL(g)
			for p, c := range covs {
				outs[fmt.Sprintf("%s.cov%d", name, p)] = c
			}
		}
		// ExactKL = MeanTerm + CovKL must equal KL (no sampling here).
		outs["dec.exactkl"] = g.Add(dl.MeanTerm(g), dl.CovKL(g))
		outs["ref.exactkl"] = ref.KL(g)
		return outs
	})
	whats := []string{"mean", "var", "fmean", "kl", "exactkl"}
	for p := 0; p < dl.OutputDim(); p++ {
		whats = append(whats, fmt.Sprintf("cov%d", p))
	}
	for _, what := range whats {
		d, s := got["dec."+what], got["ref."+what]
		if len(d) != len(s) || len(s) == 0 {
			t.Fatalf("%s: %d decoupled entries, %d reference", what, len(d), len(s))
		}
		scale := 0.0
		for _, v := range s {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range s {
			if math.Abs(d[i]-s[i]) > 1e-10*scale {
				t.Errorf("%s[%d]: decoupled %.15g, SVGP %.15g (rel %.3g)", what, i, d[i], s[i], math.Abs(d[i]-s[i])/scale)
			}
		}
	}
	if kl := got["dec.kl"][0]; kl <= 0 {
		t.Errorf("KL = %v, want > 0", kl)
	}
}

// TestDecoupledFormsEqualSVGP: with α = β = Z and q(u) = N(m, S_p) expressed in each form (A = K⁻¹m, m or L_α⁻¹m;
// LB = chol(S) or chol(S⁻¹ − K⁻¹)), every one of the six parameterisations equals the unwhitened SVGP layer with
// the same jitter: Predict means and variances, PredictFull and KL (MATH.md §3, §6, §10). The S-form cases use a
// random S_p = L_p L_pᵀ (not below K); the B-form ones need S_p ≺ K and use S_0 = ½K, S_1 = (K⁻¹ + RRᵀ)⁻¹.
func TestDecoupledFormsEqualSVGP(t *testing.T) {
	t.Parallel()
	const m, dout, n, jitter = 5, 2, 7, 1e-6
	for _, c := range dfCombos {
		t.Run(c.mean.String()+"/"+c.cov.String(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(21, uint64(10*int(c.mean)+int(c.cov))))
			k := dbKernel(t)
			z := mat.NewDense(m, 2, gptest.RandomMatrix(rng, m, 2, -2, 2))
			dl, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: z, Zbeta: z, OutputDim: dout, Jitter: jitter,
				MeanForm: c.mean, CovForm: c.cov})
			if err != nil {
				t.Fatal(err)
			}
			if dl.MeanForm() != c.mean || dl.CovForm() != c.cov {
				t.Fatalf("forms %v/%v, configured %v/%v", dl.MeanForm(), dl.CovForm(), c.mean, c.cov)
			}
			sl, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, OutputDim: dout, Unwhitened: true, Jitter: jitter})
			if err != nil {
				t.Fatal(err)
			}
			kj := dbKjitter(t, k, z, jitter)
			kinv := dbInverse(t, kj)
			mu := mat.NewDense(m, dout, gptest.RandomMatrix(rng, m, dout, -1, 1))
			if err := sl.Q.Mu.Set(mu.RawMatrix().Data); err != nil {
				t.Fatal(err)
			}
			dfSetMean(t, dl, kj, mu)
			for p := 0; p < dout; p++ {
				var s *mat.SymDense
				switch {
				case c.cov != layers.CovB:
					lp := mat.NewDense(m, m, dbRandomLower(rng, m, 0.3, 0.5))
					var ss mat.Dense
					ss.Mul(lp, lp.T())
					s = dbSym(&ss)
				case p == 0:
					s = mat.NewSymDense(m, nil)
					s.ScaleSym(0.5, kj)
				default:
					r := mat.NewDense(m, m, gptest.RandomMatrix(rng, m, m, -1, 1))
					var rr, prec mat.Dense
					rr.Mul(r, r.T())
					prec.Add(kinv, &rr)
					s = dbSym(dbInverse(t, &prec))
				}
				if err := sl.Q.SetSqrt(p, dbCholLower(t, s)); err != nil {
					t.Fatal(err)
				}
				dfSetCov(t, dl, p, kinv, s)
			}
			x := mat.NewDense(n, 2, gptest.RandomMatrix(rng, n, 2, -2.5, 2.5))
			dfCompare(t, dl, sl, x)
		})
	}
}

// TestDecoupledFormsMeanWeights: Weights returns the effective a of μ = K_xα a in every mean form, and MeanTerm
// the form's KL mean term, against closed forms in gonum (½mᵀK⁻¹m for the sparse-GP forms), with Mα ≠ Mβ.
func TestDecoupledFormsMeanWeights(t *testing.T) {
	t.Parallel()
	const ma, mb, dout, jitter = 6, 3, 2, 1e-6
	rng := rand.New(rand.NewPCG(23, 24))
	k := dbKernel(t)
	za := mat.NewDense(ma, 2, gptest.RandomMatrix(rng, ma, 2, -2, 2))
	zb := mat.NewDense(mb, 2, gptest.RandomMatrix(rng, mb, 2, -1, 1))
	kj := dbKjitter(t, k, za, jitter)
	var ch mat.Cholesky
	if !ch.Factorize(kj) {
		t.Fatal("K_α not positive definite")
	}
	mu := mat.NewDense(ma, dout, gptest.RandomMatrix(rng, ma, dout, -1, 1))
	var want mat.Dense // K_α⁻¹m
	if err := ch.SolveTo(&want, mu); err != nil {
		t.Fatal(err)
	}
	var prod mat.Dense
	prod.MulElem(mu, &want)
	wantTerm := 0.5 * mat.Sum(&prod) // ½ Σ_p m_pᵀK⁻¹m_p
	for _, mf := range []layers.MeanForm{layers.MeanCB, layers.MeanGP, layers.MeanGPCentred} {
		for _, cf := range dfCovForms {
			l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, OutputDim: dout, Jitter: jitter,
				MeanForm: mf, CovForm: cf})
			if err != nil {
				t.Fatal(err)
			}
			dfSetMean(t, l, kj, mu)
			got := dbEval(t, za, func(g *graph.Graph, _ *graph.Node) map[string]*graph.Node {
				return map[string]*graph.Node{"a": l.Weights(g), "term": l.MeanTerm(g)}
			})
			for i, w := range want.RawMatrix().Data {
				if d := math.Abs(got["a"][i] - w); d > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("%v/%v: a[%d] = %.15g, K⁻¹m %.15g", mf, cf, i, got["a"][i], w)
				}
			}
			if d := math.Abs(got["term"][0] - wantTerm); d > 1e-10*math.Abs(wantTerm) {
				t.Errorf("%v/%v: mean term %.15g, ½mᵀK⁻¹m %.15g", mf, cf, got["term"][0], wantTerm)
			}
		}
	}
}

// dfPrior sets q to the prior in every form: A = 0 and LB = chol(K_β + εI) (CovS; KL exactly 0), I
// (CovSWhitened; KL exactly 0) or 1e-5·I (CovB; B ≈ 0, KL = O(1e-10)).
func dfPrior(t *testing.T, l *layers.Decoupled, k gp.Kernel) func() error {
	return func() error {
		if err := l.A.Set(make([]float64, l.NumMeanBases()*l.OutputDim())); err != nil {
			return err
		}
		mb := l.NumCovBases()
		lb := make([]float64, mb*mb)
		switch l.CovForm() {
		case layers.CovS:
			zb := mat.NewDense(mb, l.InputDim(), l.Zbeta.Value())
			lb = dbCholLower(t, dbKjitter(t, k, zb, l.Jitter()))
		case layers.CovSWhitened:
			for i := 0; i < mb; i++ {
				lb[i*mb+i] = 1
			}
		default:
			for i := 0; i < mb; i++ {
				lb[i*mb+i] = 1e-5
			}
		}
		for _, p := range l.LB {
			if err := p.Set(lb); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestDecoupledFormsConformance runs gptest.CheckLayer (shapes, PredictFull against Predict, KL ≥ 0, KL = 0 at the
// prior, and central finite-difference gradients of Σ W⊙mean + Σ V⊙var + KL with respect to every Param and the
// inputs, rel ≤ 1e-6) on every parameterisation, Dout = 2, with a constant mean function and Mα ≠ Mβ.
func TestDecoupledFormsConformance(t *testing.T) {
	t.Parallel()
	for _, c := range dfCombos {
		t.Run(c.mean.String()+"/"+c.cov.String(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(25, uint64(10*int(c.mean)+int(c.cov))))
			za := mat.NewDense(5, 2, gptest.RandomMatrix(rng, 5, 2, -1.5, 1.5))
			zb := mat.NewDense(3, 2, gptest.RandomMatrix(rng, 3, 2, -1, 1))
			mean, err := gp.NewConstantMean("c", []float64{0.3, -0.2})
			if err != nil {
				t.Fatal(err)
			}
			k := dbKernel(t)
			l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, OutputDim: 2, Mean: mean,
				MeanForm: c.mean, CovForm: c.cov})
			if err != nil {
				t.Fatal(err)
			}
			dbRandomize(t, l, rng)
			gptest.CheckLayer(t, l, rng, dfPrior(t, l, k))
		})
	}
	// The generalized SE-ARD bases go through the same forms (K_α and K_β from eq. 19).
	t.Run("GSE/MeanGPCentred/CovS", func(t *testing.T) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(27, 28))
		cfg := dgConfig(t, rng, 2, false)
		cfg.MeanForm, cfg.CovForm = layers.MeanGPCentred, layers.CovS
		cfg.CAlpha = gptest.RandomMatrix(rng, 5, 2, 0.5, 2)
		cfg.CBeta = gptest.RandomMatrix(rng, 3, 2, 0.5, 2)
		l, err := layers.NewDecoupledGSE(cfg)
		if err != nil {
			t.Fatal(err)
		}
		dbRandomize(t, l.Base(), rng)
		gptest.CheckLayer(t, l, rng, nil)
	})
}

// TestDecoupledFormsDefaults: the zero config is MeanCB/CovB with the historical Param names; the other forms name
// A and LB after what they hold; CovS starts at S = LBScale²·I, and the recommended deep-GP LBScale = 1e-5 is
// accepted.
func TestDecoupledFormsDefaults(t *testing.T) {
	t.Parallel()
	k := dbKernel(t)
	za := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	zb := mat.NewDense(2, 2, []float64{0.5, 0.5, -1, 1})
	for _, c := range []struct {
		mf           layers.MeanForm
		cf           layers.CovForm
		scale        float64
		aName, lName string
	}{
		{layers.MeanCB, layers.CovB, 0, "decoupled.a", "decoupled.LB1"},
		{layers.MeanGP, layers.CovS, 0, "decoupled.m", "decoupled.LS1"},
		{layers.MeanGPCentred, layers.CovS, 1e-5, "decoupled.mcent", "decoupled.LS1"},
		{layers.MeanGPCentred, layers.CovSWhitened, 1e-5, "decoupled.mcent", "decoupled.LV1"},
	} {
		l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, OutputDim: 2, MeanForm: c.mf, CovForm: c.cf,
			LBScale: c.scale})
		if err != nil {
			t.Fatalf("%v/%v: %v", c.mf, c.cf, err)
		}
		if l.MeanForm() != c.mf || l.CovForm() != c.cf {
			t.Errorf("forms %v/%v, want %v/%v", l.MeanForm(), l.CovForm(), c.mf, c.cf)
		}
		if l.A.Name() != c.aName || l.LB[1].Name() != c.lName {
			t.Errorf("%v/%v: names %s, %s; want %s, %s", c.mf, c.cf, l.A.Name(), l.LB[1].Name(), c.aName, c.lName)
		}
		scale := c.scale
		if scale == 0 {
			scale = layers.DefaultLBScale
		}
		v := l.LB[0].Value()
		for i, want := range []float64{scale, 0, 0, scale} {
			if math.Abs(v[i]-want) > 1e-12 {
				t.Errorf("%v/%v: initial LB0 %v, want %g·I", c.mf, c.cf, v, scale)
				break
			}
		}
	}
	if got := (layers.DecoupledConfig{}).MeanForm; got != layers.MeanCB {
		t.Errorf("zero MeanForm is %v", got)
	}
	if got := (layers.DecoupledConfig{}).CovForm; got != layers.CovB {
		t.Errorf("zero CovForm is %v", got)
	}
	if s := layers.MeanForm(7).String() + layers.CovForm(-1).String(); s != "MeanForm(7)CovForm(-1)" {
		t.Errorf("unknown forms print as %q", s)
	}
}

// TestDecoupledFormsConfigErrors: Jacobi only with MeanCB and CovB, MeanBasisBatch only with MeanCB, and unknown
// enum values are rejected with ErrConfig; the valid neighbours are accepted. Form-specific accessors fail the
// graph (not panic) on the wrong form.
func TestDecoupledFormsConfigErrors(t *testing.T) {
	t.Parallel()
	k := dbKernel(t)
	za := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	zb := mat.NewDense(2, 2, []float64{0.5, 0.5, -1, 1})
	rng := rand.New(rand.NewPCG(1, 1))
	base := func(f func(c *layers.DecoupledConfig)) layers.DecoupledConfig {
		c := layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb}
		f(&c)
		return c
	}
	cases := map[string]struct {
		c       layers.DecoupledConfig
		wantErr bool
	}{
		"Jacobi MeanGP":        {base(func(c *layers.DecoupledConfig) { c.Jacobi, c.MeanForm = true, layers.MeanGP }), true},
		"Jacobi MeanGPCentred": {base(func(c *layers.DecoupledConfig) { c.Jacobi, c.MeanForm = true, layers.MeanGPCentred }), true},
		"Jacobi CovS":          {base(func(c *layers.DecoupledConfig) { c.Jacobi, c.CovForm = true, layers.CovS }), true},
		"Jacobi GPCentred CovS": {base(func(c *layers.DecoupledConfig) {
			c.Jacobi, c.MeanForm, c.CovForm = true, layers.MeanGPCentred, layers.CovS
		}), true},
		"batch MeanGP": {base(func(c *layers.DecoupledConfig) { c.MeanBasisBatch, c.Rand, c.MeanForm = 2, rng, layers.MeanGP }), true},
		"batch MeanGPCentred CovS": {base(func(c *layers.DecoupledConfig) {
			c.MeanBasisBatch, c.Rand, c.MeanForm, c.CovForm = 2, rng, layers.MeanGPCentred, layers.CovS
		}), true},
		"batch no Rand MeanGP": {base(func(c *layers.DecoupledConfig) { c.MeanBasisBatch, c.MeanForm = 2, layers.MeanGP }), true},
		"MeanForm 3":           {base(func(c *layers.DecoupledConfig) { c.MeanForm = 3 }), true},
		"MeanForm -1":          {base(func(c *layers.DecoupledConfig) { c.MeanForm = -1 }), true},
		"CovForm 3":            {base(func(c *layers.DecoupledConfig) { c.CovForm = 3 }), true},
		"Jacobi CovSWhitened":  {base(func(c *layers.DecoupledConfig) { c.Jacobi, c.CovForm = true, layers.CovSWhitened }), true},
		"SPrior CovSWhitened":  {base(func(c *layers.DecoupledConfig) { c.SPrior, c.CovForm = true, layers.CovSWhitened }), false},
		"CovForm -1":           {base(func(c *layers.DecoupledConfig) { c.CovForm = -1 }), true},
		"Jacobi CB/B":          {base(func(c *layers.DecoupledConfig) { c.Jacobi = true }), false},
		"batch MeanCB CovS":    {base(func(c *layers.DecoupledConfig) { c.MeanBasisBatch, c.Rand, c.CovForm = 2, rng, layers.CovS }), false},
		"GPCentred CovS":       {base(func(c *layers.DecoupledConfig) { c.MeanForm, c.CovForm = layers.MeanGPCentred, layers.CovS }), false},
	}
	for name, c := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			l, err := layers.NewDecoupled(c.c)
			switch {
			case c.wantErr && !errors.Is(err, layers.ErrConfig):
				t.Errorf("%s: got %v, want ErrConfig", name, err)
			case c.wantErr && l != nil:
				t.Errorf("%s: returned a layer with the error", name)
			case !c.wantErr && err != nil:
				t.Errorf("%s: rejected: %v", name, err)
			}
		}()
	}
	for _, c := range []struct {
		cf   layers.CovForm
		mf   layers.MeanForm
		what string
		f    func(l *layers.Decoupled, g *graph.Graph) *graph.Node
	}{
		{layers.CovS, layers.MeanCB, "FactorB on CovS", func(l *layers.Decoupled, g *graph.Graph) *graph.Node { return l.FactorB(g, 0) }},
		{layers.CovB, layers.MeanCB, "FactorS on CovB", func(l *layers.Decoupled, g *graph.Graph) *graph.Node { return l.FactorS(g, 0) }},
		{layers.CovS, layers.MeanGP, "MeanTermEstimate on MeanGP", func(l *layers.Decoupled, g *graph.Graph) *graph.Node { return l.MeanTermEstimate(g) }},
	} {
		l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, MeanForm: c.mf, CovForm: c.cf})
		if err != nil {
			t.Fatal(err)
		}
		g := graph.New(graph.Options{})
		c.f(l, g)
		if !errors.Is(g.Err(), layers.ErrConfig) {
			t.Errorf("%s: graph error %v, want ErrConfig", c.what, g.Err())
		}
	}
}

// SPrior starts every S_p at the prior: L_p = chol(K_β + εI), so with zero weights the KL is 0 and the predictive
// variance is the prior's; it needs CovS.
func TestDecoupledSPrior(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 32))
	k := gptest.ARDKernel(t, 2)
	za := mat.NewDense(4, 2, gptest.RandomMatrix(rng, 4, 2, -1.5, 1.5))
	zb := mat.NewDense(3, 2, gptest.RandomMatrix(rng, 3, 2, -1, 1))
	l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, OutputDim: 2,
		MeanForm: layers.MeanGPCentred, CovForm: layers.CovS, SPrior: true})
	if err != nil {
		t.Fatal(err)
	}
	want := dbCholLower(t, dbKjitter(t, k, zb, l.Jitter()))
	for p, lp := range l.LB {
		for i, v := range lp.Value() {
			if math.Abs(v-want[i]) > 1e-12 {
				t.Fatalf("output %d: L[%d] = %g, want chol(K_β + εI) entry %g", p, i, v, want[i])
			}
		}
	}
	g := graph.New(graph.Options{})
	prog, err := g.CompileForward(map[string]*graph.Node{"kl": l.KL(g)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	if kl := prog.Output("kl")[0]; math.Abs(kl) > 1e-9 {
		t.Errorf("KL at the prior = %g, want 0", kl)
	}
	if _, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, SPrior: true}); !errors.Is(err, layers.ErrConfig) {
		t.Errorf("SPrior with CovB: %v, want ErrConfig", err)
	}
	// The whitened S-form's prior is V = I whatever K_β: KL 0 and the prior variance k_xx at any input.
	w, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, OutputDim: 2,
		MeanForm: layers.MeanGPCentred, CovForm: layers.CovSWhitened, SPrior: true})
	if err != nil {
		t.Fatal(err)
	}
	for p, lp := range w.LB {
		for i, v := range lp.Value() {
			if want := float64(btoi(i%4 == 0)); math.Abs(v-want) > 1e-12 { // I in row-major 3×3: entries 0, 4, 8
				t.Fatalf("whitened output %d: V[%d] = %g, want I", p, i, v)
			}
		}
	}
	x := mat.NewDense(5, 2, gptest.RandomMatrix(rng, 5, 2, -2, 2))
	got := dbEval(t, x, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
		_, v := w.Predict(xn)
		return map[string]*graph.Node{"kl": w.KL(g), "var": v, "kxx": k.KDiag(xn)}
	})
	if kl := got["kl"][0]; math.Abs(kl) > 1e-12 {
		t.Errorf("whitened KL at the prior = %g, want 0", kl)
	}
	for i, v := range got["var"] {
		if want := got["kxx"][i/2]; math.Abs(v-want) > 1e-10 {
			t.Errorf("whitened prior variance [%d] = %g, want k_xx %g", i, v, want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
