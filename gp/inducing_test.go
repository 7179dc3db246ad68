package gp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// blobs returns n points per centre around each row of centres, with standard deviation sd.
func blobs(centres [][]float64, n int, sd float64, rng *rand.Rand) *mat.Dense {
	d := len(centres[0])
	x := mat.NewDense(n*len(centres), d, nil)
	for c, mu := range centres {
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				x.Set(c*n+i, j, mu[j]+sd*rng.NormFloat64())
			}
		}
	}
	return x
}

// nearestRow returns the index of the row of m closest to v and the distance.
func nearestRow(m *mat.Dense, v []float64) (int, float64) {
	r, _ := m.Dims()
	best, bi := math.Inf(1), -1
	for i := 0; i < r; i++ {
		if d := floats.Distance(m.RawRowView(i), v, 2); d < best {
			best, bi = d, i
		}
	}
	return bi, best
}

// TestKMeansBlobs: five well-separated Gaussian blobs (centres 10 apart, sd 0.3, 200 points each: the sample
// mean is within ~0.3·√(3/200) ≈ 0.04 of the true centre) are recovered to within 0.1, one centre per blob.
func TestKMeansBlobs(t *testing.T) {
	t.Parallel()
	truth := [][]float64{{0, 0, 0}, {10, 0, 0}, {0, 10, 0}, {0, 0, 10}, {10, 10, 10}}
	x := blobs(truth, 200, 0.3, rand.New(rand.NewPCG(1, 2)))
	for seed := uint64(0); seed < 5; seed++ {
		c, err := gp.KMeans(x, 5, 0, rand.New(rand.NewPCG(seed, 3)))
		if err != nil {
			t.Fatal(err)
		}
		used := map[int]bool{}
		for _, mu := range truth {
			i, d := nearestRow(c, mu)
			if d > 0.1 {
				t.Errorf("seed %d: centre %v recovered at distance %.3g", seed, mu, d)
			}
			if used[i] {
				t.Errorf("seed %d: two blobs share centre %d", seed, i)
			}
			used[i] = true
		}
	}
}

func TestKMeansDeterministic(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	x := mat.NewDense(500, 7, nil)
	for i := 0; i < 500; i++ {
		for j := 0; j < 7; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	a, err := gp.KMeans(x, 12, 20, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := gp.KMeans(x, 12, 20, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a, b) {
		t.Error("same seed, different centres")
	}
	c, err := gp.KMeans(x, 12, 20, rand.New(rand.NewPCG(10, 9)))
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(a, c) {
		t.Error("different seeds, identical centres")
	}
}

// TestKMeansAllPoints: k = N returns the points themselves (in some order).
func TestKMeansAllPoints(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	x := mat.NewDense(40, 3, nil)
	for i := 0; i < 40; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	c, err := gp.KMeans(x, 40, 0, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]bool{}
	for i := 0; i < 40; i++ {
		j, d := nearestRow(c, x.RawRowView(i))
		if d > 1e-12 || used[j] {
			t.Fatalf("point %d: nearest centre %d at %.3g (already used: %v)", i, j, d, used[j])
		}
		used[j] = true
	}
}

// TestKMeansView: a sub-matrix view (row stride > columns) gives the same centres as a compact copy.
func TestKMeansView(t *testing.T) {
	t.Parallel()
	big := blobs([][]float64{{0, 0, 0, 0}, {5, 5, 0, 0}, {0, 5, 5, 0}}, 30, 0.5, rand.New(rand.NewPCG(6, 6)))
	view := big.Slice(0, 90, 0, 3).(*mat.Dense)
	a, err := gp.KMeans(view, 3, 0, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := gp.KMeans(mat.DenseCopyOf(view), 3, 0, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a, b) {
		t.Error("view and copy differ")
	}
}

// TestKMeansDuplicates: many identical points (fewer distinct values than k) do not break seeding or the
// empty-cluster re-seeding.
func TestKMeansDuplicates(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(20, 2, nil)
	for i := 0; i < 20; i++ {
		x.Set(i, 0, float64(i%3))
	}
	c, err := gp.KMeans(x, 5, 0, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, d := nearestRow(x, c.RawRowView(i)); d > 1e-12 {
			t.Errorf("centre %v is not one of the (repeated) points", c.RawRowView(i))
		}
	}
}

func TestKMeansErrors(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(4, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	rng := rand.New(rand.NewPCG(1, 1))
	for name, f := range map[string]func() error{
		"nil x":     func() error { _, err := gp.KMeans(nil, 1, 0, rng); return err },
		"empty x":   func() error { _, err := gp.KMeans(&mat.Dense{}, 1, 0, rng); return err },
		"k = 0":     func() error { _, err := gp.KMeans(x, 0, 0, rng); return err },
		"k > N":     func() error { _, err := gp.KMeans(x, 5, 0, rng); return err },
		"nil rng":   func() error { _, err := gp.KMeans(x, 2, 0, nil); return err },
		"iters < 0": func() error { _, err := gp.KMeans(x, 2, -1, rng); return err },
		"subset nil x": func() error {
			_, err := gp.RandomSubset(nil, 1, rng)
			return err
		},
		"subset k > N":   func() error { _, err := gp.RandomSubset(x, 5, rng); return err },
		"subset k = 0":   func() error { _, err := gp.RandomSubset(x, 0, rng); return err },
		"subset nil rng": func() error { _, err := gp.RandomSubset(x, 2, nil); return err },
	} {
		if err := f(); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(2, 1, math.NaN())
	_, err := gp.KMeans(bad, 2, 0, rng)
	var nf *ops.NonFiniteError
	if !errors.As(err, &nf) || nf.Row != 2 || nf.Col != 1 {
		t.Errorf("NaN at (2,1): %v", err)
	}
	bad.Set(2, 1, 1)
	bad.Set(3, 0, math.Inf(-1))
	if _, err := gp.RandomSubset(bad, 4, rng); !errors.As(err, &nf) || nf.Row != 3 || nf.Col != 0 {
		t.Errorf("RandomSubset with −Inf at (3,0): %v", err)
	}
}

func TestRandomSubset(t *testing.T) {
	t.Parallel()
	n := 50
	x := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, float64(i))
		x.Set(i, 1, -float64(i))
	}
	s, err := gp.RandomSubset(x, 20, rand.New(rand.NewPCG(8, 8)))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float64]bool{}
	for i := 0; i < 20; i++ {
		v := s.At(i, 0)
		if v != math.Trunc(v) || v < 0 || v >= float64(n) || s.At(i, 1) != -v || seen[v] {
			t.Fatalf("row %d = %v is not a distinct row of x", i, s.RawRowView(i))
		}
		seen[v] = true
	}
	s2, _ := gp.RandomSubset(x, 20, rand.New(rand.NewPCG(8, 8)))
	if !mat.Equal(s, s2) {
		t.Error("same seed, different subsets")
	}
	all, _ := gp.RandomSubset(x, n, rand.New(rand.NewPCG(1, 8)))
	if r, _ := all.Dims(); r != n {
		t.Errorf("k = N gave %d rows", r)
	}
	// Uniformity: over many draws of one row, each index appears about equally often (chi-squared, 49 d.o.f.:
	// the 99.9% quantile is about 85).
	counts := make([]float64, n)
	rng := rand.New(rand.NewPCG(2, 2))
	const draws = 20000
	for i := 0; i < draws; i++ {
		r, _ := gp.RandomSubset(x, 1, rng)
		counts[int(r.At(0, 0))]++
	}
	chi2, e := 0.0, float64(draws)/float64(n)
	for _, c := range counts {
		chi2 += (c - e) * (c - e) / e
	}
	if chi2 > 85 {
		t.Errorf("chi-squared %.1f over 49 d.o.f.: not uniform", chi2)
	}
}

// TestKMeansTiming logs the cost of k-means on MNIST-like data: 20000×784 uniform [0,1] values, k = 100,
// 10 iterations (MNIST itself is 60000×784, three times the work per iteration).
func TestKMeansTiming(t *testing.T) {
	n, d, k := 20000, 784, 100
	if testing.Short() {
		n = 5000
	}
	rng := rand.New(rand.NewPCG(7, 7))
	data := make([]float64, n*d)
	for i := range data {
		data[i] = rng.Float64()
	}
	x := mat.NewDense(n, d, data)
	start := time.Now()
	c, err := gp.KMeans(x, k, 10, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("KMeans %d×%d, k = %d, 10 iterations: %v", n, d, k, time.Since(start))
	if r, cc := c.Dims(); r != k || cc != d {
		t.Errorf("centres %d×%d", r, cc)
	}
}
