package ops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// softmaxProblem is a 1-D problem with c classes: inputs on [0, 4), K (SE, variance 1.3, length-scale 0.8, jitter
// 1e-6) and labels from the class whose sin(x + shift) is largest, with noise.
func softmaxProblem(rng *rand.Rand, n, c int) (k, y []float64) {
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = 4 * rng.Float64()
		best, bi := math.Inf(-1), 0
		for a := 0; a < c; a++ {
			if v := math.Sin(x[i]+2*math.Pi*float64(a)/float64(c)) + 0.4*rng.NormFloat64(); v > best {
				best, bi = v, a
			}
		}
		y[i] = float64(bi)
	}
	return seK(x, 1, 1.3, 0.8, 1e-6), y
}

// TestSoftmaxLaplaceGradient checks SoftmaxLaplaceLML's gradient in K against central finite differences, for 2, 3
// and 4 classes.
func TestSoftmaxLaplaceGradient(t *testing.T) {
	t.Parallel()
	for _, c := range []int{2, 3, 4} {
		rng := rand.New(rand.NewPCG(11, uint64(c)))
		const n = 7
		k, y := softmaxProblem(rng, n, c)
		build := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return ops.SoftmaxLaplaceLML(c, ops.LaplaceOptions{Cold: true}, in[0], in[1])
		}
		worst := gradcheck.Check(t, build, []gradcheck.Input{{Name: "K", Shape: []int{n, n}, Value: k},
			{Name: "y", Shape: []int{n, 1}, Value: y, NoGrad: true}})
		t.Logf("C = %d: largest relative error %.2g", c, worst)
	}
}

// TestSoftmaxLaplaceTwoClasses: with two classes only g = f₁ − f₀ ~ GP(0, 2K) meets the data, and the softmax is
// the logistic σ(g), so the Laplace approximation (invariant under the linear change of variables) equals the
// binary logistic one with kernel 2K: log q(y), its gradient in K (twice the binary's in its kernel), and the
// predictive mean and variance of g at test inputs, to 1e-8 relative.
func TestSoftmaxLaplaceTwoClasses(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	const n, m = 25, 6
	x := make([]float64, n+m)
	for i := range x {
		x[i] = 4 * rng.Float64()
	}
	kall := seK(x, 1, 1.1, 0.7, 1e-6)
	k, k2 := make([]float64, n*n), make([]float64, n*n)
	kxs, kxs2, kss, kss2 := make([]float64, n*m), make([]float64, n*m), make([]float64, m), make([]float64, m)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			k[i*n+j], k2[i*n+j] = kall[i*(n+m)+j], 2*kall[i*(n+m)+j]
		}
		for p := 0; p < m; p++ {
			kxs[i*m+p], kxs2[i*m+p] = kall[i*(n+m)+n+p], 2*kall[i*(n+m)+n+p]
		}
	}
	for p := 0; p < m; p++ {
		kss[p], kss2[p] = kall[(n+p)*(n+m)+n+p], 2*kall[(n+p)*(n+m)+n+p]
	}
	y := make([]float64, n)
	for i := range y {
		if math.Sin(2*x[i])+0.5*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	sm, err := ops.SoftmaxLaplaceApprox(k, y, n, 2, ops.LaplaceOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := ops.LaplaceApprox(k2, make([]float64, n), y, n, lapLogistic{}, nil, ops.LaplaceOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }
	if e := rel(sm.LogZ, bin.LogZ); e > 1e-8 {
		t.Errorf("log q: softmax %.12g, binary logistic with 2K %.12g (relative %.2g)", sm.LogZ, bin.LogZ, e)
	}
	gs, gb := make([]float64, n*n), make([]float64, n*n)
	if err := ops.SoftmaxLaplaceGrad(sm, 1, gs); err != nil {
		t.Fatal(err)
	}
	if err := ops.LaplaceGrad(bin, y, lapLogistic{}, nil, 1, gb, nil, nil); err != nil {
		t.Fatal(err)
	}
	scale := 0.0
	for _, v := range gb {
		scale = math.Max(scale, math.Abs(2*v))
	}
	for i := range gs {
		if e := math.Abs(gs[i]-2*gb[i]) / scale; e > 1e-8 {
			t.Fatalf("∂/∂K[%d,%d]: softmax %.10g, twice the binary's %.10g", i/n, i%n, gs[i], 2*gb[i])
		}
	}
	mean, cov, err := sm.Predict(kxs, kss, m)
	if err != nil {
		t.Fatal(err)
	}
	bv, err := bin.PredictVar(kxs2, kss2)
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < m; p++ {
		bm := 0.0
		for i := 0; i < n; i++ {
			bm += kxs2[i*m+p] * bin.Alpha[i]
		}
		gm := mean[p*2+1] - mean[p*2]
		gv := cov[p*4+3] + cov[p*4] - 2*cov[p*4+1]
		if rel(gm, bm) > 1e-8 || rel(gv, bv[p]) > 1e-8 || rel(cov[p*4+1], cov[p*4+2]) > 1e-12 {
			t.Errorf("test point %d: g's mean %.10g and variance %.10g; binary %.10g and %.10g (covariance %v)", p, gm, gv, bm, bv[p], cov[p*4:p*4+4])
		}
	}
}

// TestSoftmaxLaplaceErrors: labels outside 0..C−1 are an ErrLabel error naming the row, C·N beyond
// MaxSoftmaxLaplaceSize a *ShapeError, and a non-finite K a *NonFiniteError; nothing panics.
func TestSoftmaxLaplaceErrors(t *testing.T) {
	t.Parallel()
	k, y := softmaxProblem(rand.New(rand.NewPCG(1, 1)), 5, 3)
	y[2] = 3
	if _, err := ops.SoftmaxLaplaceApprox(k, y, 5, 3, ops.LaplaceOptions{}, nil); !errors.Is(err, ops.ErrLabel) {
		t.Errorf("label 3 of 3 classes: %v", err)
	}
	y[2] = 0.5
	if _, err := ops.SoftmaxLaplaceApprox(k, y, 5, 3, ops.LaplaceOptions{}, nil); !errors.Is(err, ops.ErrLabel) {
		t.Errorf("label 0.5: %v", err)
	}
	y[2] = 1
	var se *ops.ShapeError
	big := ops.MaxSoftmaxLaplaceSize/3 + 1
	if _, err := ops.SoftmaxLaplaceApprox(make([]float64, big*big), make([]float64, big), big, 3, ops.LaplaceOptions{}, nil); !errors.As(err, &se) {
		t.Errorf("C·N = %d: %v", 3*big, err)
	}
	k[3] = math.NaN()
	var nf *ops.NonFiniteError
	if _, err := ops.SoftmaxLaplaceApprox(k, y, 5, 3, ops.LaplaceOptions{}, nil); !errors.As(err, &nf) {
		t.Errorf("NaN in K: %v", err)
	}
}

// TestSoftmaxLaplaceHash: every option that changes SoftmaxLaplaceLML's meaning (classes, tolerance, iteration
// limit, cold starts) is in its hash; Stats and the defaults given explicitly are not.
func TestSoftmaxLaplaceHash(t *testing.T) {
	t.Parallel()
	sm := func(c int, o ops.LaplaceOptions) variant {
		return func(a, _ *G.Node) (*G.Node, error) {
			return ops.SoftmaxLaplaceLML(c, o, a, approxVec(a.Graph(), "labels"))
		}
	}
	checkHashes(t, 4, map[string]variant{
		"c3":         sm(3, ops.LaplaceOptions{}),
		"c3-default": sm(3, ops.LaplaceOptions{Tol: ops.DefaultLaplaceTol, MaxIter: ops.DefaultLaplaceMaxIter}),
		"c3-stats":   sm(3, ops.LaplaceOptions{Stats: &ops.ApproxStats{}}),
		"c4":         sm(4, ops.LaplaceOptions{}),
		"c3-tol":     sm(3, ops.LaplaceOptions{Tol: 1e-6}),
		"c3-iter":    sm(3, ops.LaplaceOptions{MaxIter: 7}),
		"c3-cold":    sm(3, ops.LaplaceOptions{Cold: true}),
	}, [2]string{"c3", "c3-default"}, [2]string{"c3", "c3-stats"}, [2]string{"c3-default", "c3-stats"})
}
