package gp_test

import (
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestLinearCov(t *testing.T) {
	t.Parallel()
	if gp.LinearCov.Name() != "Linear" {
		t.Errorf("Name() = %q", gp.LinearCov.Name())
	}
	checkCov(t, gp.LinearCov, func(a, b []float64, h [][]float64) float64 {
		v := 0.0
		for q := range a {
			s2 := h[0][0]
			if len(h[0]) > 1 {
				s2 = h[0][q]
			}
			v += s2 * a[q] * b[q]
		}
		return v
	})
}
