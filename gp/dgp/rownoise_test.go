package dgp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// The default training noise is keyed per data row (Config.Noise nil): the graph inputs gp.RowsInput and
// gp.StepInput name the batch's rows and the step.

// rowNoiseDGP builds a deep GP of the given hidden widths on (x, y) with the default row-keyed noise.
func rowNoiseDGP(t *testing.T, x *mat.Dense, widths []int, out, s int) *dgp.DGP {
	t.Helper()
	ls := build(t, x, widths, out, 6, false, 21)
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.1), NumData: x.RawMatrix().Rows, Samples: s,
		Rand: rand.New(rand.NewPCG(17, 18))})
	if err != nil {
		t.Fatal(err)
	}
	return deep
}

// feed writes the data rows idx of (x, y), their indices and the step into prog's inputs.
func feed(t *testing.T, prog *graph.Program, x, y *mat.Dense, idx []int, step int) {
	t.Helper()
	xb, yb := prog.InputData("x"), prog.InputData("y")
	rows, st := prog.InputData(gp.RowsInput), prog.InputData(gp.StepInput)
	if rows == nil || st == nil {
		t.Fatalf("the deep GP's graph has no %q or %q input", gp.RowsInput, gp.StepInput)
	}
	_, d := x.Dims()
	_, p := y.Dims()
	for i, r := range idx {
		copy(xb[i*d:(i+1)*d], x.RawRowView(r))
		copy(yb[i*p:(i+1)*p], y.RawRowView(r))
		rows[i] = float64(r)
	}
	st[0] = float64(step)
}

// stepResult is one training step's loss and gradients, by Param.
type stepResult struct {
	loss  float64
	grads map[*graph.Param][]float64
}

// runStep computes the loss −ELBO and its gradients on the data rows idx at the given step.
func runStep(t *testing.T, deep *dgp.DGP, x, y *mat.Dense, idx []int, step int) stepResult {
	t.Helper()
	_, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(deep.Loss(g.Input("x", len(idx), d), g.Input("y", len(idx), p)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	feed(t, prog, x, y, idx, step)
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return collect(prog)
}

func collect(prog *graph.Program) stepResult {
	r := stepResult{loss: prog.Loss(), grads: map[*graph.Param][]float64{}}
	for _, q := range prog.Params() {
		r.grads[q] = append([]float64(nil), prog.Grad(q)...)
	}
	return r
}

// runKL computes Σ KL_ℓ and its gradients (the global term of the loss, counted once per step).
func runKL(t *testing.T, deep *dgp.DGP) stepResult {
	t.Helper()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(deep.KL(g), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return collect(prog)
}

// dataTerm returns the unscaled data term V = Σ_s Σ_b E[log p(y_b | f_{b,s})] of a step on b rows, and its
// gradients, from loss = −(N/(b·S))·V + KL: V = −(loss − KL)·b·S/N.
func dataTerm(r, kl stepResult, n, b, s int, params []*graph.Param) (float64, [][]float64) {
	c := -float64(b*s) / float64(n)
	grads := make([][]float64, len(params))
	for i, q := range params {
		g := r.grads[q]
		grads[i] = make([]float64, len(g))
		k := kl.grads[q] // nil for the likelihood's Params: KL does not read them
		for j := range g {
			v := g[j]
			if k != nil {
				v -= k[j]
			}
			grads[i][j] = c * v
		}
	}
	return c * (r.loss - kl.loss), grads
}

// TestRowNoiseSumOfShards: a training step on a batch is the sum of the same step on two parts of the batch
// (the data term and its gradients, relative 1e-12; the KL counted once) — what a sharded step relies on. The
// parts have other sizes and put the rows at other positions, so each row must draw the same ε in all three.
func TestRowNoiseSumOfShards(t *testing.T) {
	needWhite(t)
	rng := rand.New(rand.NewPCG(5, 9))
	const n = 40
	x, y := gptest.ToyRegression(rng, n, 3, 1)
	for _, c := range []struct {
		name   string
		widths []int
		s      int
	}{{"2 layers, S=1", []int{2}, 1}, {"3 layers, S=3", []int{3, 2}, 3}} {
		t.Run(c.name, func(t *testing.T) {
			deep := rowNoiseDGP(t, x, c.widths, 1, c.s)
			batch := rng.Perm(n)[:13]
			left, right := batch[:5], batch[5:]
			right = append(right[4:], right[:4]...) // other positions than in the whole batch
			const step = 6
			kl := runKL(t, deep)
			var params []*graph.Param
			for _, q := range deep.Params() {
				if q.Trainable() {
					params = append(params, q)
				}
			}
			whole := runStep(t, deep, x, y, batch, step)
			vw, gw := dataTerm(whole, kl, n, len(batch), c.s, params)
			vl, gl := dataTerm(runStep(t, deep, x, y, left, step), kl, n, len(left), c.s, params)
			vr, gr := dataTerm(runStep(t, deep, x, y, right, step), kl, n, len(right), c.s, params)
			d := math.Abs(vl + vr - vw)
			worst := d / math.Abs(vw)
			if d > 1e-12*math.Abs(vw) {
				t.Errorf("data term: parts %.17g + %.17g = %.17g, whole batch %.17g (relative %.3g)", vl, vr, vl+vr, vw, d/math.Abs(vw))
			}
			for i, q := range params {
				var diff, scale float64
				for j := range gw[i] {
					diff = math.Max(diff, math.Abs(gl[i][j]+gr[i][j]-gw[i][j]))
					scale = math.Max(scale, math.Abs(gw[i][j]))
				}
				worst = math.Max(worst, diff/scale)
				if diff > 1e-12*scale || scale == 0 {
					t.Errorf("gradient of %s: parts' sum differs from the whole batch's by %.3g (max |g| %.3g)", q.Name(), diff, scale)
				}
			}
			t.Logf("largest relative difference of the parts' sum from the whole batch: %.3g", worst)
			// Not vacuous: the noise moves with the step.
			if other := runStep(t, deep, x, y, batch, step+1); other.loss == whole.loss {
				t.Error("steps 6 and 7 gave the same loss: the noise does not depend on the step")
			}
		})
	}
}

// TestRowNoiseSameRowSameSamples: a data row's propagated samples (the last layer's means at every sample) are the
// same whatever batch it is in, at whatever position, with whatever batch size; other rows' samples differ.
func TestRowNoiseSameRowSameSamples(t *testing.T) {
	needWhite(t)
	rng := rand.New(rand.NewPCG(8, 1))
	const n, s = 30, 2
	x, _ := gptest.ToyRegression(rng, n, 2, 1)
	deep := rowNoiseDGP(t, x, []int{2}, 1, s)
	means := func(idx []int, step int) [][]float64 { // means[k][i]: sample k of batch position i
		g := graph.New(graph.Options{})
		m, _ := deep.Propagate(g.Input("x", len(idx), 2), s)
		prog, err := g.CompileForward(map[string]*graph.Node{"m": m})
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		xb, rows := prog.InputData("x"), prog.InputData(gp.RowsInput)
		for i, r := range idx {
			copy(xb[i*2:], x.RawRowView(r))
			rows[i] = float64(r)
		}
		prog.InputData(gp.StepInput)[0] = float64(step)
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		out := prog.Output("m")
		res := make([][]float64, s)
		for k := range res {
			res[k] = out[k*len(idx) : (k+1)*len(idx)]
		}
		return res
	}
	a := means([]int{4, 11, 7}, 3)
	b := means([]int{20, 7, 0, 4, 13, 29, 11, 2}, 3)
	for k := range s {
		for _, p := range [][2]int{{0, 3}, {1, 6}, {2, 1}} { // rows 4, 11, 7 in a and in b
			if d := math.Abs(a[k][p[0]] - b[k][p[1]]); d > 1e-12*math.Max(1, math.Abs(a[k][p[0]])) {
				t.Errorf("sample %d of a row: %.17g in one batch, %.17g in another", k, a[k][p[0]], b[k][p[1]])
			}
		}
	}
	if a[0][0] == a[1][0] {
		t.Error("the two samples of a row are equal")
	}
	if c := means([]int{4, 11, 7}, 4); c[0][0] == a[0][0] {
		t.Error("the same row at another step drew the same sample")
	}
}
