package gp_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
)

func TestRationalQuadraticCov(t *testing.T) {
	t.Parallel()
	if gp.RationalQuadraticCov.Name() != "RationalQuadratic" {
		t.Errorf("Name() = %q", gp.RationalQuadraticCov.Name())
	}
	if got := fmt.Sprint(ops.CovHyperNames(gp.RationalQuadraticCov)); got != "[variance lengthscales alpha]" {
		t.Errorf("hyperparameter names = %s", got)
	}
	checkCov(t, gp.RationalQuadraticCov, func(a, b []float64, h [][]float64) float64 {
		r2 := covR2(a, b, h[1])
		r := math.Sqrt(r2)
		_ = r
		return h[0][0] * math.Pow(1+r2/(2*h[2][0]), -h[2][0])
	})
}
