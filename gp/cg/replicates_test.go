package cg_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// repeated returns n rows of eqD inputs drawn from `distinct` inputs (all occurring; a third of the rest at one
// input), targets as eqData's plus noise of their own at every row.
func repeated(n, distinct int, seed uint64) (x, y *mat.Dense) {
	base, _ := eqData(distinct, eqD, seed)
	rng := rand.New(rand.NewPCG(seed, 23))
	x, y = mat.NewDense(n, eqD, nil), mat.NewDense(n, 1, nil)
	for i := range n {
		j := i
		if i >= distinct {
			j = rng.IntN(distinct)
			if rng.IntN(3) == 0 {
				j = 0
			}
		}
		x.SetRow(i, base.RawRowView(j))
		s := 0.0
		for k := range eqD {
			s += math.Sin(float64(k+1)*x.At(i, k)) / float64(k+1)
		}
		y.Set(i, 0, s+0.3*rng.NormFloat64())
	}
	return x, y
}

// The CG exact GP on collapsed replicates (Config.Replicates: the scaled kernel SKS) equals the Cholesky exact GP
// on the repeated rows: at a tight tolerance with exact traces (basis probes, one per row) the loss and its
// gradient within 1e-6 relative; the predictive means within 1e-8, LOVE's variances of y within 1%, the exact
// variances by CG and the direct cache's within 1e-8; the Spec and a model file's cache round-trip.
func TestReplicatesEquivalence(t *testing.T) {
	x, y := repeated(1200, 400, 31)
	xs, _ := eqData(40, eqD, 32)
	xs.SetRow(0, x.RawRowView(0))
	c, repeats, err := gp.Collapse(x, y)
	if err != nil || !repeats {
		t.Fatal(repeats, err)
	}
	k := eqKernel(t, eqD)
	exact, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: eqNoise, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	wantL, wantG, _ := lossAndGrad(t, exact, x, y, exact.Params(), 0)
	want := predict(t, exact, xs)
	m400, _ := c.X.Dims()

	solver := ops.CGConfig{Tol: 1e-12, Lanczos: 100, PrecondRank: 50, PrecondMinRows: -1, Probe: ops.ProbeBasis, Probes: m400}
	build := func(extra func(*cg.Config)) *cg.GPR {
		cfg := cg.Config{Kernel: k, NoiseVariance: eqNoise, X: c.X, Y: c.Y, Replicates: c.Replicates(), Solver: solver}
		if extra != nil {
			extra(&cfg)
		}
		m, err := cg.NewGPR(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := build(nil)
	l, g, _ := lossAndGrad(t, m, c.X, c.Y, m.Params(), 0)
	t.Logf("loss %.12g (exact %.12g), gradient within %.3g; %+v", l, wantL, relVec(g, wantG), m.Solver().Stats())
	if e := relErr(l, wantL); e > 1e-6 {
		t.Errorf("loss %.12g, the repeated rows' exact %.12g (relative %.3g)", l, wantL, e)
	}
	if e := relVec(g, wantG); e > 1e-6 {
		t.Errorf("gradient %v, the repeated rows' exact %v (relative %.3g)", g, wantG, e)
	}

	got := predict(t, m, xs)
	if e := maxRel(got.FMean.RawMatrix().Data, want.FMean.RawMatrix().Data); e > 1e-8 {
		t.Errorf("LOVE model: means off by %.3g", e)
	}
	if e := maxRel(got.YVar.RawMatrix().Data, want.YVar.RawMatrix().Data); e > 0.01 {
		t.Errorf("LOVE model: variances of y off by %.3g", e)
	}
	if checked, exceeded := m.LOVECheck(); checked == 0 || exceeded != 0 {
		t.Errorf("LOVE's check: %d of %d rows exceeded the bound", exceeded, checked)
	}
	cache, err := m.PredictionCache()
	if err != nil {
		t.Fatal(err)
	}
	m2 := restored(t, m, c.X, c.Y, cache)
	if r := m2.Config().Replicates; r == nil || !slices.Equal(r.Counts, c.Counts) {
		t.Error("the Spec lost the replicates")
	}
	if again := predict(t, m2, xs); !slices.Equal(again.FMean.RawMatrix().Data, got.FMean.RawMatrix().Data) || !slices.Equal(again.FVar.RawMatrix().Data, got.FVar.RawMatrix().Data) {
		t.Error("the restored model predicts otherwise")
	}

	for name, extra := range map[string]func(*cg.Config){
		"exact variances": func(c *cg.Config) { c.ExactVariance = true; c.PredictTol = 1e-12 },
		"direct cache": func(c *cg.Config) {
			c.PredictTol = 1e-14
			c.PredictPrecondRank = -1
			c.Solver.MaxIters = 2
			c.Solver.MinIters = 1
		},
	} {
		mm := build(extra)
		got := predict(t, mm, xs)
		em := maxRel(got.FMean.RawMatrix().Data, want.FMean.RawMatrix().Data)
		ev := maxRel(got.YVar.RawMatrix().Data, want.YVar.RawMatrix().Data)
		direct, _ := mm.CacheDirect()
		t.Logf("%s: means off by %.3g, variances by %.3g, direct %q", name, em, ev, direct)
		if em > 1e-8 || ev > 1e-8 || (name == "direct cache") != (direct != "") {
			t.Errorf("%s: means off by %.3g, variances by %.3g, direct %q", name, em, ev, direct)
		}
	}
}

// The scaled operator SKS of the replicates: its products, diagonal and rows equal S·K·S formed densely, and its
// two gradient contractions (BilinearGrad, PivotGrad: the second is idle in the equivalence test above, whose
// basis probes make the preconditioner's control variate vanish) equal central finite differences of the
// contracted SKS within 1e-6 relative.
func TestScaledOperator(t *testing.T) {
	const n, c = 23, 3
	x := testInputs(n, 41)
	k := eqKernel(t, 3)
	s := randBlock(n, 1, 42)
	for i := range s {
		s[i] = 1 + 3*math.Abs(s[i])
	}
	kd, err := gp.KernelMatrix(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cg.NewBlocks(k, cg.BlocksOptions{Block: 7})
	if err != nil {
		t.Fatal(err)
	}
	op := cg.NewScaled(b, s)
	hyper := raws(k.Params())
	bind := func() {
		if err := op.Bind(x.RawMatrix().Data, n, 3, hyper); err != nil {
			t.Fatal(err)
		}
	}
	bind()
	v := randBlock(n, c, 43)
	got := make([]float64, n*c)
	if err := op.Mul(v, c, got); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, n*c)
	diag, row := make([]float64, n), make([]float64, n)
	if err := op.Diag(diag); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := op.Row(i, row); err != nil {
			t.Fatal(err)
		}
		for j := range n {
			kij := s[i] * kd.At(i, j) * s[j]
			if math.Abs(row[j]-kij) > 1e-12*math.Abs(kij) {
				t.Fatalf("row %d col %d: %v, want %v", i, j, row[j], kij)
			}
			for q := range c {
				want[i*c+q] += kij * v[j*c+q]
			}
		}
		if math.Abs(diag[i]-row[i]) > 1e-12*row[i] {
			t.Errorf("diag %d: %v, want %v", i, diag[i], row[i])
		}
	}
	if e := maxRel(got, want); e > 1e-12 {
		t.Errorf("SKS·V off by %.3g", e)
	}

	a, bm := randBlock(n, c, 44), randBlock(n, c, 45)
	piv := []int{5, 0, 17}
	u, w := randBlock(n, len(piv), 46), randBlock(len(piv), len(piv), 47)
	bilinear := func() float64 { // Σ_ab (A·Bᵀ)_ab (SKS)_ab
		kb := make([]float64, n*c)
		if err := op.Mul(bm, c, kb); err != nil {
			t.Fatal(err)
		}
		f := 0.0
		for i := range kb {
			f += a[i] * kb[i]
		}
		return f
	}
	pivot := func() float64 { // Σ U_ip (SKS)[i, piv_p] + Σ W_qp (SKS)[piv_q, piv_p]
		f := 0.0
		for q, i := range piv {
			if err := op.Row(i, row); err != nil {
				t.Fatal(err)
			}
			for j := range n { // row piv_q = column piv_q
				f += u[j*len(piv)+q] * row[j]
			}
			for p, j := range piv {
				f += w[q*len(piv)+p] * row[j]
			}
		}
		return f
	}
	for name, c2 := range map[string]struct {
		grad func(dst [][]float64) error
		f    func() float64
	}{
		"BilinearGrad": {func(dst [][]float64) error { return op.BilinearGrad(a, bm, c, dst) }, bilinear},
		"PivotGrad":    {func(dst [][]float64) error { return op.PivotGrad(piv, u, w, dst) }, pivot},
	} {
		bind()
		dst := make([][]float64, len(hyper))
		for j := range hyper {
			dst[j] = make([]float64, len(hyper[j]))
		}
		if err := c2.grad(dst); err != nil {
			t.Fatal(err)
		}
		for j := range hyper {
			for e := range hyper[j] {
				const h = 1e-5
				old := hyper[j][e]
				hyper[j][e] = old + h
				bind()
				fp := c2.f()
				hyper[j][e] = old - h
				bind()
				fm := c2.f()
				hyper[j][e] = old
				fd := (fp - fm) / (2 * h)
				if math.Abs(dst[j][e]-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("%s: hyperparameter %d entry %d: %.12g, finite differences %.12g", name, j, e, dst[j][e], fd)
				}
			}
		}
	}
	if err := op.Bind(x.RawMatrix().Data[:3*(n-1)], n-1, 3, hyper); err == nil {
		t.Error("rows other than the replicates' were bound")
	}
}
