package layers_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Helpers of this file are prefixed db (decoupled basis) to stay clear of the other layer tests' helpers.

func dbKernel(t testing.TB) gp.Kernel {
	t.Helper()
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: 1.3, Lengthscales: []float64{0.8, 1.1}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// dbRandomLower returns a random lower-triangular n×n factor with diagonal in [lo, lo+1).
func dbRandomLower(rng *rand.Rand, n int, lo, off float64) []float64 {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = off * (2*rng.Float64() - 1)
		}
		l[i*n+i] = lo + rng.Float64()
	}
	return l
}

// dbRandomize gives the layer random weights and factors of B.
func dbRandomize(t testing.TB, l *layers.Decoupled, rng *rand.Rand) {
	t.Helper()
	if err := l.A.Set(gptest.RandomMatrix(rng, l.NumMeanBases(), l.OutputDim(), -1, 1)); err != nil {
		t.Fatal(err)
	}
	for _, lb := range l.LB {
		if err := lb.Set(dbRandomLower(rng, l.NumCovBases(), 0.5, 0.4)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDecoupledBasisConformance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		dout   int
		jacobi bool
		batch  int // 5 = Mα: the sampled estimator is then exact, so finite differences apply
	}{{"dout1", 1, false, 0}, {"dout2", 2, false, 0}, {"jacobi", 2, true, 0}, {"sampled-b=Ma", 2, false, 5}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			za := mat.NewDense(5, 2, gptest.RandomMatrix(rng, 5, 2, -1.5, 1.5))
			zb := mat.NewDense(3, 2, gptest.RandomMatrix(rng, 3, 2, -1, 1))
			mean, _ := gp.NewConstantMean("c", make([]float64, c.dout))
			cfg := layers.DecoupledConfig{Kernel: dbKernel(t), Zalpha: za, Zbeta: zb, OutputDim: c.dout, Mean: mean, Jacobi: c.jacobi, MeanBasisBatch: c.batch}
			if c.batch > 0 {
				cfg.Rand = rand.New(rand.NewPCG(9, 9))
			}
			l, err := layers.NewDecoupled(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dbRandomize(t, l, rng)
			prior := func() error { // a = 0 and B ≈ 0 (1e-10·I): KL ≈ 0
				if err := l.A.Set(make([]float64, 5*c.dout)); err != nil {
					return err
				}
				small := make([]float64, 9)
				for i := 0; i < 3; i++ {
					small[i*3+i] = 1e-5
				}
				for _, lb := range l.LB {
					if err := lb.Set(small); err != nil {
						return err
					}
				}
				return nil
			}
			gptest.CheckLayer(t, l, rng, prior)
		})
	}
}

// dbEval evaluates named nodes built on an input x in a fresh forward graph.
func dbEval(t testing.TB, x *mat.Dense, build func(g *graph.Graph, x *graph.Node) map[string]*graph.Node) map[string][]float64 {
	t.Helper()
	n, d := x.Dims()
	g := graph.New(graph.Options{})
	xn := g.Input("x", n, d)
	outs := build(g, xn)
	prog, err := g.CompileForward(outs)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", x.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	res := map[string][]float64{}
	for name := range outs {
		res[name] = prog.Output(name)
	}
	return res
}

// dbKjitter returns K(z, z) + jitter·I from the kernel's own graph.
func dbKjitter(t testing.TB, k gp.Kernel, z *mat.Dense, jitter float64) *mat.SymDense {
	t.Helper()
	m, _ := z.Dims()
	kv := dbEval(t, z, func(_ *graph.Graph, x *graph.Node) map[string]*graph.Node {
		return map[string]*graph.Node{"k": k.K(x, x)}
	})["k"]
	s := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			v := 0.5 * (kv[i*m+j] + kv[j*m+i])
			if i == j {
				v += jitter
			}
			s.SetSym(i, j, v)
		}
	}
	return s
}

func dbSym(a mat.Matrix) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	return s
}

func dbCholLower(t testing.TB, s *mat.SymDense) []float64 {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		t.Fatal("matrix not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	return mat.DenseCopyOf(&l).RawMatrix().Data
}

func dbInverse(t testing.TB, a mat.Matrix) *mat.Dense {
	t.Helper()
	var inv mat.Dense
	if err := inv.Inverse(a); err != nil {
		t.Fatal(err)
	}
	return &inv
}

// The acceptance test: with α = β = Z, a = K_β⁻¹m and B = S⁻¹ − K_β⁻¹ (so S = (K_β⁻¹ + B)⁻¹), the
// decoupled layer's predictions and KL equal the unwhitened SVGP layer's with q(u) = N(m, S), same jitter.
func TestDecoupledBasisEqualsSVGP(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	const m, dout, n = 5, 2, 7
	k := dbKernel(t)
	z := mat.NewDense(m, 2, gptest.RandomMatrix(rng, m, 2, -2, 2))
	const jitter = 1e-6
	dl, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: z, Zbeta: z, OutputDim: dout, Jitter: jitter})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, OutputDim: dout, Unwhitened: true, Jitter: jitter})
	if err != nil {
		t.Fatal(err)
	}
	kj := dbKjitter(t, k, z, jitter)
	kinv := dbInverse(t, kj)
	mu := mat.NewDense(m, dout, gptest.RandomMatrix(rng, m, dout, -1, 1))
	var a mat.Dense
	a.Mul(kinv, mu)
	if err := sl.Q.Mu.Set(mu.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := dl.A.Set(a.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < dout; p++ {
		var s *mat.SymDense
		if p == 0 { // S = ½K_β: B = K_β⁻¹
			var h mat.SymDense
			h.ScaleSym(0.5, kj)
			s = &h
		} else { // S = (K_β⁻¹ + RRᵀ)⁻¹ for a random R
			r := mat.NewDense(m, m, gptest.RandomMatrix(rng, m, m, -1, 1))
			var rr, prec mat.Dense
			rr.Mul(r, r.T())
			prec.Add(kinv, &rr)
			s = dbSym(dbInverse(t, &prec))
		}
		if err := sl.Q.SetSqrt(p, dbCholLower(t, s)); err != nil {
			t.Fatal(err)
		}
		var b mat.Dense
		b.Sub(dbInverse(t, s), kinv) // B = S⁻¹ − K_β⁻¹
		if err := dl.LB[p].Set(dbCholLower(t, dbSym(&b))); err != nil {
			t.Fatal(err)
		}
	}
	x := mat.NewDense(n, 2, gptest.RandomMatrix(rng, n, 2, -2.5, 2.5))
	got := dbEval(t, x, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
		outs := map[string]*graph.Node{}
		for name, l := range map[string]gp.Layer{"dec": dl, "svgp": sl} {
			mean, v := l.Predict(xn)
			_, covs := l.PredictFull(xn)
			outs[name+".mean"], outs[name+".var"], outs[name+".kl"] = mean, v, l.KL(g)
			for p, c := range covs {
				outs[name+".cov"+string(rune('0'+p))] = c
			}
		}
		return outs
	})
	for _, what := range []string{"mean", "var", "kl", "cov0", "cov1"} {
		d, s := got["dec."+what], got["svgp."+what]
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

// The sampled mean term is unbiased: over many runs the KL estimate (and its gradient with respect to a)
// averages to the exact KL within 3 (4 for the gradient entries) standard errors, and with b = Mα every run is
// exact.
func TestDecoupledBasisMinibatchKLUnbiased(t *testing.T) {
	t.Parallel()
	const ma, mb, dout = 9, 3, 2
	for _, c := range []struct {
		b    int
		runs int
	}{{3, 3000}, {1, 3000}, {ma, 20}} {
		rng := rand.New(rand.NewPCG(uint64(c.b), 77))
		za := mat.NewDense(ma, 2, gptest.RandomMatrix(rng, ma, 2, -2, 2))
		zb := mat.NewDense(mb, 2, gptest.RandomMatrix(rng, mb, 2, -1, 1))
		l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: dbKernel(t), Zalpha: za, Zbeta: zb, OutputDim: dout,
			MeanBasisBatch: c.b, Rand: rand.New(rand.NewPCG(5, uint64(c.b)))})
		if err != nil {
			t.Fatal(err)
		}
		dbRandomize(t, l, rng)
		exact := func() (float64, []float64) {
			g := graph.New(graph.Options{})
			prog, err := g.Compile(l.ExactKL(g), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			return prog.Loss(), prog.Grad(l.A)
		}
		want, wantGrad := exact()
		g := graph.New(graph.Options{})
		prog, err := g.Compile(l.KL(g), nil)
		if err != nil {
			t.Fatal(err)
		}
		sum, sum2 := 0.0, 0.0
		gs, gs2 := make([]float64, len(wantGrad)), make([]float64, len(wantGrad))
		for r := 0; r < c.runs; r++ {
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			v := prog.Loss()
			if c.b == ma && math.Abs(v-want) > 1e-12*math.Abs(want) {
				t.Fatalf("b = Mα: run %d: KL %.15g, exact %.15g", r, v, want)
			}
			sum += v
			sum2 += v * v
			for i, gv := range prog.Grad(l.A) {
				gs[i] += gv
				gs2[i] += gv * gv
			}
		}
		prog.Close()
		runs := float64(c.runs)
		mean := sum / runs
		se := math.Sqrt(math.Max(sum2/runs-mean*mean, 0) / runs)
		if math.Abs(mean-want) > 3*se+1e-12*math.Abs(want) {
			t.Errorf("b = %d: mean KL estimate %.10g ± %.3g, exact %.10g", c.b, mean, se, want)
		}
		if c.b < ma && se == 0 {
			t.Errorf("b = %d: the estimate never varied", c.b)
		}
		for i := range gs {
			gm := gs[i] / runs
			gse := math.Sqrt(math.Max(gs2[i]/runs-gm*gm, 0) / runs)
			if math.Abs(gm-wantGrad[i]) > 4*gse+1e-10*math.Max(1, math.Abs(wantGrad[i])) {
				t.Errorf("b = %d: mean ∂KL/∂a[%d] %.10g ± %.3g, exact %.10g", c.b, i, gm, gse, wantGrad[i])
			}
		}
	}
}

func TestDecoupledBasisConfigErrors(t *testing.T) {
	t.Parallel()
	k := dbKernel(t)
	za := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	zb := mat.NewDense(2, 2, []float64{0.5, 0.5, -1, 1})
	nan := mat.NewDense(2, 2, []float64{0.5, math.NaN(), -1, 1})
	rng := rand.New(rand.NewPCG(1, 1))
	m3, _ := gp.NewZeroMean(3)
	cases := map[string]struct {
		c    layers.DecoupledConfig
		want error
	}{
		"nil kernel":       {layers.DecoupledConfig{Zalpha: za, Zbeta: zb}, layers.ErrConfig},
		"nil Zalpha":       {layers.DecoupledConfig{Kernel: k, Zbeta: zb}, layers.ErrConfig},
		"nil Zbeta":        {layers.DecoupledConfig{Kernel: k, Zalpha: za}, layers.ErrConfig},
		"NaN Zbeta":        {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: nan}, layers.ErrConfig},
		"NaN Zalpha":       {layers.DecoupledConfig{Kernel: k, Zalpha: nan, Zbeta: zb}, layers.ErrConfig},
		"NaN weights":      {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, Weights: []float64{0, math.NaN(), 0, 0}}, layers.ErrConfig},
		"weights length":   {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, Weights: []float64{0}}, layers.ErrConfig},
		"negative out":     {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, OutputDim: -1}, layers.ErrConfig},
		"negative jitter":  {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, Jitter: -1}, layers.ErrConfig},
		"NaN jitter":       {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, Jitter: math.NaN()}, layers.ErrConfig},
		"negative LBScale": {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, LBScale: -1}, layers.ErrConfig},
		"tiny LBScale":     {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, LBScale: 1e-9}, nil},
		"negative batch":   {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, MeanBasisBatch: -1, Rand: rng}, layers.ErrConfig},
		"batch > Ma":       {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, MeanBasisBatch: 5, Rand: rng}, layers.ErrConfig},
		"batch no Rand":    {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, MeanBasisBatch: 2}, layers.ErrConfig},
		"mean outputs":     {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, Mean: m3}, layers.ErrConfig},
		"Zalpha width":     {layers.DecoupledConfig{Kernel: k, Zalpha: mat.NewDense(4, 3, nil), Zbeta: zb}, ops.ErrShape},
		"Zbeta width":      {layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: mat.NewDense(2, 1, nil)}, ops.ErrShape},
	}
	for name, c := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			_, err := layers.NewDecoupled(c.c)
			if c.want == nil {
				if err == nil {
					t.Errorf("%s: accepted, want an error", name) // LBScale below the LowerTriangular floor
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Errorf("%s: got %v, want %v", name, err, c.want)
			}
		}()
	}
	if _, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: za, Zbeta: zb, MeanBasisBatch: 4, Rand: rng}); err != nil {
		t.Errorf("b = Mα rejected: %v", err)
	}
}

// Bad inputs record errors in the graph or fail the run; nothing panics. NaN inputs propagate to the
// outputs (the training loop's non-finite detection catches them) or fail the run.
func TestDecoupledBasisBadInputs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 3))
	za := mat.NewDense(4, 2, gptest.RandomMatrix(rng, 4, 2, -1, 1))
	zb := mat.NewDense(2, 2, gptest.RandomMatrix(rng, 2, 2, -1, 1))
	l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: dbKernel(t), Zalpha: za, Zbeta: zb, MeanBasisBatch: 2, Rand: rng})
	if err != nil {
		t.Fatal(err)
	}
	dbRandomize(t, l, rng)
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	// Wrong input width: a graph error at build time.
	g := graph.New(graph.Options{})
	l.Predict(g.Input("x", 3, 5))
	if !errors.Is(g.Err(), ops.ErrShape) {
		t.Errorf("inputs [3,5]: graph error %v, want ErrShape", g.Err())
	}
	// NaN inputs: the run fails or the outputs are non-finite, without a panic.
	g = graph.New(graph.Options{})
	x := g.Input("x", 3, 2)
	mean, v := l.Predict(x)
	_, covs := l.PredictFull(x)
	prog, err := g.CompileForward(map[string]*graph.Node{"mean": mean, "var": v, "cov": covs[0], "kl": l.KL(g)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", []float64{0, 0, math.NaN(), 1, 0.5, 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err == nil {
		if m := prog.Output("mean"); !math.IsNaN(m[1]) {
			t.Errorf("NaN in row 1: means %v", m)
		}
		if k := prog.Output("kl")[0]; math.IsNaN(k) {
			t.Errorf("KL %v depends on the inputs", k)
		}
	}
	// A layer whose estimator lacks a Rand cannot be built, and asking for it on an exact layer fails the graph.
	ex, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: dbKernel(t), Zalpha: za, Zbeta: zb})
	if err != nil {
		t.Fatal(err)
	}
	g = graph.New(graph.Options{})
	ex.MeanTermEstimate(g)
	if !errors.Is(g.Err(), layers.ErrConfig) {
		t.Errorf("MeanTermEstimate without a batch: graph error %v", g.Err())
	}
}
