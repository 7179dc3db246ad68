package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// Helpers of this file are prefixed gr (growth).

const (
	grMa, grMb, grD = 12, 6, 2
	grN, grBatch    = 64, 8
)

func grData() (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(11, 12))
	x := mat.NewDense(grN, grD, nil)
	y := mat.NewDense(grN, 1, nil)
	for i := 0; i < grN; i++ {
		a, b := 4*rng.Float64()-2, 4*rng.Float64()-2
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y.Set(i, 0, math.Sin(2*a)+math.Cos(b)+0.1*rng.NormFloat64())
	}
	return x, y
}

// grBases returns distinct initial bases away from the data ([−2,2]²), so placed rows are recognisable.
func grBases(m int, off float64) *mat.Dense {
	z := mat.NewDense(m, grD, nil)
	for i := 0; i < m; i++ {
		z.Set(i, 0, off+0.7*float64(i))
		z.Set(i, 1, -off-0.3*float64(i))
	}
	return z
}

func grModel(t *testing.T, mb int) (*layers.Decoupled, *models.SVGP) {
	t.Helper()
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: grD, Variance: 1, Lengthscales: []float64{0.8, 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: k, Zalpha: grBases(grMa, 3), Zbeta: grBases(mb, 3.2)})
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: grN})
	if err != nil {
		t.Fatal(err)
	}
	return l, m
}

func grGrowth(t *testing.T, l *layers.Decoupled, start, delta int) *train.BasisGrowth {
	t.Helper()
	h, err := train.NewBasisGrowth(train.BasisGrowthConfig{Zalpha: l.Zalpha, Zbeta: l.Zbeta, A: l.A, LB: l.LB, Start: start, NDelta: delta})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// grObserver records, at every step, the minibatch and the bases as the optimizer will see them.
type grObserver struct {
	batches    [][]float64
	za, zb, a  [][]float64
	active     [][2]int
	growth     *train.BasisGrowth
	l          *layers.Decoupled
	gradA      [][]float64
	gradZalpha [][]float64
}

func (o *grObserver) Claims() []*graph.Param { return nil }

func (o *grObserver) AfterBackward(s *train.Step) error {
	o.batches = append(o.batches, slices.Clone(s.Program.InputData("x")))
	o.za = append(o.za, slices.Clone(o.l.Zalpha.Raw()))
	o.zb = append(o.zb, slices.Clone(o.l.Zbeta.Raw()))
	o.a = append(o.a, slices.Clone(o.l.A.Raw()))
	o.gradA = append(o.gradA, slices.Clone(s.Program.Grad(o.l.A)))
	o.gradZalpha = append(o.gradZalpha, slices.Clone(s.Program.Grad(o.l.Zalpha)))
	ka, kb := o.growth.Active()
	o.active = append(o.active, [2]int{ka, kb})
	return nil
}

func grRow(v []float64, i, cols int) []float64 { return v[i*cols : (i+1)*cols] }

// grChanged counts the rows of v that differ from init.
func grChanged(v, init []float64, cols int) int {
	n := 0
	for i := 0; i < len(v)/cols; i++ {
		if !slices.Equal(grRow(v, i, cols), grRow(init, i, cols)) {
			n++
		}
	}
	return n
}

func TestBasisGrowthSchedule(t *testing.T) {
	t.Parallel()
	const start, delta, iters = 3, 3, 8
	x, y := grData()
	l, m := grModel(t, grMb)
	initA := slices.Clone(l.Zalpha.Raw())
	initB := slices.Clone(l.Zbeta.Raw())
	h := grGrowth(t, l, start, delta)
	if ka, kb := h.Active(); ka != 3 || kb != 3 {
		t.Fatalf("Active before training = %d, %d; want 3, 3", ka, kb)
	}
	floor := graph.DefaultPositiveFloor
	checkInactive := func(when string, kb int) {
		for p, lb := range l.LB {
			v := lb.Value()
			for i := kb; i < grMb; i++ {
				for j := 0; j < grMb; j++ {
					want := 0.0
					if i == j {
						want = floor
					}
					if v[i*grMb+j] != want || v[j*grMb+i] != 0 && j != i {
						t.Fatalf("%s: LB%d[%d,%d] = %g, [%d,%d] = %g; want %g and 0", when, p, i, j, v[i*grMb+j], j, i, v[j*grMb+i], want)
					}
				}
			}
		}
	}
	checkInactive("construction", 3)
	obs := &grObserver{growth: h, l: l}
	kAt := func(t, m int) int { return min(m, start+t*delta) }
	var after [][]float64 // Zalpha after every step
	var afterB, afterA [][]float64
	res, err := train.Train(m, x, y, rand.New(rand.NewPCG(5, 6)), train.Config{
		Iters: iters, BatchSize: grBatch, Optimizer: &train.Adam{LR: 0.05}, Hooks: []train.Hook{h, obs}, EvalEvery: 1,
		Eval: func(step int) (map[string]float64, error) {
			after = append(after, slices.Clone(l.Zalpha.Raw()))
			afterB = append(afterB, slices.Clone(l.Zbeta.Raw()))
			afterA = append(afterA, slices.Clone(l.A.Raw()))
			checkInactive("after step "+string(rune('0'+step-1)), kAt(step-1, grMb))
			return nil, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Losses {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("loss %d = %g", i, v)
		}
	}
	t.Logf("losses %.4g", res.Losses)
	for s := 0; s < iters; s++ {
		ka, kb := kAt(s, grMa), kAt(s, grMb)
		fa, fb := ka, kb // active in the forward pass of step s
		if s > 0 {
			fa, fb = kAt(s-1, grMa), kAt(s-1, grMb)
		}
		if got := obs.active[s]; got != [2]int{ka, kb} {
			t.Errorf("step %d: Active = %v, want [%d %d]", s, got, ka, kb)
		}
		// The number of non-initial rows is the active count. Exception: the Start mean bases keep their initial
		// rows (the hook does not place them) and cannot move at step 0, where a = 0 makes ∂loss/∂α = 0.
		wantA := ka
		if s == 0 {
			wantA = 0
		}
		if n := grChanged(after[s], initA, grD); n != wantA {
			t.Errorf("after step %d: %d non-initial mean bases, want %d", s, n, wantA)
		}
		if n := grChanged(afterB[s], initB, grD); n != kb {
			t.Errorf("after step %d: %d non-initial covariance bases, want %d", s, n, kb)
		}
		// Bases placed at step s are on the rows of step s's minibatch, mean and covariance on the same rows.
		for i := fa; i < ka; i++ {
			want := grRow(obs.batches[s], (i-fa)%grBatch, grD)
			if got := grRow(obs.za[s], i, grD); !slices.Equal(got, want) {
				t.Errorf("step %d: new mean basis %d = %v, want batch row %v", s, i, got, want)
			}
			// Frozen at their activation step: the optimizer leaves the placed value.
			if got := grRow(after[s], i, grD); !slices.Equal(got, want) {
				t.Errorf("after step %d: new mean basis %d = %v moved from %v", s, i, got, want)
			}
		}
		for i := fb; i < kb; i++ {
			want := grRow(obs.batches[s], (i-fb)%grBatch, grD)
			if got := grRow(obs.zb[s], i, grD); !slices.Equal(got, want) {
				t.Errorf("step %d: new covariance basis %d = %v, want batch row %v", s, i, got, want)
			}
		}
		// Rows of a of bases inactive in the forward pass (so also not yet active) are exactly 0, gradients too.
		for i := fa; i < grMa; i++ {
			if r := grRow(afterA[s], i, 1); r[0] != 0 {
				t.Errorf("after step %d: a[%d] = %g, want 0", s, i, r[0])
			}
			if g := obs.gradA[s][i]; g != 0 {
				t.Errorf("step %d: gradient of a[%d] = %g, want 0 (masked)", s, i, g)
			}
		}
		for i := fa * grD; i < grMa*grD; i++ {
			if g := obs.gradZalpha[s][i]; g != 0 {
				t.Errorf("step %d: gradient of Zalpha entry %d = %g, want 0 (masked)", s, i, g)
			}
		}
		// Inactive rows keep their initial values.
		for i := ka; i < grMa; i++ {
			if !slices.Equal(grRow(after[s], i, grD), grRow(initA, i, grD)) {
				t.Errorf("after step %d: inactive mean basis %d changed", s, i)
			}
		}
		// Active bases that were active in the forward pass have nonzero weight gradients (they train).
		for i := 0; i < fa; i++ {
			if obs.gradA[s][i] == 0 {
				t.Errorf("step %d: active a[%d] has a zero gradient", s, i)
			}
		}
	}
	// Every base placed at least two steps before the end moved away from its placement (a_i moves at the step
	// after placement, α_i from the next: its gradient is proportional to a_i).
	last := after[iters-1]
	for s := 0; s <= iters-3; s++ {
		fa, fb := start, start
		if s > 0 {
			fa, fb = kAt(s-1, grMa), kAt(s-1, grMb)
		}
		for i := fa; i < kAt(s, grMa); i++ {
			if slices.Equal(grRow(last, i, grD), grRow(obs.za[s], i, grD)) {
				t.Errorf("mean basis %d placed at step %d never moved", i, s)
			}
			if afterA[iters-1][i] == 0 {
				t.Errorf("a[%d] (placed at step %d) still 0", i, s)
			}
		}
		for i := fb; i < kAt(s, grMb); i++ {
			if slices.Equal(grRow(afterB[iters-1], i, grD), grRow(obs.zb[s], i, grD)) {
				t.Errorf("covariance basis %d placed at step %d never moved", i, s)
			}
		}
	}
	// The Start bases moved as well.
	for i := 0; i < start; i++ {
		if slices.Equal(grRow(last, i, grD), grRow(initA, i, grD)) {
			t.Errorf("initial mean basis %d never moved", i)
		}
	}
	// Activated factors of B got their construction diagonal back (DefaultLBScale, then trained).
	v := l.LB[0].Value()
	for i := 0; i < grMb; i++ {
		if d := v[i*grMb+i]; d < 0.01 {
			t.Errorf("LB0[%d,%d] = %g after full growth: not restored", i, i, d)
		}
	}
}

// Start = Mα ≥ Mβ: the hook never writes, so training is bit-for-bit that without it.
func TestBasisGrowthFullStartIsNoOp(t *testing.T) {
	t.Parallel()
	x, y := grData()
	run := func(hook bool) ([]float64, [][]float64) {
		l, m := grModel(t, grMb)
		var hooks []train.Hook
		if hook {
			hooks = append(hooks, grGrowth(t, l, grMa, 3))
		}
		res, err := train.Train(m, x, y, rand.New(rand.NewPCG(5, 6)), train.Config{Iters: 6, BatchSize: grBatch, Optimizer: &train.Adam{LR: 0.05}, Hooks: hooks})
		if err != nil {
			t.Fatal(err)
		}
		var raws [][]float64
		for _, p := range m.Params() {
			raws = append(raws, slices.Clone(p.Raw()))
		}
		return res.Losses, raws
	}
	l0, p0 := run(false)
	l1, p1 := run(true)
	if !slices.Equal(l0, l1) {
		t.Errorf("losses differ: %v vs %v", l0, l1)
	}
	for i := range p0 {
		if !slices.Equal(p0[i], p1[i]) {
			t.Errorf("param %d differs after training", i)
		}
	}
}

// grEval returns the predictive means and variances at x and the KL of l.
func grEval(t *testing.T, l *layers.Decoupled, x *mat.Dense) (mu, va []float64, kl float64) {
	t.Helper()
	m, v, err := models.PredictLayer(l, x, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
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
	return m.RawMatrix().Data, v.RawMatrix().Data, prog.Output("kl")[0]
}

// Inactive covariance bases (L_B rows floor·e_iᵀ) change σ² and KL by O(floor²) against the layer restricted
// to the active covariance bases.
func TestBasisGrowthInactiveCovBasesNegligible(t *testing.T) {
	t.Parallel()
	const k = 3
	x, _ := grData()
	rng := rand.New(rand.NewPCG(21, 22))
	// A trained-looking state of the active part: random a and a random lower-triangular active block.
	a := make([]float64, grMa)
	for i := range a {
		a[i] = 2*rng.Float64() - 1
	}
	lbk := make([]float64, k*k)
	for i := 0; i < k; i++ {
		for j := 0; j < i; j++ {
			lbk[i*k+j] = 0.5 * (2*rng.Float64() - 1)
		}
		lbk[i*k+i] = 0.3 + rng.Float64()
	}
	full, _ := grModel(t, grMb)
	small, _ := grModel(t, k) // grBases(k, ·) is the first k rows of grBases(grMb, ·)
	for _, l := range []*layers.Decoupled{full, small} {
		if err := l.A.Set(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := small.LB[0].Set(lbk); err != nil {
		t.Fatal(err)
	}
	lbf := make([]float64, grMb*grMb)
	for i := 0; i < grMb; i++ {
		for j := 0; j <= i; j++ {
			if i < k {
				lbf[i*grMb+j] = lbk[i*k+j]
			} else if i == j {
				lbf[i*grMb+j] = 0.7 // junk, reset by the hook
			} else {
				lbf[i*grMb+j] = 0.2
			}
		}
	}
	if err := full.LB[0].Set(lbf); err != nil {
		t.Fatal(err)
	}
	grGrowth(t, full, k, 3) // puts rows/cols ≥ k of L_B at the floor (and a rows ≥ k at 0: Start applies to both)
	// Keep a for both layers: restrict the comparison to the covariance side.
	if err := full.A.Set(a); err != nil {
		t.Fatal(err)
	}
	mf, vf, kf := grEval(t, full, x)
	ms, vs, ks := grEval(t, small, x)
	var dm, dv float64
	for i := range mf {
		dm = math.Max(dm, math.Abs(mf[i]-ms[i]))
		dv = math.Max(dv, math.Abs(vf[i]-vs[i]))
	}
	dk := math.Abs(kf - ks)
	t.Logf("floor %g: max |Δμ| = %.3g, max |Δσ²| = %.3g, |ΔKL| = %.3g (KL %.6g)", graph.DefaultPositiveFloor, dm, dv, dk, ks)
	if dm != 0 {
		t.Errorf("means differ by %g", dm)
	}
	if tol := 1e-10; dv > tol || dk > tol {
		t.Errorf("inactive covariance bases changed σ² by %g and KL by %g (tolerance %g)", dv, dk, tol)
	}
}

func TestBasisGrowthConfigErrors(t *testing.T) {
	t.Parallel()
	l, _ := grModel(t, grMb)
	for _, c := range []train.BasisGrowthConfig{
		{Zbeta: l.Zbeta},
		{Zalpha: l.Zalpha, Zbeta: l.Zbeta, NDelta: -1},
		{Zalpha: l.Zalpha, Zbeta: l.Zbeta, Start: -2},
		{Zalpha: l.Zalpha, Zbeta: l.Zbeta, LB: []*graph.Param{l.A}},
		{Zalpha: l.Zalpha, Zbeta: l.Zbeta, A: l.LB[0]},
	} {
		if _, err := train.NewBasisGrowth(c); err == nil {
			t.Errorf("%+v: no error", c)
		} else if !errors.Is(err, train.ErrGrowthConfig) {
			t.Logf("%+v: %v", c, err) // shape errors are *ops.ShapeError
		}
	}
}
