package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestMatern12Cov(t *testing.T) {
	t.Parallel()
	if gp.Matern12Cov.Name() != "Matern12" {
		t.Errorf("Name() = %q", gp.Matern12Cov.Name())
	}
	checkCov(t, gp.Matern12Cov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * math.Exp(-r)
	})
}
