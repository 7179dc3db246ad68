package gptest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
)

// CheckLayer runs the layer conformance suite on l with random inputs from rng: Predict shapes [N,Dout] and
// non-negative variances; PredictFull's diagonals equal Predict's variances and its means equal Predict's;
// KL ≥ 0, and KL = 0 after setPrior (which must set q to the prior; nil skips that check); central
// finite-difference gradients of Σ W⊙mean + Σ V⊙var + KL with respect to every Param and the inputs; and a
// non-zero gradient for every Param (a Param missing from Params() would be caught by the count). A
// gp.CorrelatedLayer is also checked by checkCorrelated.
func CheckLayer(t *testing.T, l gp.Layer, rng *rand.Rand, setPrior func() error) {
	t.Helper()
	const n = 5
	din, dout := l.InputDim(), l.OutputDim()
	x := RandomMatrix(rng, n, din, -1.5, 1.5)
	px, err := graph.NewParam("X", x, nil, n, din)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	xn := g.Param(px)
	mean, variance := l.Predict(xn)
	fm, covs := l.PredictFull(xn)
	kl := l.KL(g)
	outs := map[string]*graph.Node{"mean": mean, "var": variance, "fmean": fm, "kl": kl}
	for p, c := range covs {
		outs["cov"+string(rune('0'+p))] = c
	}
	wm := g.Const("wm", RandomMatrix(rng, n, dout, -1, 1), n, dout)
	wv := g.Const("wv", RandomMatrix(rng, n, dout, -1, 1), n, dout)
	loss := g.Add(g.Add(g.Dot(wm, mean), g.Dot(wv, variance)), kl)
	prog, err := g.Compile(loss, outs)
	if err != nil {
		t.Fatalf("gptest: layer: %v", err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatalf("gptest: layer: %v", err)
	}
	if s := prog.OutputShape("mean"); len(s) != 2 || s[0] != n || s[1] != dout {
		t.Errorf("Predict mean shape %v, want [%d %d]", s, n, dout)
	}
	if s := prog.OutputShape("var"); len(s) != 2 || s[0] != n || s[1] != dout {
		t.Errorf("Predict variance shape %v, want [%d %d]", s, n, dout)
	}
	if len(covs) != dout {
		t.Fatalf("PredictFull returned %d covariances, want %d", len(covs), dout)
	}
	m, v, f := prog.Output("mean"), prog.Output("var"), prog.Output("fmean")
	for i := 0; i < n; i++ {
		for p := 0; p < dout; p++ {
			c := prog.Output("cov" + string(rune('0'+p)))
			if v[i*dout+p] < -1e-10 {
				t.Errorf("negative variance %v at (%d,%d)", v[i*dout+p], i, p)
			}
			if d := math.Abs(c[i*n+i] - v[i*dout+p]); d > 1e-9*math.Max(1, math.Abs(v[i*dout+p])) {
				t.Errorf("PredictFull diag (%d,%d) = %v, Predict variance %v", i, p, c[i*n+i], v[i*dout+p])
			}
			if math.Abs(f[i*dout+p]-m[i*dout+p]) > 1e-12*math.Max(1, math.Abs(m[i*dout+p])) {
				t.Errorf("PredictFull mean (%d,%d) = %v, Predict %v", i, p, f[i*dout+p], m[i*dout+p])
			}
		}
	}
	if k := prog.Output("kl")[0]; k < -1e-10 {
		t.Errorf("KL = %v < 0", k)
	}
	if got, want := len(prog.Params()), len(l.Params())+1; got != want {
		t.Errorf("the loss reads %d trainable params, want the layer's %d plus the inputs", got, want-1)
	}
	gradcheck.CheckProgram(t, prog)
	for _, p := range prog.Params() {
		nz := false
		for _, gv := range prog.Grad(p) {
			nz = nz || gv != 0
		}
		if !nz {
			t.Errorf("param %s gets an all-zero gradient", p.Name())
		}
	}
	if c, ok := l.(gp.CorrelatedLayer); ok {
		checkCorrelated(t, c, px, rng)
	}
	if setPrior != nil {
		if err := setPrior(); err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		if k := prog.Output("kl")[0]; math.Abs(k) > 1e-8 {
			t.Errorf("KL at q = prior is %v, want 0", k)
		}
	}
}

// checkCorrelated checks a gp.CorrelatedLayer at the inputs px: PredictOutputCov's means are Predict's, its
// covariances [N,Dout²] are symmetric with Predict's variances on the diagonal and correlations in [−1, 1];
// Sample and SampleJoint with ε = 0 give the means; and central finite differences of Σ C⊙cov + Σ S⊙Sample(ε)
// + Σ J⊙SampleJoint(ε') for random weights and noise with respect to every Param and the inputs.
func checkCorrelated(t *testing.T, l gp.CorrelatedLayer, px *graph.Param, rng *rand.Rand) {
	t.Helper()
	s := px.Shape()
	n, dout, k := s[0], l.OutputDim(), l.NoiseDim()
	if k <= 0 {
		t.Fatalf("NoiseDim %d", k)
	}
	g := graph.New(graph.Options{})
	x := g.Param(px)
	mean, variance := l.Predict(x)
	cm, cov := l.PredictOutputCov(x)
	zero := g.Zeros("eps0", n, k)
	eps := g.Const("eps", RandomMatrix(rng, n, k, -2, 2), n, k)
	eps2 := g.Const("eps2", RandomMatrix(rng, n, k, -2, 2), n, k)
	sample, joint := l.Sample(x, eps), l.SampleJoint(x, eps2)
	outs := map[string]*graph.Node{"mean": mean, "var": variance, "cmean": cm, "cov": cov, "s0": l.Sample(x, zero),
		"j0": l.SampleJoint(x, zero), "sample": sample, "joint": joint}
	loss := g.Add(g.Add(g.Dot(g.Const("wc", RandomMatrix(rng, n, dout*dout, -1, 1), n, dout*dout), cov),
		g.Dot(g.Const("ws", RandomMatrix(rng, n, dout, -1, 1), n, dout), sample)),
		g.Dot(g.Const("wj", RandomMatrix(rng, n, dout, -1, 1), n, dout), joint))
	prog, err := g.Compile(loss, outs)
	if err != nil {
		t.Fatalf("gptest: correlated layer: %v", err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatalf("gptest: correlated layer: %v", err)
	}
	if sh := prog.OutputShape("cov"); len(sh) != 2 || sh[0] != n || sh[1] != dout*dout {
		t.Fatalf("PredictOutputCov covariance shape %v, want [%d %d]", sh, n, dout*dout)
	}
	for _, name := range []string{"sample", "joint", "s0", "j0"} {
		if sh := prog.OutputShape(name); len(sh) != 2 || sh[0] != n || sh[1] != dout {
			t.Fatalf("%s shape %v, want [%d %d]", name, sh, n, dout)
		}
	}
	m, v, c := prog.Output("mean"), prog.Output("var"), prog.Output("cov")
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for i := 0; i < n; i++ {
		for p := 0; p < dout; p++ {
			if !near(prog.Output("cmean")[i*dout+p], m[i*dout+p]) {
				t.Errorf("PredictOutputCov mean (%d,%d) = %v, Predict %v", i, p, prog.Output("cmean")[i*dout+p], m[i*dout+p])
			}
			if !near(prog.Output("s0")[i*dout+p], m[i*dout+p]) || !near(prog.Output("j0")[i*dout+p], m[i*dout+p]) {
				t.Errorf("samples with zero noise (%d,%d) = %v, %v, mean %v", i, p, prog.Output("s0")[i*dout+p], prog.Output("j0")[i*dout+p], m[i*dout+p])
			}
			cpp := c[i*dout*dout+p*dout+p]
			if !near(cpp, v[i*dout+p]) {
				t.Errorf("output covariance of row %d: diagonal %d = %v, Predict variance %v", i, p, cpp, v[i*dout+p])
			}
			for q := 0; q < dout; q++ {
				cpq, cqp, cqq := c[i*dout*dout+p*dout+q], c[i*dout*dout+q*dout+p], c[i*dout*dout+q*dout+q]
				if !near(cpq, cqp) {
					t.Errorf("output covariance of row %d not symmetric: (%d,%d) = %v, (%d,%d) = %v", i, p, q, cpq, q, p, cqp)
				}
				if math.Abs(cpq) > math.Sqrt(math.Max(cpp, 0)*math.Max(cqq, 0))*(1+1e-8)+1e-10 {
					t.Errorf("output covariance of row %d: (%d,%d) = %v with variances %v, %v", i, p, q, cpq, cpp, cqq)
				}
			}
		}
	}
	gradcheck.CheckProgram(t, prog)
}
