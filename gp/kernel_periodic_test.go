package gp_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestPeriodicCov(t *testing.T) {
	t.Parallel()
	if gp.PeriodicCov.Name() != "Periodic" {
		t.Errorf("Name() = %q", gp.PeriodicCov.Name())
	}
	checkCov(t, gp.PeriodicCov, func(a, b []float64, h [][]float64) float64 {
		sigma2, ell, p := h[0][0], h[1], h[2][0]
		s := 0.0
		for q := range a {
			sn := math.Sin(math.Pi*math.Abs(a[q]-b[q])/p) / ell[q]
			s += sn * sn
		}
		return sigma2 * math.Exp(-2*s)
	})
}
