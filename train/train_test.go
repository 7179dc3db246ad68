package train_test

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// quadModel has loss Σ_b (x_b·w − y_b)² · (N/B) + λ‖w‖²: least squares, scaled to the full data set.
type quadModel struct {
	w      *graph.Param
	n      int
	lambda float64
}

func (m *quadModel) Loss(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	r := g.Sub(g.MatMul(x, g.Param(m.w), false, false), y)
	b := float64(x.Shape()[0])
	return g.Add(g.Scale(g.Dot(r, r), float64(m.n)/b), g.Scale(g.Dot(g.Param(m.w), g.Param(m.w)), m.lambda))
}

func (m *quadModel) Params() []*graph.Param { return []*graph.Param{m.w} }

func linearData(n int, w []float64, rng *rand.Rand) (*mat.Dense, *mat.Dense) {
	x := mat.NewDense(n, len(w), nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for j, wj := range w {
			v := rng.NormFloat64()
			x.Set(i, j, v)
			s += v * wj
		}
		y.Set(i, 0, s+0.01*rng.NormFloat64())
	}
	return x, y
}

func newQuad(t *testing.T, d, n int) *quadModel {
	t.Helper()
	w, err := graph.NewParam("w", make([]float64, d), nil, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	return &quadModel{w: w, n: n, lambda: 1e-3}
}

func TestTrainAdamConvergesAndIsReproducible(t *testing.T) {
	t.Parallel()
	x, y := linearData(103, []float64{1.5, -2, 0.5}, rand.New(rand.NewPCG(1, 1)))
	run := func() ([]float64, []float64) {
		m := newQuad(t, 3, 103)
		var buf bytes.Buffer
		res, err := train.Train(m, x, y, rand.New(rand.NewPCG(7, 7)), train.Config{
			Iters: 400, BatchSize: 10, // 103 = 10·10 + 3: batches straddle epochs
			Optimizer: &train.Adam{LR: 0.05},
			Logger:    slog.New(slog.NewTextHandler(&buf, nil)), LogEvery: 100,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Steps != 400 || len(res.Losses) != 400 {
			t.Fatalf("steps %d, losses %d", res.Steps, len(res.Losses))
		}
		if n := strings.Count(buf.String(), "msg=train"); n != 4 {
			t.Errorf("%d log records, want 4", n)
		}
		return res.Losses, m.w.Value()
	}
	l1, w1 := run()
	l2, w2 := run()
	for i := range l1 {
		if l1[i] != l2[i] {
			t.Fatalf("same seed, different loss at step %d: %v vs %v", i, l1[i], l2[i])
		}
	}
	for j, want := range []float64{1.5, -2, 0.5} {
		if w1[j] != w2[j] {
			t.Fatalf("same seed, different params")
		}
		if math.Abs(w1[j]-want) > 0.05 {
			t.Errorf("w[%d] = %v, want ≈ %v", j, w1[j], want)
		}
	}
}

func TestTrainLBFGSReachesMinimum(t *testing.T) {
	t.Parallel()
	x, y := linearData(50, []float64{0.3, 0.7}, rand.New(rand.NewPCG(2, 2)))
	m := newQuad(t, 2, 50)
	res, err := train.TrainLBFGS(m, x, y, train.LBFGSConfig{Iters: 50})
	if err != nil {
		t.Fatal(err)
	}
	// gonum asks for the objective and the gradient at a point by two calls: one run of the program must serve
	// both (the start and every iteration's point at least; twice as many runs before it did).
	if res.Steps == 0 || res.Evaluations < res.Steps+1 || res.Evaluations >= 2*(res.Steps+1) {
		t.Errorf("%d evaluations for %d iterations: want one per point tried, fewer than 2 per iteration", res.Evaluations, res.Steps)
	}
	// Closed form: (XᵀX + λI) w = Xᵀy.
	var a, b mat.Dense
	a.Mul(x.T(), x)
	for i := 0; i < 2; i++ {
		a.Set(i, i, a.At(i, i)+m.lambda)
	}
	b.Mul(x.T(), y)
	var w mat.Dense
	if err := w.Solve(&a, &b); err != nil {
		t.Fatal(err)
	}
	got := m.w.Value()
	for j := 0; j < 2; j++ {
		if math.Abs(got[j]-w.At(j, 0)) > 1e-6 {
			t.Errorf("w[%d] = %v, closed form %v", j, got[j], w.At(j, 0))
		}
	}
}

// logModel's loss log(p) has gradient 1/p > 0, so descent drives p through zero and the loss becomes NaN.
type logModel struct{ p *graph.Param }

func (m *logModel) Loss(x, _ *graph.Node) *graph.Node {
	g := x.Graph()
	return g.Add(g.Log(g.Param(m.p)), g.Scale(g.Sum(x), 0))
}
func (m *logModel) Params() []*graph.Param { return []*graph.Param{m.p} }

func TestTrainNonFiniteStopsAndRestores(t *testing.T) {
	t.Parallel()
	p, err := graph.NewParam("p", []float64{0.35}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &logModel{p: p}
	x, y := mat.NewDense(4, 1, nil), mat.NewDense(4, 1, nil)
	var seen []float64
	res, err := train.Train(m, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: 100,
		Optimizer: &train.Adam{LR: 0.1},
		Eval:      func(int) (map[string]float64, error) { seen = append(seen, p.Value()[0]); return nil, nil }, EvalEvery: 1})
	var nf *train.NonFiniteError
	if !errors.As(err, &nf) || !errors.Is(err, train.ErrNonFinite) {
		t.Fatalf("got %v, want a NonFiniteError", err)
	}
	if nf.Step != res.Steps {
		t.Errorf("error names step %d, but %d steps completed", nf.Step, res.Steps)
	}
	got := p.Value()[0]
	if !(got > 0) || math.IsNaN(got) {
		t.Errorf("params not restored to a good value: p = %v", got)
	}
	// The restored value is the one of the last finite step: the value before that step's update.
	if len(seen) < 2 || got != seen[len(seen)-2] {
		t.Errorf("restored p = %v, want the last good value %v (history %v)", got, seen[len(seen)-2], seen)
	}
}

type claimHook struct {
	p     *graph.Param
	calls int
	grads []float64
}

func (h *claimHook) Claims() []*graph.Param { return []*graph.Param{h.p} }
func (h *claimHook) AfterBackward(s *train.Step) error {
	h.calls++
	h.grads = append(h.grads[:0], s.Program.Grad(h.p)...)
	return nil
}

func TestTrainHooksClaimParams(t *testing.T) {
	t.Parallel()
	x, y := linearData(20, []float64{1, 1}, rand.New(rand.NewPCG(3, 3)))
	m := newQuad(t, 2, 20)
	h := &claimHook{p: m.w}
	if _, err := train.Train(m, x, y, rand.New(rand.NewPCG(1, 2)), train.Config{Iters: 5, Hooks: []train.Hook{h}}); err != nil {
		t.Fatal(err)
	}
	if h.calls != 5 || len(h.grads) != 2 || h.grads[0] == 0 {
		t.Errorf("hook calls %d, grads %v", h.calls, h.grads)
	}
	if w := m.w.Value(); w[0] != 0 || w[1] != 0 {
		t.Errorf("optimizer moved a claimed param: %v", w)
	}
}

func TestAdamGroups(t *testing.T) {
	t.Parallel()
	a, _ := graph.NewParam("a", []float64{1}, nil)
	b, _ := graph.NewParam("b", []float64{1}, nil)
	opt := &train.Adam{LR: 0.1, Groups: map[*graph.Param]float64{b: 0.01},
		Schedule: func(step int, base float64) float64 { return base / float64(step+1) }}
	if err := opt.Step(0, []*graph.Param{a, b}, [][]float64{{1}, {1}}); err != nil {
		t.Fatal(err)
	}
	// First Adam step moves by ≈ lr (bias-corrected m/√v = 1).
	if da, db := 1-a.Value()[0], 1-b.Value()[0]; math.Abs(da-0.1) > 1e-6 || math.Abs(db-0.01) > 1e-6 {
		t.Errorf("moves %v, %v; want 0.1, 0.01", da, db)
	}
	if err := opt.Step(1, []*graph.Param{a}, [][]float64{{1, 2}}); err == nil {
		t.Error("gradient of the wrong size accepted")
	}
}

func TestTrainConfigErrors(t *testing.T) {
	t.Parallel()
	x, y := linearData(5, []float64{1}, rand.New(rand.NewPCG(4, 4)))
	m := newQuad(t, 1, 5)
	rng := rand.New(rand.NewPCG(1, 1))
	for name, c := range map[string]train.Config{"no iters": {}, "batch too big": {Iters: 1, BatchSize: 6}, "negative batch": {Iters: 1, BatchSize: -1}} {
		if _, err := train.Train(m, x, y, rng, c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := train.Train(m, x, mat.NewDense(4, 1, nil), rng, train.Config{Iters: 1}); err == nil {
		t.Error("x/y row mismatch accepted")
	}
	if _, err := train.Train(nil, x, y, rng, train.Config{Iters: 1}); err == nil {
		t.Error("nil model accepted")
	}
	if _, err := train.TrainLBFGS(m, x, y, train.LBFGSConfig{}); err == nil {
		t.Error("L-BFGS without iters accepted")
	}
}

// TestTrainLBFGSRestoresOnError: a loss that is NaN from the start makes TrainLBFGS fail, and the Params are
// left as they were at the call.
func TestTrainLBFGSRestoresOnError(t *testing.T) {
	t.Parallel()
	x, y := linearData(20, []float64{0.3, 0.7}, rand.New(rand.NewPCG(2, 3)))
	y.Set(4, 0, math.NaN())
	m := newQuad(t, 2, 20)
	if err := m.w.Set([]float64{0.25, -0.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := train.TrainLBFGS(m, x, y, train.LBFGSConfig{Iters: 10}); err == nil {
		t.Fatal("NaN target: want an error")
	}
	if got := m.w.Value(); got[0] != 0.25 || got[1] != -0.5 {
		t.Errorf("Params after a failed L-BFGS %v, want [0.25 -0.5]", got)
	}
}
