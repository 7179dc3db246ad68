package zoo

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// lowRankTargets returns n rows of y = W g + noise·ε with g, ε standard normal, for W [P, L].
func lowRankTargets(w [][]float64, n int, noise float64, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 7))
	p, l := len(w), len(w[0])
	y := mat.NewDense(n, p, nil)
	g := make([]float64, l)
	for i := range n {
		for j := range g {
			g[j] = rng.NormFloat64()
		}
		for o := range p {
			v := noise * rng.NormFloat64()
			for j := range l {
				v += w[o][j] * g[j]
			}
			y.Set(i, o, v)
		}
	}
	return y
}

// wwt returns W Wᵀ.
func wwt(w *mat.Dense) *mat.Dense {
	var c mat.Dense
	c.Mul(w, w.T())
	return &c
}

// maxAbsDiff returns max |a - b| over the entries.
func maxAbsDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	m := 0.0
	for i := range r {
		for j := range c {
			m = max(m, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return m
}

// TestInitMixingFullTargets: on rank-2 targets without noise W Wᵀ equals the sample covariance (its best rank-2
// approximation is itself), each column's largest entry is positive, and on noisy targets from a known W, W Wᵀ
// recovers W_true W_trueᵀ up to the noise's variance on the diagonal and the sampling error.
func TestInitMixingFullTargets(t *testing.T) {
	wTrue := [][]float64{{1, 0.3}, {0.8, -0.6}, {0.2, 1}}
	y := lowRankTargets(wTrue, 500, 0, 1)
	w, ok := initMixing(&datasets.Dataset{Y: y}, 2)
	if !ok {
		t.Fatal("initMixing: no start from complete rank-2 targets")
	}
	if r, c := w.Dims(); r != 3 || c != 2 {
		t.Fatalf("W is [%d,%d], want [3,2]", r, c)
	}
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, y, nil)
	if d := maxAbsDiff(wwt(w), &cov); d > 1e-10*mat.Norm(&cov, math.Inf(1)) {
		t.Errorf("W Wᵀ differs from the rank-2 targets' covariance by %g", d)
	}
	for q := range 2 {
		col := mat.Col(nil, q, w)
		big := 0
		for i := range col {
			if math.Abs(col[i]) > math.Abs(col[big]) {
				big = i
			}
		}
		if col[big] <= 0 {
			t.Errorf("column %d = %v: want its largest entry positive", q, col)
		}
	}
	again, _ := initMixing(&datasets.Dataset{Y: y}, 2)
	if !mat.Equal(w, again) {
		t.Error("initMixing is not deterministic")
	}

	noisy := lowRankTargets(wTrue, 20000, 0.1, 2)
	w, ok = initMixing(&datasets.Dataset{Y: noisy}, 2)
	if !ok {
		t.Fatal("initMixing: no start from noisy targets")
	}
	want := mat.NewDense(3, 3, nil)
	for i := range 3 {
		for j := range 3 {
			want.Set(i, j, wTrue[i][0]*wTrue[j][0]+wTrue[i][1]*wTrue[j][1])
		}
	}
	if d := maxAbsDiff(wwt(w), want); d > 0.06 {
		t.Errorf("W Wᵀ = %v, the generating W Wᵀ = %v: differ by %g (want ≤ 0.06)", mat.Formatted(wwt(w)), mat.Formatted(want), d)
	}
}

// TestInitMixingMissingTargets: with 30% of a target's cells missing (Y 0 there), the covariance is pairwise
// complete: W Wᵀ equals the rank-L approximation of the covariances computed over each pair's common rows (gonum's
// stat.Covariance on those rows), and the zeros in the missing cells do not enter (the start is that of the
// observed rows, far from the start with the zeros read as values).
func TestInitMixingMissingTargets(t *testing.T) {
	n := 400
	y := lowRankTargets([][]float64{{2, 0}, {1.5, 0.5}}, n, 0.05, 3)
	for i := range n {
		y.Set(i, 0, y.At(i, 0)+3) // a column whose mean is far from the missing cells' 0
	}
	obs := mat.NewDense(n, 2, nil)
	for i := range n {
		obs.Set(i, 0, 1)
		obs.Set(i, 1, 1)
		if i%10 < 3 {
			obs.Set(i, 0, 0)
		}
	}
	zeroed := mat.DenseCopyOf(y)
	for i := range n {
		if obs.At(i, 0) == 0 {
			zeroed.Set(i, 0, 0)
		}
	}
	d := &datasets.Dataset{Y: zeroed, Observed: obs}
	w, ok := initMixing(d, 2)
	if !ok {
		t.Fatal("initMixing: no start with missing cells")
	}
	var a0, a1, b1 []float64 // pair (0,1) over the common rows; column 1 over all rows
	for i := range n {
		b1 = append(b1, y.At(i, 1))
		if obs.At(i, 0) != 0 {
			a0, a1 = append(a0, y.At(i, 0)), append(a1, y.At(i, 1))
		}
	}
	c := mat.NewSymDense(2, []float64{
		stat.Covariance(a0, a0, nil), stat.Covariance(a0, a1, nil),
		0, stat.Covariance(b1, b1, nil)})
	c.SetSym(1, 0, stat.Covariance(a0, a1, nil))
	if diff := maxAbsDiff(wwt(w), c); diff > 1e-10*mat.Norm(c, math.Inf(1)) {
		t.Errorf("W Wᵀ = %v, pairwise-complete covariance %v: differ by %g", mat.Formatted(wwt(w)), mat.Formatted(c), diff)
	}
	wz, _ := initMixing(&datasets.Dataset{Y: zeroed}, 2) // the zeros read as observed values
	if maxAbsDiff(wwt(wz), c) < 0.5 {
		t.Error("the start with the missing cells read as zeros is as close to the observed covariance: the test does not tell them apart")
	}
}

// TestInitMixingFallback: more latents than targets, a target observed on fewer than 2 rows, constant targets and
// no data give no start (the caller draws W at random); a rank below L raises the small eigenvalues to a floor, so
// that every latent has a nonzero column.
func TestInitMixingFallback(t *testing.T) {
	y := lowRankTargets([][]float64{{1, 0}, {0, 1}}, 50, 0.1, 4)
	if _, ok := initMixing(&datasets.Dataset{Y: y}, 3); ok {
		t.Error("L = 3 > P = 2: want no start")
	}
	obs := mat.NewDense(50, 2, nil)
	for i := range 50 {
		obs.Set(i, 0, 1)
	}
	obs.Set(0, 1, 1)
	y1 := mat.DenseCopyOf(y)
	for i := 1; i < 50; i++ {
		y1.Set(i, 1, 0)
	}
	if _, ok := initMixing(&datasets.Dataset{Y: y1, Observed: obs}, 1); ok {
		t.Error("target 1 observed on one row: want no start")
	}
	if _, ok := initMixing(&datasets.Dataset{Y: mat.NewDense(5, 2, nil)}, 1); ok {
		t.Error("constant targets: want no start")
	}
	if _, ok := initMixing(nil, 1); ok {
		t.Error("no data: want no start")
	}
	rank1 := lowRankTargets([][]float64{{1}, {2}, {-1}}, 100, 0, 5)
	w, ok := initMixing(&datasets.Dataset{Y: rank1}, 2)
	if !ok {
		t.Fatal("rank-1 targets, L = 2: want a start")
	}
	if n := mat.Norm(w.ColView(1), 2); !(n > 0) {
		t.Errorf("rank-1 targets: the second latent's column has norm %g, want > 0 (the floor)", n)
	}
}

// TestMixOutputsStartsFromTargets: the LMC layer mixOutputs builds starts from initMixing's W when the targets
// give one, and from a random W otherwise (L > P).
func TestMixOutputsStartsFromTargets(t *testing.T) {
	fam, ok := gp.LookupKernel("se")
	if !ok {
		t.Fatal("no se kernel")
	}
	y := lowRankTargets([][]float64{{1, 0.3}, {0.8, -0.6}, {0.2, 1}}, 60, 0.1, 6)
	x := mat.NewDense(60, 1, nil)
	for i := range 60 {
		x.Set(i, 0, float64(i)/60)
	}
	tr := &datasets.Dataset{X: x, Y: y}
	for _, l := range []int{2, 4} {
		k, err := fam.New(gp.KernelOptions{InputDim: 1})
		if err != nil {
			t.Fatal(err)
		}
		block, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: mat.NewDense(5, 1, []float64{0, 0.2, 0.4, 0.6, 0.8}), OutputDim: l})
		if err != nil {
			t.Fatal(err)
		}
		layer, err := mixOutputs(block, CustomConfig{LMC: l}, 3, tr, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		lmc, ok := layer.(*layers.LMC)
		if !ok {
			t.Fatalf("L = %d: mixOutputs gave %T, want *layers.LMC", l, layer)
		}
		got := mat.NewDense(3, l, lmc.W.Value())
		want, ok := initMixing(tr, l)
		switch {
		case l <= 3 && (!ok || !mat.Equal(got, want)):
			t.Errorf("L = %d: W = %v, want initMixing's %v", l, mat.Formatted(got), mat.Formatted(want))
		case l > 3 && (ok || mat.Norm(got, 2) == 0):
			t.Errorf("L = %d > P: want a random nonzero W (initMixing ok = %v), got %v", l, ok, mat.Formatted(got))
		}
	}
}
