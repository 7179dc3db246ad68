package gptest

import (
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"gonum.org/v1/gonum/mat"
)

// Fixtures shared by the equivalence tests of packages layers and models.

// ToyRegression returns n inputs [n,d] uniform in [−2, 2) and p targets y_k = (k+1)·Σ_c sin(1.5 x_c/(c+1)) plus
// N(0, 0.1²) noise: the shared data set of the layer and model equivalence tests (and of the step benchmarks,
// internal/testkit/benchmodels, which defines it).
func ToyRegression(rng *rand.Rand, n, d, p int) (*mat.Dense, *mat.Dense) {
	return benchmodels.ToyRegression(rng, n, d, p)
}

// ARDKernel returns an SE-ARD kernel with variance 1.3 and length-scales 0.8 + 0.2·c (benchmodels.ARDKernel).
func ARDKernel(t testing.TB, d int) gp.Kernel {
	t.Helper()
	k, err := benchmodels.ARDKernel(d)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// EvalScalar evaluates the scalar node f builds from inputs x, y in a fresh forward graph.
func EvalScalar(t testing.TB, f func(x, y *graph.Node) *graph.Node, x, y *mat.Dense) float64 {
	t.Helper()
	n, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(graph.Options{})
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	prog, err := g.CompileForward(map[string]*graph.Node{"v": f(xn, yn)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Set("x", x.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("y", y.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return prog.Output("v")[0]
}

// ExactLML returns the exact GP's log marginal likelihood of (x, y) under kernel k and noise variance noise.
func ExactLML(t testing.TB, k gp.Kernel, noise float64, x, y *mat.Dense) float64 {
	t.Helper()
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: noise})
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.LogMarginalLikelihoodValue(x, y, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// KernelMatrix returns K(x, x) + jitter·I through the kernel's own graph (gp.KernelMatrix).
func KernelMatrix(t testing.TB, k gp.Kernel, x *mat.Dense, jitter float64) *mat.SymDense {
	t.Helper()
	kd, err := gp.KernelMatrix(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := kd.At(i, j)
			if i == j {
				v += jitter
			}
			s.SetSym(i, j, v)
		}
	}
	return s
}
