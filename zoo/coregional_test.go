package zoo

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// coregOracleLL is the mean log density per test cell of the generating model's own predictive (the exact GP over
// (location, output) pairs with the true W, length-scale and noise: Cov[y_p(x), y_q(x')] = (W Wᵀ)_pq k(x, x') +
// σ² δ) given d's observed training cells: the best test LL a model of the data can expect.
func coregOracleLL(t *testing.T, d *datasets.Dataset, train, test []int) float64 {
	t.Helper()
	type cell struct{ row, out int }
	var tr, te []cell
	for _, i := range train {
		for p := range d.P() {
			if d.IsObserved(i, p) {
				tr = append(tr, cell{i, p})
			}
		}
	}
	for _, i := range test {
		for p := range d.P() {
			if d.IsObserved(i, p) {
				te = append(te, cell{i, p})
			}
		}
	}
	b := func(p, q int) float64 { return coregW[p][0]*coregW[q][0] + coregW[p][1]*coregW[q][1] }
	cov := func(a, c cell) float64 {
		dx, dy := d.X.At(a.row, 0)-d.X.At(c.row, 0), d.X.At(a.row, 1)-d.X.At(c.row, 1)
		return b(a.out, c.out) * math.Exp(-(dx*dx+dy*dy)/(2*coregLengthscale*coregLengthscale))
	}
	n := len(tr)
	k := mat.NewSymDense(n, nil)
	y := mat.NewVecDense(n, nil)
	for i, a := range tr {
		y.SetVec(i, d.Y.At(a.row, a.out))
		for j := i; j < n; j++ {
			k.SetSym(i, j, cov(a, tr[j]))
		}
		k.SetSym(i, i, k.At(i, i)+coregNoise*coregNoise)
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("oracle: covariance not positive definite")
	}
	var alpha mat.VecDense
	if err := ch.SolveVecTo(&alpha, y); err != nil {
		t.Fatal(err)
	}
	ll := 0.0
	ks := mat.NewVecDense(n, nil)
	var v mat.VecDense
	for _, c := range te {
		for i, a := range tr {
			ks.SetVec(i, cov(c, a))
		}
		if err := ch.SolveVecTo(&v, ks); err != nil {
			t.Fatal(err)
		}
		m := mat.Dot(ks, &alpha)
		s2 := b(c.out, c.out) + coregNoise*coregNoise - mat.Dot(ks, &v)
		r := d.Y.At(c.row, c.out) - m
		ll += -0.5 * (math.Log(2*math.Pi*s2) + r*r/s2)
	}
	return ll / float64(len(te))
}

// TestCoregionalData: the synthetic set is the same on every call, its outputs' correlations are those of
// W Wᵀ + σ² I up to the sampling error of 360 spatially correlated rows, and the two protocols split it as
// documented (coreg-missing: output 0 empty at 30% of the locations, their other outputs kept, the test rows copies
// of those locations observing output 0 only, with its true values).
func TestCoregionalData(t *testing.T) {
	d, err := coregionalData()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := coregionalData()
	if d.N() != coregRows || d.P() != 3 || d.D() != 2 || !mat.Equal(d.X, again.X) || !mat.Equal(d.Y, again.Y) {
		t.Fatalf("coregionalData: [%d,%d]→%d outputs, the same twice %v", d.N(), d.D(), d.P(), mat.Equal(d.Y, again.Y))
	}
	b := func(p, q int) float64 {
		v := coregW[p][0]*coregW[q][0] + coregW[p][1]*coregW[q][1]
		if p == q {
			v += coregNoise * coregNoise
		}
		return v
	}
	for _, pq := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
		p, q := pq[0], pq[1]
		want := b(p, q) / math.Sqrt(b(p, p)*b(q, q))
		got := stat.Correlation(mat.Col(nil, p, d.Y), mat.Col(nil, q, d.Y), nil)
		if math.Abs(got-want) > 0.2 {
			t.Errorf("outputs %d, %d: sample correlation %.3f, the model's %.3f", p, q, got, want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}

	_, train, test, err := coregSplit(1)
	if err != nil || len(test) != coregTest || len(train) != coregRows-coregTest {
		t.Fatalf("coreg split 1: %d/%d rows, %v", len(train), len(test), err)
	}
	m, train, test, err := coregMissingSplit(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := int(math.Round(coregMissingFrac * coregRows)); len(test) != want || len(train) != coregRows || m.MissingTargets() != 3*want {
		t.Fatalf("coreg-missing: %d training rows, %d test rows, %d missing cells; want %d, %d, %d", len(train), len(test), m.MissingTargets(), coregRows, want, 3*want)
	}
	for _, r := range test {
		i := -1 // the training row of the same location
		for j := range coregRows {
			if m.X.At(j, 0) == m.X.At(r, 0) && m.X.At(j, 1) == m.X.At(r, 1) {
				i = j
			}
		}
		switch {
		case i < 0:
			t.Fatalf("test row %d: no training row at its location", r)
		case !m.IsObserved(r, 0) || m.IsObserved(r, 1) || m.IsObserved(r, 2) || m.Y.At(r, 0) != d.Y.At(i, 0):
			t.Fatalf("test row %d: want output 0 only, with the set's value %v", r, d.Y.At(i, 0))
		case m.IsObserved(i, 0) || !m.IsObserved(i, 1) || !m.IsObserved(i, 2) || m.Y.At(i, 1) != d.Y.At(i, 1):
			t.Fatalf("training row %d: want output 0 empty and outputs 1, 2 kept", i)
		}
	}
}

// TestCoregEntriesSmoke runs each coreg entry for a few steps: they train on the documented rows and score finite
// metrics over the documented cells.
func TestCoregEntriesSmoke(t *testing.T) {
	for _, c := range []struct {
		name           string
		nTrain, nTest  int
		cells, outputs int
	}{
		{"coreg/svgp", 260, 100, 300, 3}, {"coreg/lmc", 260, 100, 300, 3},
		{"coreg-missing/svgp", 360, 108, 108, 3}, {"coreg-missing/lmc", 360, 108, 108, 3},
	} {
		e, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(Options{Seed: 1, Iters: 5})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.NTrain != c.nTrain || r.NTest != c.nTest || r.TestCells != c.cells || r.Outputs != c.outputs || r.DataSource != "embedded:"+e.Dataset {
			t.Errorf("%s: %d/%d rows, %d cells of %d outputs from %s; want %d/%d, %d of %d, embedded", c.name, r.NTrain, r.NTest, r.TestCells, r.Outputs, r.DataSource, c.nTrain, c.nTest, c.cells, c.outputs)
		}
		if r.TestRMSE == nil || math.IsNaN(*r.TestRMSE) || math.IsNaN(r.TestLL) || math.IsInf(r.TestLL, 0) {
			t.Errorf("%s: RMSE %v, LL %v", c.name, r.TestRMSE, r.TestLL)
		}
	}
}

// TestCoregEntries runs the coreg entries in full on split 0: the LMC of two latent GPs predicts the held-out
// cells with a higher test LL than independent outputs, on full targets and with output 0 missing at 30% of the
// locations (predicted there), and no model beats the generating model's own predictive by more than chance.
func TestCoregEntries(t *testing.T) {
	for _, data := range []string{"coreg", "coreg-missing"} {
		var ll [2]float64
		for i, model := range []string{"svgp", "lmc"} {
			e, err := Lookup(data + "/" + model)
			if err != nil {
				t.Fatal(err)
			}
			r, err := e.Run(Options{Seed: 1})
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			ll[i] = r.TestLL
			t.Logf("%-18s split 0: test RMSE %.4f, test LL %.4f (%.1f s)", e.Name, *r.TestRMSE, r.TestLL, r.TrainSeconds)
		}
		d, train, test, err := sources[data].load(0)
		if err != nil {
			t.Fatal(err)
		}
		oracle := coregOracleLL(t, d, train, test)
		t.Logf("%-18s split 0: the generating model's test LL %.4f", data, oracle)
		if !(ll[1] > ll[0]) {
			t.Errorf("%s: LMC test LL %.4f, independent outputs %.4f: want the LMC's higher", data, ll[1], ll[0])
		}
		if max(ll[0], ll[1]) > oracle+0.05 {
			t.Errorf("%s: test LL %.4f, %.4f above the generating model's %.4f", data, ll[0], ll[1], oracle)
		}
	}
}
