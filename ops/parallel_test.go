package ops_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Row-parallel kernels (robust-max) give bit-identical values and gradients with 1 and 2 threads.
func TestRobustMaxParallelMatchesSerial(t *testing.T) {
	const n, k = 300, 4
	rng := rand.New(rand.NewPCG(5, 5))
	mu, v, y := make([]float64, n*k), make([]float64, n*k), make([]float64, n)
	for i := range mu {
		mu[i], v[i] = rng.NormFloat64(), 0.1+rng.Float64()
	}
	for i := range y {
		y[i] = float64(rng.IntN(k))
	}
	run := func(procs int) (float64, []float64, []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		g := G.NewGraph()
		mk := func(name string, d []float64, s ...int) *G.Node {
			return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithName(name),
				G.WithValue(tensor.New(tensor.WithShape(s...), tensor.WithBacking(append([]float64(nil), d...)))))
		}
		mn, vn, yn := mk("mu", mu, n, k), mk("v", v, n, k), mk("y", y, n, 1)
		ve, err := ops.RobustMaxVE(mn, vn, yn, 1e-3, 20)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := ops.Sum(ve)
		if err != nil {
			t.Fatal(err)
		}
		var lv G.Value
		G.Read(loss, &lv)
		if _, err := G.Grad(loss, mn, vn); err != nil {
			t.Fatal(err)
		}
		m := G.NewTapeMachine(g)
		defer m.Close()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		gm, _ := mn.Grad()
		gv, _ := vn.Grad()
		return float64(*lv.(*G.F64)), append([]float64(nil), gm.Data().([]float64)...), append([]float64(nil), gv.Data().([]float64)...)
	}
	l1, m1, v1 := run(1)
	l2, m2, v2 := run(2)
	if l1 != l2 {
		t.Errorf("loss: serial %v, parallel %v", l1, l2)
	}
	for i := range m1 {
		if m1[i] != m2[i] || v1[i] != v2[i] {
			t.Fatalf("gradient entry %d differs: serial (%v, %v), parallel (%v, %v)", i, m1[i], v1[i], m2[i], v2[i])
		}
	}
}
