package ops_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestCholeskyGrad(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 5, 8} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 5))
			gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return ops.Cholesky(in[0], ops.JitterPolicy{})
			}, []gradcheck.Input{gradcheck.SPD("a", rng, n)})
		})
	}
}

// TestCholeskyGradNonSymmetric checks the gradient at a non-symmetric input: the op factorises (A+Aᵀ)/2, so the
// gradient with respect to each single entry A_ij is the symmetric one.
func TestCholeskyGradNonSymmetric(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	in := gradcheck.SPD("a", rng, 5)
	for i := range in.Value {
		in.Value[i] += 0.3 * (rng.Float64() - 0.5)
	}
	gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return ops.Cholesky(in[0], ops.JitterPolicy{})
	}, []gradcheck.Input{in})
}

// TestCholeskyLogDetSolveGrad checks the composition used by a GP marginal likelihood:
// ½ log det K + ½ bᵀK⁻¹b written as LogDetChol(Cholesky(K)) and CholSolve(Cholesky(K), b).
func TestCholeskyLogDetSolveGrad(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(10, 10))
	gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		l, err := ops.Cholesky(in[0], ops.JitterPolicy{})
		if err != nil {
			return nil, err
		}
		ld, err := ops.LogDetChol(l)
		if err != nil {
			return nil, err
		}
		x, err := ops.CholSolve(l, in[1])
		if err != nil {
			return nil, err
		}
		q, err := ops.Dot(x, in[1])
		if err != nil {
			return nil, err
		}
		return G.Add(ld, q)
	}, []gradcheck.Input{gradcheck.SPD("k", rng, 6), gradcheck.Random("b", rng, -1, 1, 6)})
}

func spd(rng *rand.Rand, n int) []float64 { return gradcheck.SPD("a", rng, n).Value }

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// llt returns L·Lᵀ for a row-major n×n L.
func llt(l []float64, n int) []float64 {
	lm := mat.NewDense(n, n, l)
	var p mat.Dense
	p.Mul(lm, lm.T())
	return p.RawMatrix().Data
}

func TestCholeskyGolden(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 5, 8, 70, 150} { // > 64 exercises gonum's blocked dpotrf
		rng := rand.New(rand.NewPCG(uint64(n), 77))
		a := spd(rng, n)
		l := make([]float64, n*n)
		info, err := ops.CholeskyLower(l, a, n, ops.JitterPolicy{})
		if err != nil || info.Retries != 0 || info.Jitter != 0 {
			t.Fatalf("n=%d: CholeskyLower: %+v, %v", n, info, err)
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if l[i*n+j] != 0 {
					t.Fatalf("n=%d: upper entry (%d,%d) = %g, want 0", n, i, j, l[i*n+j])
				}
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(n, append([]float64(nil), a...))) {
			t.Fatalf("n=%d: gonum Factorize failed", n)
		}
		var lt mat.TriDense
		ch.LTo(&lt)
		scale := maxAbs(a)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if d := math.Abs(l[i*n+j] - lt.At(i, j)); d > 1e-12*math.Sqrt(scale) {
					t.Fatalf("n=%d: L[%d,%d] = %g, gonum %g", n, i, j, l[i*n+j], lt.At(i, j))
				}
			}
		}
		p := llt(l, n)
		for i := range a {
			if d := math.Abs(p[i] - a[i]); d > 1e-12*scale {
				t.Fatalf("n=%d: (L·Lᵀ)[%d] = %.17g, A = %.17g (diff %g)", n, i, p[i], a[i], d)
			}
		}
		// A non-symmetric input is symmetrised: same factor as (A+Aᵀ)/2.
		b := append([]float64(nil), a...)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				e := rng.Float64() - 0.5
				b[i*n+j] += e
				b[j*n+i] -= e
			}
		}
		l2 := make([]float64, n*n)
		if _, err := ops.CholeskyLower(l2, b, n, ops.JitterPolicy{}); err != nil {
			t.Fatal(err)
		}
		for i := range l {
			if math.Abs(l[i]-l2[i]) > 1e-12*math.Sqrt(scale) {
				t.Fatalf("n=%d: non-symmetric input: L[%d] = %g, want %g", n, i, l2[i], l[i])
			}
		}
		// dst may alias a.
		c := append([]float64(nil), a...)
		if _, err := ops.CholeskyLower(c, c, n, ops.JitterPolicy{}); err != nil {
			t.Fatal(err)
		}
		for i := range l {
			if c[i] != l[i] {
				t.Fatalf("n=%d: in place: L[%d] = %g, want %g", n, i, c[i], l[i])
			}
		}
	}
}

func TestCholeskyNotPD(t *testing.T) {
	t.Parallel()
	a := []float64{1, 2, 0, 2, 1, 0, 0, 0, 3} // eigenvalues −1, 3, 3: far from PD
	for _, tc := range []struct {
		maxTries, wantTries int
		initial             float64
	}{{0, 1 + ops.DefaultMaxJitterTries, 0}, {3, 4, 1e-4}, {-1, 1, 0}} {
		var st ops.CholeskyStats
		l := make([]float64, 9)
		info, err := ops.CholeskyLower(l, a, 3, ops.JitterPolicy{Initial: tc.initial, MaxTries: tc.maxTries, Stats: &st})
		var npd *ops.NotPDError
		if !errors.As(err, &npd) || !errors.Is(err, ops.ErrNotPD) {
			t.Fatalf("MaxTries=%d: err = %v, want *NotPDError", tc.maxTries, err)
		}
		if npd.N != 3 || npd.Tries != tc.wantTries || info.Retries != tc.wantTries-1 {
			t.Fatalf("MaxTries=%d: %+v, info %+v, want Tries=%d", tc.maxTries, *npd, info, tc.wantTries)
		}
		init := tc.initial
		if init == 0 {
			init = ops.DefaultJitter
		}
		mean := (1 + 1 + 3) / 3.0
		wantJ := 0.0
		if tc.wantTries > 1 {
			wantJ = init * math.Pow(10, float64(tc.wantTries-2)) * mean
		}
		if math.Abs(npd.MaxJitter-wantJ) > 1e-12*wantJ {
			t.Fatalf("MaxTries=%d: MaxJitter = %g, want %g", tc.maxTries, npd.MaxJitter, wantJ)
		}
		s := st.Snapshot()
		want := ops.CholeskyStatsSnapshot{Calls: 1, Retries: int64(tc.wantTries - 1), Failures: 1, LastJitter: npd.MaxJitter, MaxJitter: npd.MaxJitter}
		if s != want {
			t.Fatalf("MaxTries=%d: stats %+v, want %+v", tc.maxTries, s, want)
		}
	}
}

func TestCholeskyNonFinite(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct {
		row, col int
		v        float64
	}{{2, 1, math.NaN()}, {1, 3, math.NaN()}, {3, 3, math.Inf(-1)}, {0, 0, math.Inf(1)}, {3, 0, math.Inf(1)}} {
		a := spd(rng, 4)
		a[tc.row*4+tc.col] = tc.v
		var st ops.CholeskyStats
		_, err := ops.CholeskyLower(make([]float64, 16), a, 4, ops.JitterPolicy{Stats: &st})
		var nf *ops.NonFiniteError
		if !errors.As(err, &nf) || !errors.Is(err, ops.ErrNonFinite) {
			t.Fatalf("%v at (%d,%d): err = %v, want *NonFiniteError", tc.v, tc.row, tc.col, err)
		}
		if nf.Row != tc.row || nf.Col != tc.col || nf.Where != "Cholesky input" || !(math.IsNaN(tc.v) && math.IsNaN(nf.Value) || nf.Value == tc.v) {
			t.Fatalf("%v at (%d,%d): got %+v", tc.v, tc.row, tc.col, *nf)
		}
		if s := st.Snapshot(); s.Calls != 1 || s.Failures != 1 || s.Retries != 0 {
			t.Fatalf("stats %+v: want 1 failed call without retries (no jitter on non-finite input)", s)
		}
	}
}

// nearlyPSD returns a 2×2 indefinite matrix (eigenvalues ≈ 2 and −5e-10) that 1e-8·mean(diag) jitter makes PD.
func nearlyPSD() []float64 { return []float64{1, 1, 1, 1 - 1e-9} }

func TestCholeskyJitterRescue(t *testing.T) {
	t.Parallel()
	a := nearlyPSD()
	if _, err := ops.CholeskyLower(make([]float64, 4), a, 2, ops.JitterPolicy{MaxTries: -1}); err == nil {
		t.Fatal("the test matrix factorises without jitter")
	}
	var st ops.CholeskyStats
	l := make([]float64, 4)
	info, err := ops.CholeskyLower(l, a, 2, ops.JitterPolicy{Stats: &st})
	if err != nil {
		t.Fatal(err)
	}
	if info.Retries < 1 || !(info.Jitter > 0) || info.Jitter > 1e-6 {
		t.Fatalf("info %+v: want Retries > 0 and a small Jitter > 0", info)
	}
	p := llt(l, 2)
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			want := a[i*2+j]
			if i == j {
				want += info.Jitter
			}
			if math.Abs(p[i*2+j]-want) > 1e-14 {
				t.Fatalf("(L·Lᵀ)[%d,%d] = %.17g, want A + jitter = %.17g", i, j, p[i*2+j], want)
			}
		}
	}
	if s := st.Snapshot(); s.Calls != 1 || s.Retries != int64(info.Retries) || s.Failures != 0 || s.LastJitter != info.Jitter || s.MaxJitter != info.Jitter {
		t.Fatalf("stats %+v, info %+v", s, info)
	}

	// Through the graph op: the op records into the policy's Stats.
	var gs ops.CholeskyStats
	g := G.NewGraph()
	an := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("a"), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(nearlyPSD()))))
	ln, err := ops.Cholesky(an, ops.JitterPolicy{Stats: &gs})
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if got := ln.Value().Data().([]float64); math.Abs(got[0]-l[0]) > 0 || math.Abs(got[3]-l[3]) > 0 {
		t.Fatalf("graph L = %v, plain %v", got, l)
	}
	if s := gs.Snapshot(); s.Calls != 1 || s.Retries < 1 || !(s.LastJitter > 0) || s.MaxJitter != s.LastJitter {
		t.Fatalf("graph op stats %+v: want one call with retries and jitter", s)
	}
}

// TestCholeskyGraphNotPD runs a TapeMachine on a not-PD input. gorgonia v0.9.18 wraps op errors first with
// pkg/errors (which supports Unwrap) and then in its vmContextualError struct (which does NOT), so errors.As on the
// raw error fails; ops.UnwrapVM restores the chain.
func TestCholeskyGraphNotPD(t *testing.T) {
	t.Parallel()
	var st ops.CholeskyStats
	g := G.NewGraph()
	an := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 3), G.WithName("a"),
		G.WithValue(tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{1, 2, 0, 2, 1, 0, 0, 0, 3}))))
	if _, err := ops.Cholesky(an, ops.JitterPolicy{MaxTries: 2, Stats: &st}); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	err := vm.RunAll()
	if err == nil {
		t.Fatal("RunAll on a not-PD input succeeded")
	}
	var npd *ops.NotPDError
	if errors.As(err, &npd) {
		t.Logf("errors.As sees *NotPDError through the raw VM error (gorgonia now unwraps): %v", err)
	} else {
		t.Logf("errors.As does not see through the raw VM error %T: use ops.UnwrapVM", err)
	}
	npd = nil
	if !errors.As(ops.UnwrapVM(err), &npd) || !errors.Is(ops.UnwrapVM(err), ops.ErrNotPD) {
		t.Fatalf("errors.As(UnwrapVM(%v)) did not find *NotPDError", err)
	}
	if npd.Tries != 3 || npd.N != 3 {
		t.Fatalf("%+v: want Tries = 3, N = 3", *npd)
	}
	if s := st.Snapshot(); s.Calls != 1 || s.Retries != 2 || s.Failures != 1 {
		t.Fatalf("stats %+v", s)
	}
	if ops.UnwrapVM(nil) != nil {
		t.Fatal("UnwrapVM(nil) != nil")
	}
}

func TestCholeskyStatsConcurrent(t *testing.T) {
	t.Parallel()
	var st ops.CholeskyStats
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_, _ = ops.CholeskyLower(make([]float64, 4), nearlyPSD(), 2, ops.JitterPolicy{Stats: &st})
			}
		}()
	}
	wg.Wait()
	s := st.Snapshot()
	if s.Calls != 400 || s.Failures != 0 || s.Retries < 400 || !(s.MaxJitter > 0) {
		t.Fatalf("stats %+v", s)
	}
	st.Reset()
	if s := st.Snapshot(); s != (ops.CholeskyStatsSnapshot{}) {
		t.Fatalf("after Reset: %+v", s)
	}
	var nilStats *ops.CholeskyStats
	_ = nilStats.Snapshot()
}

func TestCholeskyLowerBadLength(t *testing.T) {
	t.Parallel()
	_, err := ops.CholeskyLower(make([]float64, 4), make([]float64, 3), 2, ops.JitterPolicy{})
	var se *ops.ShapeError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *ShapeError", err)
	}
}

// noPanic runs build and fails t if it panics or does not return a *ShapeError.
func wantShapeError(t *testing.T, name string, build func() (*G.Node, error)) {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panicked: %v", name, r)
			}
		}()
		_, err = build()
	}()
	var se *ops.ShapeError
	if !errors.As(err, &se) || !errors.Is(err, ops.ErrShape) {
		t.Errorf("%s: err = %v, want *ShapeError", name, err)
	}
}

func TestLinalgShapeErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	m := func(name string, r, c int) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name))
	}
	v := func(name string, n int) *G.Node {
		return G.NewVector(g, tensor.Float64, G.WithShape(n), G.WithName(name))
	}
	sq, rect, v3, v4, s := m("sq", 3, 3), m("rect", 3, 4), v("v3", 3), v("v4", 4), G.NewScalar(g, tensor.Float64, G.WithName("s"))
	b43, t3 := m("b43", 4, 3), G.NewTensor(g, tensor.Float64, 3, G.WithShape(3, 3, 3), G.WithName("t3"))
	f32 := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 3), G.WithName("f32"))
	cases := map[string]func() (*G.Node, error){
		"Cholesky(rect)":        func() (*G.Node, error) { return ops.Cholesky(rect, ops.JitterPolicy{}) },
		"Cholesky(vector)":      func() (*G.Node, error) { return ops.Cholesky(v3, ops.JitterPolicy{}) },
		"Cholesky(scalar)":      func() (*G.Node, error) { return ops.Cholesky(s, ops.JitterPolicy{}) },
		"Cholesky(3-D)":         func() (*G.Node, error) { return ops.Cholesky(t3, ops.JitterPolicy{}) },
		"Cholesky(nil)":         func() (*G.Node, error) { return ops.Cholesky(nil, ops.JitterPolicy{}) },
		"Cholesky(float32)":     func() (*G.Node, error) { return ops.Cholesky(f32, ops.JitterPolicy{}) },
		"TriSolve(rect,b)":      func() (*G.Node, error) { return ops.TriSolve(rect, sq, false, false) },
		"TriSolve(sq,b43)":      func() (*G.Node, error) { return ops.TriSolve(sq, b43, true, false) },
		"TriSolve(sq,v4)":       func() (*G.Node, error) { return ops.TriSolve(sq, v4, false, true) },
		"TriSolve(sq,scalar)":   func() (*G.Node, error) { return ops.TriSolve(sq, s, false, false) },
		"TriSolve(sq,3-D)":      func() (*G.Node, error) { return ops.TriSolve(sq, t3, false, false) },
		"TriSolve(sq,nil)":      func() (*G.Node, error) { return ops.TriSolve(sq, nil, false, false) },
		"CholSolve(rect,b)":     func() (*G.Node, error) { return ops.CholSolve(rect, sq) },
		"CholSolve(sq,b43)":     func() (*G.Node, error) { return ops.CholSolve(sq, b43) },
		"CholSolve(sq,v4)":      func() (*G.Node, error) { return ops.CholSolve(sq, v4) },
		"CholSolve(vector,v3)":  func() (*G.Node, error) { return ops.CholSolve(v3, v3) },
		"LogDetChol(rect)":      func() (*G.Node, error) { return ops.LogDetChol(rect) },
		"LogDetChol(vector)":    func() (*G.Node, error) { return ops.LogDetChol(v3) },
		"AddDiag(rect,s)":       func() (*G.Node, error) { return ops.AddDiag(rect, s) },
		"AddDiag(sq,v4)":        func() (*G.Node, error) { return ops.AddDiag(sq, v4) },
		"AddDiag(sq,matrix)":    func() (*G.Node, error) { return ops.AddDiag(sq, sq) },
		"AddDiag(vector,s)":     func() (*G.Node, error) { return ops.AddDiag(v3, s) },
		"AddDiag(sq,nil)":       func() (*G.Node, error) { return ops.AddDiag(sq, nil) },
		"DiagPart(rect)":        func() (*G.Node, error) { return ops.DiagPart(rect) },
		"DiagPart(vector)":      func() (*G.Node, error) { return ops.DiagPart(v3) },
		"DiagPart(scalar)":      func() (*G.Node, error) { return ops.DiagPart(s) },
		"DiagPart(nil)":         func() (*G.Node, error) { return ops.DiagPart(nil) },
		"TriSolve(b43^T...)4x3": func() (*G.Node, error) { return ops.TriSolve(b43, b43, false, true) },
	}
	for name, build := range cases {
		wantShapeError(t, name, build)
	}
}
