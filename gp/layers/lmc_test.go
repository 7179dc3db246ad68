package layers_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
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

// Helpers of this file are prefixed lm (LMC).

// lmBlock returns an SVGP latent block named name: an SE kernel of lengthscale ls, m random inducing inputs in
// [-2,2]^d, dout latents, q's mean random and its factors 0.8·I (whitened unless unwhitened).
func lmBlock(t testing.TB, rng *rand.Rand, name string, d, m, dout int, ls float64, unwhitened bool) *layers.SVGP {
	t.Helper()
	lss := make([]float64, d)
	for i := range lss {
		lss[i] = ls * (1 + 0.1*float64(i))
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{Name: name + ".k", InputDim: d, Variance: 1.1, Lengthscales: lss})
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(m, d, gptest.RandomMatrix(rng, m, d, -2, 2))
	b, err := layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: k, Z: z, OutputDim: dout, Unwhitened: unwhitened, QSqrtScale: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Q.Mu.Set(gptest.RandomMatrix(rng, m, dout, -1, 1)); err != nil {
		t.Fatal(err)
	}
	return b
}

// lmCase is a test LMC: its blocks and the layer.
type lmCase struct {
	name     string
	blocks   []*layers.SVGP
	identity bool
	p        int  // outputs (with W)
	mean     bool // a linear mean function of the outputs
}

// lmCases are the layers the tests run on (Din = 2): separate kernels and Z with a learnable W (2 blocks, L = 3,
// P = 2, a mean function), the identity (separate-independent outputs), one shared block mixed into 3 outputs
// (unwhitened).
func lmCases(t testing.TB, rng *rand.Rand) []lmCase {
	return []lmCase{
		{name: "mixed", blocks: []*layers.SVGP{lmBlock(t, rng, "g0", 2, 4, 1, 0.9, false), lmBlock(t, rng, "g1", 2, 3, 2, 1.4, false)}, p: 2, mean: true},
		{name: "identity", blocks: []*layers.SVGP{lmBlock(t, rng, "g0", 2, 4, 1, 0.9, false), lmBlock(t, rng, "g1", 2, 3, 1, 1.4, false)}, identity: true},
		{name: "shared", blocks: []*layers.SVGP{lmBlock(t, rng, "g", 2, 4, 2, 1.1, true)}, p: 3},
	}
}

// layer builds the case's LMC, W drawn from rng.
func (c lmCase) layer(t testing.TB, rng *rand.Rand) *layers.LMC {
	t.Helper()
	lc := layers.LMCConfig{Identity: c.identity}
	l := 0
	for _, b := range c.blocks {
		lc.Latents = append(lc.Latents, b)
		l += b.OutputDim()
	}
	p := c.p
	if c.identity {
		p = l
	} else {
		lc.W = mat.NewDense(p, l, gptest.RandomMatrix(rng, p, l, -1.5, 1.5))
	}
	if c.mean {
		m, err := gp.NewLinearMean("lmc.mean", 2, p, gptest.RandomMatrix(rng, 2, p, -1, 1), gptest.RandomMatrix(rng, 1, p, -1, 1))
		if err != nil {
			t.Fatal(err)
		}
		lc.Mean = m
	}
	lmc, err := layers.NewLMC(lc)
	if err != nil {
		t.Fatal(err)
	}
	return lmc
}

func TestLMCConformance(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 1))
	for _, c := range lmCases(t, rng) {
		t.Run(c.name, func(t *testing.T) {
			l := c.layer(t, rng)
			prior := func() error { // q = p(u) for every whitened block: m = 0, S = I
				for _, b := range c.blocks {
					if !b.Whitened() {
						return nil
					}
					m := b.NumInducing()
					if err := b.Q.Mu.Set(make([]float64, m*b.OutputDim())); err != nil {
						return err
					}
					eye := make([]float64, m*m)
					for i := 0; i < m; i++ {
						eye[i*m+i] = 1
					}
					for p := 0; p < b.OutputDim(); p++ {
						if err := b.Q.SetSqrt(p, eye); err != nil {
							return err
						}
					}
				}
				return nil
			}
			if !c.blocks[0].Whitened() {
				prior = nil
			}
			gptest.CheckLayer(t, l, rng, prior)
		})
	}
}

// lmRun evaluates outs built on the input x (a Param "X", so that its gradient is checked too) and, when loss
// weights are given, checks every gradient of Σ_k ⟨w_k, out_k⟩ by finite differences.
func lmRun(t *testing.T, x *mat.Dense, fd bool, build func(g *graph.Graph, x *graph.Node) map[string]*graph.Node) map[string][]float64 {
	t.Helper()
	n, d := x.Dims()
	px, err := graph.NewParam("X", mat.DenseCopyOf(x).RawMatrix().Data, nil, n, d)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	outs := build(g, g.Param(px))
	var prog *graph.Program
	if fd {
		wr := rand.New(rand.NewPCG(5, 6))
		var loss *graph.Node
		for _, name := range []string{"cov", "sample", "joint", "full0"} {
			o, ok := outs[name]
			if !ok {
				continue
			}
			s := o.Shape()
			size := 1
			for _, v := range s {
				size *= v
			}
			w := g.Const("w"+name, gptest.RandomMatrix(wr, size, 1, -1, 1), s...)
			term := g.Dot(w, o)
			if loss == nil {
				loss = term
			} else {
				loss = g.Add(loss, term)
			}
		}
		prog, err = g.Compile(loss, outs)
	} else {
		prog, err = g.CompileForward(outs)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	res := map[string][]float64{}
	for name := range outs {
		res[name] = append([]float64(nil), prog.Output(name)...)
	}
	if fd {
		gradcheck.CheckProgram(t, prog)
	}
	return res
}

func lmClose(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(b), 1e-3) }

// The output covariance, the full covariances and the samples against their definitions computed in Go from
// the blocks' own predictions, and their gradients by finite differences.
func TestLMCOutputCovSamples(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 2))
	const n = 5
	for _, c := range lmCases(t, rng) {
		t.Run(c.name, func(t *testing.T) {
			l := c.layer(t, rng)
			x := mat.NewDense(n, 2, gptest.RandomMatrix(rng, n, 2, -1.5, 1.5))
			nl, p := l.NumLatents(), l.OutputDim()
			eps := gptest.RandomMatrix(rng, n, nl, -2, 2)
			eps2 := gptest.RandomMatrix(rng, n, nl, -2, 2)
			build := func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
				m, v := l.Predict(xn)
				cm, cov := l.PredictOutputCov(xn)
				_, full := l.PredictFull(xn)
				return map[string]*graph.Node{"mean": m, "var": v, "cmean": cm, "cov": cov, "full0": full[0],
					"sample": l.Sample(xn, g.Const("eps", eps, n, nl)), "joint": l.SampleJoint(xn, g.Const("eps2", eps2, n, nl))}
			}
			got := lmRun(t, x, false, build)
			// The latents from the blocks themselves, and W, μ.
			lm, lv := make([][]float64, n), make([][]float64, n) // [n][L]
			var lc [][]float64                                   // per latent [n·n]
			for _, b := range c.blocks {
				r := lmRun(t, x, false, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
					m, v := b.Predict(xn)
					_, full := b.PredictFull(xn)
					out := map[string]*graph.Node{"m": m, "v": v}
					for j, f := range full {
						out[fmt.Sprint("c", j)] = f
					}
					return out
				})
				k := b.OutputDim()
				for i := 0; i < n; i++ {
					lm[i] = append(lm[i], r["m"][i*k:(i+1)*k]...)
					lv[i] = append(lv[i], r["v"][i*k:(i+1)*k]...)
				}
				for j := 0; j < k; j++ {
					lc = append(lc, r[fmt.Sprint("c", j)])
				}
			}
			w := func(pp, j int) float64 {
				if l.W == nil {
					if pp == j {
						return 1
					}
					return 0
				}
				return l.W.Value()[pp*nl+j]
			}
			mu := make([]float64, n*p)
			if l.Mean != nil {
				r := lmRun(t, x, false, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
					return map[string]*graph.Node{"mu": l.Mean.Mean(xn)}
				})
				mu = r["mu"]
			}
			// Joint draws of the latents: their lower Cholesky factors times eps2's columns.
			jd := make([][]float64, n)
			for i := range jd {
				jd[i] = make([]float64, nl)
			}
			for j := 0; j < nl; j++ {
				var ch mat.Cholesky
				if !ch.Factorize(gp.SymFromRowMajor(lc[j], n)) {
					t.Fatalf("latent %d covariance not positive definite", j)
				}
				var lo mat.TriDense
				ch.LTo(&lo)
				for i := 0; i < n; i++ {
					for k := 0; k <= i; k++ {
						jd[i][j] += lo.At(i, k) * eps2[k*nl+j]
					}
				}
			}
			const rel = 1e-10
			for i := 0; i < n; i++ {
				for a := 0; a < p; a++ {
					var m, v, s, js float64
					for j := 0; j < nl; j++ {
						m += w(a, j) * lm[i][j]
						v += w(a, j) * w(a, j) * lv[i][j]
						s += w(a, j) * (lm[i][j] + math.Sqrt(lv[i][j])*eps[i*nl+j])
						js += w(a, j) * (lm[i][j] + jd[i][j])
					}
					m += mu[i*p+a]
					s += mu[i*p+a]
					js += mu[i*p+a]
					if !lmClose(got["mean"][i*p+a], m, rel) || !lmClose(got["var"][i*p+a], v, rel) {
						t.Errorf("row %d output %d: %v ± %v, want %v ± %v", i, a, got["mean"][i*p+a], got["var"][i*p+a], m, v)
					}
					if got["cmean"][i*p+a] != got["mean"][i*p+a] {
						t.Errorf("row %d output %d: PredictOutputCov's mean %v, Predict's %v", i, a, got["cmean"][i*p+a], got["mean"][i*p+a])
					}
					if !lmClose(got["sample"][i*p+a], s, rel) || !lmClose(got["joint"][i*p+a], js, 1e-8) {
						t.Errorf("row %d output %d: samples %v, %v, want %v, %v", i, a, got["sample"][i*p+a], got["joint"][i*p+a], s, js)
					}
					for b := 0; b < p; b++ {
						var cv float64
						for j := 0; j < nl; j++ {
							cv += w(a, j) * w(b, j) * lv[i][j]
						}
						if g := got["cov"][i*p*p+a*p+b]; !lmClose(g, cv, rel) {
							t.Errorf("row %d: Cov[f_%d, f_%d] = %v, want %v", i, a, b, g, cv)
						}
					}
					if d := got["cov"][i*p*p+a*p+a]; math.Abs(d-got["var"][i*p+a]) > 1e-12*math.Max(1, d) {
						t.Errorf("row %d output %d: covariance diagonal %v, variance %v", i, a, d, got["var"][i*p+a])
					}
				}
				for k := 0; k < n; k++ { // output 0's full covariance
					var cv float64
					for j := 0; j < nl; j++ {
						cv += w(0, j) * w(0, j) * lc[j][i*n+k]
					}
					if g := got["full0"][i*n+k]; !lmClose(g, cv, rel) {
						t.Errorf("output 0 covariance (%d,%d) = %v, want %v", i, k, g, cv)
					}
				}
			}
			lmRun(t, x, true, build) // finite differences of the covariances and both samples
		})
	}
}

// lmELBO returns the ELBO of m at x, y, and checks its gradient by finite differences when fd.
func lmELBO(t *testing.T, m *models.SVGP, x, y *mat.Dense, fd bool) float64 {
	t.Helper()
	n, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	prog, err := g.Compile(m.Loss(xn, yn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", mat.DenseCopyOf(x).RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("y", mat.DenseCopyOf(y).RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	e := -prog.Loss()
	if fd {
		gradcheck.CheckProgram(t, prog)
	}
	return e
}

func lmGaussian(t testing.TB, v float64) *likelihoods.Gaussian {
	t.Helper()
	l, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: v})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The ELBO of a single-layer SVGP model on an LMC layer, differentiated through the layer: finite differences
// with respect to every Param (the blocks', W, the mean function's, the likelihood's).
func TestLMCELBOGradient(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 3))
	for _, c := range lmCases(t, rng) {
		t.Run(c.name, func(t *testing.T) {
			l := c.layer(t, rng)
			const n = 8
			x := mat.NewDense(n, 2, gptest.RandomMatrix(rng, n, 2, -2, 2))
			y := mat.NewDense(n, l.OutputDim(), gptest.RandomMatrix(rng, n, l.OutputDim(), -1, 1))
			m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lmGaussian(t, 0.3), NumData: 20})
			if err != nil {
				t.Fatal(err)
			}
			if e := lmELBO(t, m, x, y, true); math.IsNaN(e) || math.IsInf(e, 0) {
				t.Fatalf("ELBO %v", e)
			}
		})
	}
}

// LMC with W = I (P = L) is the independent SVGPs: the ELBO is the sum of the blocks' ELBOs on their outputs and
// the predictions are the blocks' (relative 1e-10), with W a learnable identity Param or fixed (Identity).
func TestLMCIdentityEqualsIndependent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 4))
	const n, ns = 12, 9
	x := mat.NewDense(n, 2, gptest.RandomMatrix(rng, n, 2, -2, 2))
	xs := mat.NewDense(ns, 2, gptest.RandomMatrix(rng, ns, 2, -2, 2))
	for _, shared := range []bool{false, true} {
		for _, fixed := range []bool{false, true} {
			t.Run(fmt.Sprintf("shared=%v,identity=%v", shared, fixed), func(t *testing.T) {
				var blocks []*layers.SVGP
				if shared {
					blocks = []*layers.SVGP{lmBlock(t, rng, "g", 2, 5, 2, 1.1, false)}
				} else {
					blocks = []*layers.SVGP{lmBlock(t, rng, "g0", 2, 5, 1, 0.9, false), lmBlock(t, rng, "g1", 2, 4, 1, 1.6, true)}
				}
				for _, b := range blocks {
					spPerturb(b, rng)
				}
				lc := layers.LMCConfig{Identity: fixed}
				for _, b := range blocks {
					lc.Latents = append(lc.Latents, b)
				}
				if !fixed {
					lc.W = mat.NewDense(2, 2, []float64{1, 0, 0, 1})
				}
				l, err := layers.NewLMC(lc)
				if err != nil {
					t.Fatal(err)
				}
				y := mat.NewDense(n, 2, gptest.RandomMatrix(rng, n, 2, -1, 1))
				lik := lmGaussian(t, 0.2)
				lm, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: 30})
				if err != nil {
					t.Fatal(err)
				}
				got := lmELBO(t, lm, x, y, false)
				// The independent models: each block on its own outputs, KLs and data terms added.
				want, col := 0.0, 0
				var wantMean, wantVar []*mat.Dense
				for _, b := range blocks {
					k := b.OutputDim()
					yb := mat.DenseCopyOf(y.Slice(0, n, col, col+k))
					col += k
					bm, err := models.NewSVGP(models.SVGPConfig{Layer: b, Likelihood: lik, NumData: 30})
					if err != nil {
						t.Fatal(err)
					}
					want += lmELBO(t, bm, x, yb, false)
					m, v, err := models.PredictLayer(b, xs, gp.PredictOptions{})
					if err != nil {
						t.Fatal(err)
					}
					wantMean, wantVar = append(wantMean, m), append(wantVar, v)
				}
				if !lmClose(got, want, 1e-10) {
					t.Errorf("ELBO %.15g, independent SVGPs %.15g", got, want)
				}
				pr, err := lm.Predict(xs, gp.PredictOptions{})
				if err != nil {
					t.Fatal(err)
				}
				col = 0
				for b := range blocks {
					_, k := wantMean[b].Dims()
					for i := 0; i < ns; i++ {
						for j := 0; j < k; j++ {
							if !lmClose(pr.FMean.At(i, col+j), wantMean[b].At(i, j), 1e-10) || !lmClose(pr.FVar.At(i, col+j), wantVar[b].At(i, j), 1e-10) {
								t.Errorf("row %d output %d: %v ± %v, independent %v ± %v", i, col+j, pr.FMean.At(i, col+j), pr.FVar.At(i, col+j), wantMean[b].At(i, j), wantVar[b].At(i, j))
							}
						}
					}
					col += k
				}
			})
		}
	}
}

func TestLMCSpecRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 5))
	x := mat.NewDense(6, 2, gptest.RandomMatrix(rng, 6, 2, -2, 2))
	for _, c := range lmCases(t, rng) {
		t.Run(c.name, func(t *testing.T) {
			l := c.layer(t, rng)
			spPerturb(l, rng)
			back := gptest.CheckSpecRoundTrip(t, l, gp.BuildOptions{}).(*layers.LMC)
			want, got := spOutputs(t, l, x, true), spOutputs(t, back, x, true)
			for name, w := range want {
				for i := range w {
					if math.Float64bits(got[name][i]) != math.Float64bits(w[i]) {
						t.Fatalf("%s[%d] = %v after the round trip, want %v", name, i, got[name][i], w[i])
					}
				}
			}
		})
	}
}

func TestLMCConfigErrors(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 6))
	b0, b1 := lmBlock(t, rng, "g0", 2, 3, 1, 1, false), lmBlock(t, rng, "g1", 2, 3, 1, 1, false)
	other := lmBlock(t, rng, "h", 3, 3, 1, 1, false)
	w := mat.NewDense(2, 2, []float64{1, 0.5, 0, 1})
	inner, err := layers.NewLMC(layers.LMCConfig{Name: "inner", Latents: []gp.Layer{b0}, W: mat.NewDense(1, 1, []float64{1})})
	if err != nil {
		t.Fatal(err)
	}
	zm, _ := gp.NewZeroMean(3)
	for name, c := range map[string]layers.LMCConfig{
		"no blocks":      {W: w},
		"nil block":      {Latents: []gp.Layer{b0, nil}, W: w},
		"no W":           {Latents: []gp.Layer{b0, b1}},
		"W and identity": {Latents: []gp.Layer{b0, b1}, W: w, Identity: true},
		"shared block":   {Latents: []gp.Layer{b0, b0}, W: w},
		"correlated":     {Latents: []gp.Layer{inner, b1}, W: w},
		"NaN in W":       {Latents: []gp.Layer{b0, b1}, W: mat.NewDense(2, 2, []float64{1, math.NaN(), 0, 1})},
		"mean width":     {Latents: []gp.Layer{b0, b1}, W: w, Mean: zm},
	} {
		if _, err := layers.NewLMC(c); !errors.Is(err, layers.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	var se *ops.ShapeError
	if _, err := layers.NewLMC(layers.LMCConfig{Latents: []gp.Layer{b0, other}, W: w}); !errors.As(err, &se) {
		t.Errorf("blocks of different input widths: %v, want a *ops.ShapeError", err)
	}
	if _, err := layers.NewLMC(layers.LMCConfig{Latents: []gp.Layer{b0, b1}, W: mat.NewDense(2, 3, nil)}); !errors.As(err, &se) {
		t.Errorf("W of 3 columns for 2 latents: %v, want a *ops.ShapeError", err)
	}
	// A layer fed inputs of the wrong width records a shape error in the graph.
	l, err := layers.NewLMC(layers.LMCConfig{Latents: []gp.Layer{b0, b1}, W: w})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	l.Predict(g.Input("x", 4, 3))
	if !errors.As(g.Err(), &se) {
		t.Errorf("inputs of width 3: %v, want a *ops.ShapeError", g.Err())
	}
	g = graph.New(graph.Options{})
	l.Sample(g.Input("x", 4, 2), g.Input("eps", 4, 3))
	if !errors.As(g.Err(), &se) {
		t.Errorf("noise of width 3 for 2 latents: %v, want a *ops.ShapeError", g.Err())
	}
}

// lmData returns n rows of x uniform on [-3,3] and the two correlated outputs f1 = sin x, f2 = 0.8 sin x +
// 0.3 cos 3x, plus N(0, noise²) when noise > 0.
func lmData(rng *rand.Rand, n int, noise float64) (*mat.Dense, *mat.Dense) {
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		v := -3 + 6*rng.Float64()
		x.Set(i, 0, v)
		y.Set(i, 0, math.Sin(v)+noise*rng.NormFloat64())
		y.Set(i, 1, 0.8*math.Sin(v)+0.3*math.Cos(3*v)+noise*rng.NormFloat64())
	}
	return x, y
}

// On small noisy training sets of two correlated outputs (14 rows, noise σ = 0.4), LMC (two latents, each its own
// kernel and Z, W learnt) predicts held-out data better in log density than separate-independent outputs (the
// same blocks, W = I): the shared component is learnt from both outputs. Four seeded data sets (a fixed choice,
// not a selection: the eight seeds tried when the test was written all agree, the smallest gain 0.06 nats).
func TestLMCLearnsSharedStructure(t *testing.T) {
	t.Parallel()
	const n, noise, iters = 14, 0.4, 2000
	fit := func(x, y, xt, yt *mat.Dense, identity bool) float64 {
		r := rand.New(rand.NewPCG(32, 8)) // the same initial blocks for both
		var blocks []gp.Layer
		for j, ls := range []float64{1, 0.6} {
			k, err := gp.NewSquaredExp(gp.KernelConfig{Name: fmt.Sprint("g", j, ".k"), InputDim: 1, Variance: 1, Lengthscales: []float64{ls}})
			if err != nil {
				t.Fatal(err)
			}
			z := mat.NewDense(10, 1, gptest.RandomMatrix(r, 10, 1, -3, 3))
			b, err := layers.NewSVGP(layers.SVGPConfig{Name: fmt.Sprint("g", j), Kernel: k, Z: z})
			if err != nil {
				t.Fatal(err)
			}
			blocks = append(blocks, b)
		}
		lc := layers.LMCConfig{Latents: blocks, Identity: identity}
		if !identity {
			lc.W = mat.NewDense(2, 2, []float64{1, 0.1, 0.1, 1})
		}
		l, err := layers.NewLMC(lc)
		if err != nil {
			t.Fatal(err)
		}
		m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lmGaussian(t, 0.1), NumData: n})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := train.Train(m, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: iters}); err != nil {
			t.Fatal(err)
		}
		ld, err := m.LogDensity(xt, yt, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, v := range ld {
			s += v
		}
		return s / float64(len(ld))
	}
	gain := 0.0
	const sets = 4
	for seed := uint64(100); seed < 100+sets; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		x, y := lmData(rng, n, noise)
		xt, yt := lmData(rng, 200, noise)
		lmc, ind := fit(x, y, xt, yt, false), fit(x, y, xt, yt, true)
		t.Logf("data set %d: test log density per row: LMC %.4f, independent outputs %.4f", seed, lmc, ind)
		if !(lmc > ind) {
			t.Errorf("data set %d: LMC's test log density %.4f does not beat independent outputs' %.4f", seed, lmc, ind)
		}
		gain += (lmc - ind) / sets
	}
	if !(gain > 0.05) {
		t.Errorf("LMC's mean gain in test log density is %.4f nats per row, want > 0.05", gain)
	}
}

// lmRandomQ gives q a random mean and square root.
func lmRandomQ(t testing.TB, q *gp.GaussianQ, rng *rand.Rand) {
	t.Helper()
	if err := q.Mu.Set(gptest.RandomMatrix(rng, q.M(), q.P(), -1, 1)); err != nil {
		t.Fatal(err)
	}
	m := q.M()
	for p := 0; p < q.P(); p++ {
		l := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j < i; j++ {
				l[i*m+j] = 0.2 * (rng.Float64() - 0.5)
			}
			l[i*m+i] = 0.3 + 0.5*rng.Float64()
		}
		if err := q.SetSqrt(p, l); err != nil {
			t.Fatal(err)
		}
	}
}

// lmFixedNoise returns a deep GP's fixed noise of one hidden layer: size standard normal numbers from rng.
func lmFixedNoise(rng *rand.Rand, size int) dgp.Noise {
	eps := make([]float64, size)
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	return dgp.FixedNoise([][]float64{eps})
}

// lmTrainable counts the trainable Params of ps.
func lmTrainable(ps []*graph.Param) int {
	n := 0
	for _, p := range ps {
		if p.Trainable() {
			n++
		}
	}
	return n
}

// lmDeepGP returns a 2-layer deep GP on 2 inputs whose hidden layer is an LMC (layers.LMC: latent blocks of 1
// and 2 latents, each with its own kernel and Z, mixed by W [2,3], identity mean) and whose last layer is a
// coupled SVGP, with q's randomised; noise nil means the default row-keyed noise seeded from Rand.
func lmDeepGP(t testing.TB, rng *rand.Rand, w []float64, noise dgp.Noise) (*dgp.DGP, *layers.LMC) {
	t.Helper()
	block := func(name string, m, dout int, ls float64) *layers.SVGP {
		k, err := gp.NewSquaredExp(gp.KernelConfig{Name: name + ".k", InputDim: 2, Variance: 1, Lengthscales: []float64{ls, 1.2 * ls}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: k, Z: mat.NewDense(m, 2, gptest.RandomMatrix(rng, m, 2, -2, 2)), OutputDim: dout})
		if err != nil {
			t.Fatal(err)
		}
		lmRandomQ(t, b.Q, rng)
		return b
	}
	hidden, err := layers.NewLMC(layers.LMCConfig{Name: "h", Latents: []gp.Layer{block("h0", 5, 1, 0.8), block("h1", 4, 2, 1.3)},
		W: mat.NewDense(2, 3, w), Mean: gp.IdentityMean{D: 2}})
	if err != nil {
		t.Fatal(err)
	}
	last := block("out", 5, 1, 1)
	deep, err := dgp.New(dgp.Config{Layers: []gp.Layer{hidden, last}, Likelihood: lmGaussian(t, 0.2), NumData: 30, Samples: 2,
		Noise: noise, Rand: rand.New(rand.NewPCG(7, 7))})
	if err != nil {
		t.Fatal(err)
	}
	return deep, hidden
}

// A deep GP whose hidden layer has correlated outputs (an LMC): the sampled ELBO's gradients by finite
// differences (the hidden layer draws its noise per latent: 3 numbers per row for 2 outputs), the Spec round
// trip, the Predictor contract, and the hidden samples' covariance between the outputs, which must be the
// layer's W diag(v) Wᵀ rather than the diagonal of independent draws.
func TestLMCDeepGPHiddenLayer(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 10))
	w := []float64{1, 0.8, 0.5, 0.9, -0.2, 0.7}
	x, y := gptest.ToyRegression(rng, 12, 2, 1)

	t.Run("gradients", func(t *testing.T) {
		deep, _ := lmDeepGP(t, rand.New(rand.NewPCG(1, 2)), w, lmFixedNoise(rng, 2*12*3))
		g := graph.New(graph.Options{})
		xn, yn := g.Const("x", x.RawMatrix().Data, 12, 2), g.Const("y", y.RawMatrix().Data, 12, 1)
		prog, err := g.Compile(deep.Loss(xn, yn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		if got, want := len(prog.Params()), lmTrainable(deep.Params()); got != want {
			t.Fatalf("program differentiates %d params, model has %d trainable", got, want)
		}
		gradcheck.CheckProgram(t, prog)
	})

	t.Run("spec", func(t *testing.T) {
		deep, _ := lmDeepGP(t, rand.New(rand.NewPCG(1, 2)), w, nil)
		nd := gptest.CheckSpecRoundTrip(t, deep, gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))}).(*dgp.DGP)
		if l1, l2 := gptest.EvalScalar(t, deep.Loss, x, y), gptest.EvalScalar(t, nd.Loss, x, y); l1 != l2 {
			t.Errorf("loss %v after the round trip, want %v", l2, l1)
		}
		gptest.CheckPredictor(t, deep, x, gp.PredictOptions{Samples: 5, Draws: 2})
	})

	t.Run("correlated samples", func(t *testing.T) {
		deep, hidden := lmDeepGP(t, rand.New(rand.NewPCG(1, 2)), w, nil)
		x1 := mat.NewDense(1, 2, []float64{0.3, -0.4})
		const s = 4000
		samples, err := deep.LayerSamples(x1, s, rand.New(rand.NewPCG(8, 9)), nil)
		if err != nil {
			t.Fatal(err)
		}
		var m [2]float64
		for _, f := range samples[0] {
			m[0] += f.At(0, 0) / s
			m[1] += f.At(0, 1) / s
		}
		var c [2][2]float64
		for _, f := range samples[0] {
			for a := 0; a < 2; a++ {
				for b := 0; b < 2; b++ {
					c[a][b] += (f.At(0, a) - m[a]) * (f.At(0, b) - m[b]) / (s - 1)
				}
			}
		}
		g := graph.New(graph.Options{})
		mean, cov := hidden.PredictOutputCov(g.Const("x1", x1.RawMatrix().Data, 1, 2))
		prog, err := g.CompileForward(map[string]*graph.Node{"mean": mean, "cov": cov})
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		want := prog.Output("cov")
		if se := math.Sqrt((want[0]*want[3] + want[1]*want[1]) / s); !(math.Abs(want[1]) > 8*se) {
			t.Fatalf("the layer's output covariance %v is too small for the test (standard error %v)", want[1], se)
		}
		for a := 0; a < 2; a++ {
			for b := 0; b < 2; b++ {
				se := math.Sqrt((want[a*2+a]*want[b*2+b] + want[a*2+b]*want[a*2+b]) / s)
				if d := math.Abs(c[a][b] - want[a*2+b]); d > 4*se {
					t.Errorf("sample covariance (%d,%d) = %v, the layer's %v (standard error %v)", a, b, c[a][b], want[a*2+b], se)
				}
			}
			if se := math.Sqrt(want[a*2+a] / s); math.Abs(m[a]-prog.Output("mean")[a]) > 4*se {
				t.Errorf("sample mean %d = %v, the layer's %v", a, m[a], prog.Output("mean")[a])
			}
		}
		t.Logf("hidden outputs' covariance: samples %v, layer %v", c, want)
	})
}

// lmSVGP returns a single-layer SVGP model on the "mixed" test LMC (2 inputs, 3 latents in 2 blocks, 2 outputs)
// with a Gaussian likelihood.
func lmSVGP(t testing.TB, rng *rand.Rand) (*models.SVGP, *layers.LMC) {
	t.Helper()
	l := lmCases(t, rng)[0].layer(t, rng)
	m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lmGaussian(t, 0.1), NumData: 20})
	if err != nil {
		t.Fatal(err)
	}
	return m, l
}

// lmEmpiricalCov returns the covariance of the pairs (a[k], b[k]).
func lmEmpiricalCov(a, b []float64) float64 {
	var ma, mb, c float64
	for k := range a {
		ma += a[k] / float64(len(a))
		mb += b[k] / float64(len(b))
	}
	for k := range a {
		c += (a[k] - ma) * (b[k] - mb) / float64(len(a)-1)
	}
	return c
}

// Predictions of models with correlated outputs: the Predictor contract with every option (OutputCov
// included), the SVGP model's output covariances equal to the layer's, a one-layer deep GP's equal to the SVGP
// model's, and joint draws whose covariances across outputs and rows are OutputCov's and FCov's.
func TestLMCPredictions(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 20))
	m, l := lmSVGP(t, rng)
	x := mat.NewDense(7, 2, gptest.RandomMatrix(rng, 7, 2, -2, 2))
	opts := gp.PredictOptions{ChunkRows: 3, Full: true, Draws: 2, OutputCov: true}
	pr := gptest.CheckPredictor(t, m, x, opts)
	layer := lmRun(t, x, false, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
		_, cov := l.PredictOutputCov(xn)
		return map[string]*graph.Node{"cov": cov}
	})["cov"]
	for i, c := range pr.OutputCov {
		for a := 0; a < 2; a++ {
			for b := 0; b < 2; b++ {
				if !lmClose(c.At(a, b), layer[i*4+a*2+b], 1e-12) {
					t.Errorf("row %d: OutputCov (%d,%d) = %v, the layer's %v", i, a, b, c.At(a, b), layer[i*4+a*2+b])
				}
			}
		}
		if math.Abs(c.At(0, 1)) < 1e-3 {
			t.Errorf("row %d: outputs' covariance %v: the test wants correlated outputs", i, c.At(0, 1))
		}
	}

	// A one-layer deep GP on the same layer: the same output covariances.
	deep, err := dgp.New(dgp.Config{Layers: []gp.Layer{l}, Likelihood: m.Likelihood, NumData: 20})
	if err != nil {
		t.Fatal(err)
	}
	dp := gptest.CheckPredictor(t, deep, x, gp.PredictOptions{OutputCov: true})
	for i := range dp.OutputCov {
		for a := 0; a < 2; a++ {
			for b := 0; b < 2; b++ {
				if !lmClose(dp.OutputCov[i].At(a, b), pr.OutputCov[i].At(a, b), 1e-12) {
					t.Errorf("row %d: the one-layer deep GP's OutputCov (%d,%d) = %v, the SVGP model's %v", i, a, b, dp.OutputCov[i].At(a, b), pr.OutputCov[i].At(a, b))
				}
			}
		}
	}

	// Joint draws at two rows: covariances across the outputs (OutputCov) and across the rows (FCov).
	x2 := mat.NewDense(2, 2, []float64{0.2, -0.3, 0.6, 0.1})
	const s = 3000
	jp, err := m.Predict(x2, gp.PredictOptions{Full: true, OutputCov: true, Draws: s})
	if err != nil {
		t.Fatal(err)
	}
	col := func(r, c int) []float64 {
		v := make([]float64, s)
		for k, d := range jp.Draws {
			v[k] = d.At(r, c)
		}
		return v
	}
	for _, c := range []struct {
		what           string
		r1, c1, r2, c2 int
		want, v1, v2   float64
	}{
		{"f0(x0), f1(x0)", 0, 0, 0, 1, jp.OutputCov[0].At(0, 1), jp.FVar.At(0, 0), jp.FVar.At(0, 1)},
		{"f0(x1), f1(x1)", 1, 0, 1, 1, jp.OutputCov[1].At(0, 1), jp.FVar.At(1, 0), jp.FVar.At(1, 1)},
		{"f0(x0), f0(x1)", 0, 0, 1, 0, jp.FCov[0].At(0, 1), jp.FVar.At(0, 0), jp.FVar.At(1, 0)},
		{"f1(x0), f1(x1)", 0, 1, 1, 1, jp.FCov[1].At(0, 1), jp.FVar.At(0, 1), jp.FVar.At(1, 1)},
		{"f0(x0), f0(x0)", 0, 0, 0, 0, jp.FVar.At(0, 0), jp.FVar.At(0, 0), jp.FVar.At(0, 0)},
	} {
		got := lmEmpiricalCov(col(c.r1, c.c1), col(c.r2, c.c2))
		se := math.Sqrt((c.v1*c.v2 + c.want*c.want) / s)
		if math.Abs(got-c.want) > 4.5*se {
			t.Errorf("draws' covariance of %s = %v, the prediction's %v (standard error %v)", c.what, got, c.want, se)
		}
	}
	if se := math.Sqrt((jp.FVar.At(0, 0)*jp.FVar.At(0, 1) + jp.OutputCov[0].At(0, 1)*jp.OutputCov[0].At(0, 1)) / s); math.Abs(jp.OutputCov[0].At(0, 1)) < 8*se {
		t.Errorf("the outputs' covariance %v is too small for the draws to test it", jp.OutputCov[0].At(0, 1))
	}
}

// Model files of LMC models (an SVGP model, and a deep GP with an LMC hidden and last layer) round-trip their
// predictions bit for bit, the covariances between the outputs included, in original units: the standardised
// covariance scaled by the targets' deviations, its diagonal the latent variance.
func TestLMCModelFile(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 21))
	m, _ := lmSVGP(t, rng)
	deepLast, err := layers.NewLMC(layers.LMCConfig{Name: "o", Latents: []gp.Layer{lmBlock(t, rng, "o0", 2, 4, 1, 1, false), lmBlock(t, rng, "o1", 2, 4, 1, 0.7, false)},
		W: mat.NewDense(2, 2, []float64{1, 0.5, -0.4, 1})})
	if err != nil {
		t.Fatal(err)
	}
	deep, _ := lmDeepGP(t, rng, []float64{1, 0.8, 0.5, 0.9, -0.2, 0.7}, nil)
	deep.Layers[1] = deepLast
	deep, err = dgp.New(dgp.Config{Layers: deep.Layers, Likelihood: lmGaussian(t, 0.2), NumData: 30, Samples: 2, Rand: rand.New(rand.NewPCG(7, 7))})
	if err != nil {
		t.Fatal(err)
	}
	std := &datasets.Standardizer{XMean: []float64{0.5, -1}, XStd: []float64{2, 0.5}, YMean: []float64{3, -2}, YStd: []float64{4, 0.25}}
	x := mat.NewDense(6, 2, gptest.RandomMatrix(rng, 6, 2, -3, 3))
	for name, model := range map[string]modelfile.Model{"svgp": m, "dgp": deep} {
		t.Run(name, func(t *testing.T) {
			f := &modelfile.File{Model: model, Standardizer: std, Meta: map[string]string{"test_samples": "4"}}
			var buf bytes.Buffer
			if err := modelfile.Save(&buf, f); err != nil {
				t.Fatal(err)
			}
			back, err := modelfile.Load(&buf, gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
			if err != nil {
				t.Fatal(err)
			}
			o := modelfile.PredictOptions{OutputCov: true, Latent: true, Seed: 5}
			p1, err := f.Predict(x, o)
			if err != nil {
				t.Fatal(err)
			}
			p2, err := back.Predict(x, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(p1.OutputCov) != 6 || len(p2.OutputCov) != 6 {
				t.Fatalf("%d and %d output covariances, want 6", len(p1.OutputCov), len(p2.OutputCov))
			}
			xs, err := std.ApplyX(x)
			if err != nil {
				t.Fatal(err)
			}
			mp, err := model.(gp.Predictor).Predict(xs, gp.PredictOptions{OutputCov: true, Samples: 4})
			if err != nil {
				t.Fatal(err)
			}
			for i := range p1.OutputCov {
				for a := 0; a < 2; a++ {
					for b := 0; b < 2; b++ {
						c1, c2 := p1.OutputCov[i].At(a, b), p2.OutputCov[i].At(a, b)
						if math.Float64bits(c1) != math.Float64bits(c2) {
							t.Errorf("row %d (%d,%d): %v from the saved model, %v from the loaded one", i, a, b, c1, c2)
						}
						if a == b && math.Float64bits(c1) != math.Float64bits(p1.Var.At(i, a)) {
							t.Errorf("row %d: diagonal %d %v, latent variance %v", i, a, c1, p1.Var.At(i, a))
						}
						// The deep GP's mixture draws its own samples per row (keyed by the seed): compare the
						// SVGP's only to the model's standardised prediction.
						if name == "svgp" {
							if want := mp.OutputCov[i].At(a, b) * std.YStd[a] * std.YStd[b]; !lmClose(c1, want, 1e-14) {
								t.Errorf("row %d (%d,%d): %v in original units, want %v", i, a, b, c1, want)
							}
						}
					}
				}
				if math.Abs(p1.OutputCov[i].At(0, 1)) < 1e-6 {
					t.Errorf("row %d: the outputs' covariance %v: the test wants correlated outputs", i, p1.OutputCov[i].At(0, 1))
				}
			}
		})
	}
}
