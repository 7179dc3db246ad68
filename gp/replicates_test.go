package gp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"gonum.org/v1/gonum/mat"
)

// repeatedData returns n rows of 2 outputs whose inputs are drawn from `distinct` inputs (row i < distinct takes
// input i, so all occur; the rest at random, some many times), targets a smooth function plus noise.
func repeatedData(rng *rand.Rand, n, distinct int) (x, y *mat.Dense) {
	base, _ := toyData(rng, distinct, 2)
	x, y = mat.NewDense(n, 2, nil), mat.NewDense(n, 2, nil)
	for i := range n {
		j := i
		if i >= distinct {
			j = rng.IntN(distinct)
			if rng.IntN(3) == 0 {
				j = 0 // one input repeated often
			}
		}
		x.SetRow(i, base.RawRowView(j))
		y.Set(i, 0, math.Sin(2*x.At(i, 0))+0.3*rng.NormFloat64())
		y.Set(i, 1, math.Cos(x.At(i, 1))+0.3*rng.NormFloat64())
	}
	return x, y
}

// Collapse groups rows by input: counts, means and scatters equal a direct two-pass computation, the first
// occurrence's order is kept, and data without repeats come back unchanged.
func TestCollapse(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := repeatedData(rng, 90, 20)
	c, repeats, err := gp.Collapse(x, y)
	if err != nil || !repeats {
		t.Fatalf("Collapse: repeats %v, %v", repeats, err)
	}
	if m, _ := c.X.Dims(); m != 20 {
		t.Fatalf("%d distinct inputs, want 20", m)
	}
	total := 0.0
	for j := range 20 {
		if !slices.Equal(c.X.RawRowView(j), x.RawRowView(j)) {
			t.Fatalf("row %d is not the first occurrence's input", j)
		}
		for p := range 2 {
			var vals []float64
			for i := range 90 {
				if slices.Equal(x.RawRowView(i), c.X.RawRowView(j)) {
					vals = append(vals, y.At(i, p))
				}
			}
			mean, ss := 0.0, 0.0
			for _, v := range vals {
				mean += v
			}
			mean /= float64(len(vals))
			for _, v := range vals {
				ss += (v - mean) * (v - mean)
			}
			if float64(len(vals)) != c.Counts[j] || math.Abs(c.Y.At(j, p)-mean) > 1e-14 || math.Abs(c.RowScatter[j*2+p]-ss) > 1e-12*(1+ss) {
				t.Errorf("row %d output %d: count %v mean %v scatter %v, want %d, %v, %v", j, p, c.Counts[j], c.Y.At(j, p), c.RowScatter[j*2+p], len(vals), mean, ss)
			}
		}
		total += c.Counts[j]
	}
	if total != 90 {
		t.Errorf("counts sum to %v", total)
	}
	xd, yd := toyData(rng, 15, 2)
	c, repeats, err = gp.Collapse(xd, yd)
	if err != nil || repeats || !mat.Equal(c.X, xd) || !mat.Equal(c.Y, yd) {
		t.Errorf("distinct data: repeats %v, %v, or the data changed", repeats, err)
	}
}

// collapsedPair returns the exact GP on the raw rows and the one on their collapse (with a linear mean, two
// outputs), sharing kernel, mean and noise values.
func collapsedPair(t *testing.T, x, y *mat.Dense) (raw, col *gp.GPR, c *gp.Collapsed) {
	t.Helper()
	c, _, err := gp.Collapse(x, y)
	if err != nil {
		t.Fatal(err)
	}
	build := func(x, y *mat.Dense, r *gp.Replicates) *gp.GPR {
		mean, err := gp.NewLinearMean("mean", 2, 2, []float64{0.1, -0.2, 0.3, 0.05}, []float64{0.2, -0.1})
		if err != nil {
			t.Fatal(err)
		}
		k, err := gptest.StationaryKernel(t, "matern52", gp.KernelConfig{InputDim: 2, Variance: 0.9, Lengthscales: []float64{0.7, 1.2}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, Mean: mean, NoiseVariance: 0.07, X: x, Y: y, Replicates: r})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return build(x, y, nil), build(c.X, c.Y, c.Replicates()), c
}

// lossGrad returns m's loss on (x, y) and its gradient in every Param, and the program.
func lossGrad(t *testing.T, m *gp.GPR, x, y *mat.Dense) (float64, []float64, *graph.Program) {
	t.Helper()
	n, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	prog, err := g.Compile(m.Loss(xn, yn), nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(prog.InputData("x"), x.RawMatrix().Data)
	copy(prog.InputData("y"), y.RawMatrix().Data)
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	var grad []float64
	for _, q := range m.Params() {
		grad = append(grad, prog.Grad(q)...)
	}
	return prog.Loss(), grad, prog
}

// The exact GP on collapsed replicates equals the exact GP on the repeated rows (Replicates): the log marginal
// likelihood and its gradient in every parameter within 1e-10 relative, the predictive means, variances and full
// covariance within 1e-10; its gradient passes the finite-difference check; its Spec round-trips the replicates.
func TestGPRReplicatesEquivalence(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	x, y := repeatedData(rng, 120, 30)
	raw, col, c := collapsedPair(t, x, y)
	lr, gr, _ := lossGrad(t, raw, x, y)
	lc, gc, prog := lossGrad(t, col, c.X, c.Y)
	if math.Abs(lc-lr) > 1e-10*math.Abs(lr) {
		t.Errorf("loss collapsed %.15g, raw %.15g", lc, lr)
	}
	for i := range gr {
		if math.Abs(gc[i]-gr[i]) > 1e-10*(1+math.Abs(gr[i])) {
			t.Errorf("gradient %d collapsed %.15g, raw %.15g", i, gc[i], gr[i])
		}
	}
	gradcheck.CheckProgram(t, prog)

	xs, _ := toyData(rng, 9, 2)
	xs.SetRow(0, x.RawRowView(0)) // a repeated training input among the test rows
	opt := gp.PredictOptions{Full: true}
	pr, err := raw.Predict(xs, opt)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := col.Predict(xs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]*mat.Dense{"mean": {pc.FMean, pr.FMean}, "var": {pc.FVar, pr.FVar}, "y var": {pc.YVar, pr.YVar}} {
		if !mat.EqualApprox(pair[0], pair[1], 1e-10) {
			t.Errorf("%s: collapsed %v, raw %v", name, mat.Formatted(pair[0].T()), mat.Formatted(pair[1].T()))
		}
	}
	if len(pc.FCov) != len(pr.FCov) || len(pc.FCov) == 0 || !mat.EqualApprox(pc.FCov[0], pr.FCov[0], 1e-10) {
		t.Error("full covariances differ")
	}

	spec, err := col.Spec()
	if err != nil {
		t.Fatal(err)
	}
	built, err := gp.BuildSpec(spec, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := built.(*gp.GPR).Replicates(); r == nil || !slices.Equal(r.Counts, c.Replicates().Counts) || !slices.Equal(r.Scatter, c.Replicates().Scatter) {
		t.Errorf("the Spec's replicates %+v", r)
	}
}

// Replicates that do not fit the data, or are not counts, are refused with gp.ErrConfig.
func TestReplicatesRefused(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	x, y := repeatedData(rng, 40, 10)
	_, col, c := collapsedPair(t, x, y)
	if err := col.SetTrainingData(x, y); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("raw rows with the collapse's replicates: %v", err)
	}
	if tx, _ := col.TrainingData(); tx != nil {
		t.Error("refused data were kept")
	}
	if err := col.SetTrainingData(c.X, c.Y); err != nil {
		t.Fatal(err)
	}
	k := gptest.ARDKernel(t, 2)
	for _, r := range []*gp.Replicates{
		{Counts: []float64{1, 0.5}, Scatter: []float64{0}},
		{Counts: []float64{1, 2}, Scatter: []float64{-1}},
		{Counts: []float64{1, math.NaN()}, Scatter: []float64{0}},
		{Counts: []float64{1, math.Inf(1)}, Scatter: []float64{0}},
		{Counts: []float64{1, 2}, Scatter: []float64{math.Inf(1)}},
	} {
		if _, err := gp.NewGPR(gp.GPRConfig{Kernel: k, Replicates: r}); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("replicates %+v: %v", r, err)
		}
	}
}

// The collapsed model stands for all the rows: Observations is the raw row count (train reports its objective
// per observation), and 0 for a model without replicates.
func TestReplicatesObservations(t *testing.T) {
	t.Parallel()
	x, y := repeatedData(rand.New(rand.NewPCG(13, 14)), 70, 12)
	raw, col, _ := collapsedPair(t, x, y)
	if raw.Observations() != 0 || col.Observations() != 70 {
		t.Errorf("observations: raw %d, collapsed %d (want 0 and 70)", raw.Observations(), col.Observations())
	}
}

// TestAppendInputKey: rows have equal keys exactly when they are equal bit for bit (0 and −0 differ; a NaN
// equals the same NaN), and appending keeps what dst held.
func TestAppendInputKey(t *testing.T) {
	t.Parallel()
	key := func(row ...float64) string { return string(gp.AppendInputKey(nil, row)) }
	nan := math.NaN()
	for _, c := range []struct {
		a, b  []float64
		equal bool
	}{
		{[]float64{1, 2}, []float64{1, 2}, true},
		{[]float64{1, 2}, []float64{2, 1}, false},
		{[]float64{0}, []float64{math.Copysign(0, -1)}, false},
		{[]float64{nan, 1}, []float64{nan, 1}, true},
		{[]float64{1, 2}, []float64{1, math.Nextafter(2, 3)}, false},
	} {
		if got := key(c.a...) == key(c.b...); got != c.equal {
			t.Errorf("keys of %v and %v equal: %v, want %v", c.a, c.b, got, c.equal)
		}
	}
	if got := gp.AppendInputKey([]byte("ab"), []float64{1}); len(got) != 10 || string(got[:2]) != "ab" {
		t.Errorf("AppendInputKey onto %q gave %q", "ab", got)
	}
}
