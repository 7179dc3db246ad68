package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestMatern52Cov(t *testing.T) {
	t.Parallel()
	if gp.Matern52Cov.Name() != "Matern52" {
		t.Errorf("Name() = %q", gp.Matern52Cov.Name())
	}
	checkCov(t, gp.Matern52Cov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * (1 + math.Sqrt(5)*r + 5*r2/3) * math.Exp(-math.Sqrt(5)*r)
	})
}
