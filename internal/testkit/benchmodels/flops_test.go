package benchmodels_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"github.com/gpzoo/gpzoo/ops"
)

// The exact GP's count is positive, equals the closed form of its comment and grows as N³.
func TestGPRFlops(t *testing.T) {
	for _, n := range []int{40, 1000, 3000} {
		nf, d := float64(n), float64(benchmodels.GPRDim)
		got := benchmodels.GPRFlops(n)
		want := nf*nf*nf/3 + ops.CholeskyBackwardFlops(n) + 5*nf*nf*d + 15*nf*nf
		if !(got > 0) || math.Abs(got-want) > 1e-12*want {
			t.Errorf("N = %d: %v flops, want the closed form %v", n, got, want)
		}
	}
	if r := benchmodels.GPRFlops(2000) / benchmodels.GPRFlops(1000); r < 7.5 || r > 8.1 {
		t.Errorf("doubling N multiplies the count by %.3f, want about 8 (N³)", r)
	}
	// The Cholesky backward is counted as the build implements it.
	want := map[string]float64{"purego": 2.0 / 3, "openblas": 3}[ops.Build]
	if got := benchmodels.CholGradFlops(100) / 1e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("%s build: Cholesky backward at n = 100: %v·n³, want %v·n³", ops.Build, got, want)
	}
}
