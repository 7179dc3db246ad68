package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestSquaredExpCov(t *testing.T) {
	t.Parallel()
	if gp.SquaredExpCov.Name() != "SquaredExp" {
		t.Errorf("Name() = %q", gp.SquaredExpCov.Name())
	}
	checkCov(t, gp.SquaredExpCov, func(a, b []float64, h [][]float64) float64 {
		return h[0][0] * math.Exp(-covR2(a, b, h[1])/2)
	})
}
