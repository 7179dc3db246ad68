package gptest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/gradcheck"
)

// CheckLayer runs the layer conformance suite on l with random inputs from rng: Predict shapes [N,Dout] and
// non-negative variances; PredictFull's diagonals equal Predict's variances and its means equal Predict's;
// KL ≥ 0, and KL = 0 after setPrior (which must set q to the prior; nil skips that check); central
// finite-difference gradients of Σ W⊙mean + Σ V⊙var + KL with respect to every Param and the inputs; and a
// non-zero gradient for every Param (a Param missing from Params() would be caught by the count).
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
