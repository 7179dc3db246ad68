package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestMatern32Cov(t *testing.T) {
	t.Parallel()
	if gp.Matern32Cov.Name() != "Matern32" {
		t.Errorf("Name() = %q", gp.Matern32Cov.Name())
	}
	checkCov(t, gp.Matern32Cov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
	})
}
