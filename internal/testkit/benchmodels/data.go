package benchmodels

import (
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"gonum.org/v1/gonum/mat"
)

// The fixtures of the step benchmarks and of the equivalence tests (gp/gptest's ToyRegression and ARDKernel
// call these).

// ToyRegression returns n inputs [n,d] uniform in [−2, 2) and p targets y_k = (k+1)·Σ_c sin(1.5 x_c/(c+1)) plus
// N(0, 0.1²) noise, drawn from rng.
func ToyRegression(rng *rand.Rand, n, d, p int) (*mat.Dense, *mat.Dense) {
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for c := 0; c < d; c++ {
			v := 4*rng.Float64() - 2
			x.Set(i, c, v)
			s += math.Sin(1.5 * v / float64(c+1))
		}
		for k := 0; k < p; k++ {
			y.Set(i, k, s*float64(k+1)+0.1*rng.NormFloat64())
		}
	}
	return x, y
}

// ARDKernel returns an SE-ARD kernel on d inputs with variance 1.3 and length-scales 0.8 + 0.2·c.
func ARDKernel(d int) (gp.Kernel, error) {
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.8 + 0.2*float64(i)
	}
	return gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Variance: 1.3, Lengthscales: ls})
}

// RandomBases returns m inducing inputs [m,d] uniform in [−2, 2), drawn from rng.
func RandomBases(rng *rand.Rand, m, d int) *mat.Dense {
	z := mat.NewDense(m, d, nil)
	for i := range z.RawMatrix().Data {
		z.RawMatrix().Data[i] = 4*rng.Float64() - 2
	}
	return z
}

// normals returns an [n,d] matrix of standard-normal draws from rng, row by row.
func normals(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return x
}
