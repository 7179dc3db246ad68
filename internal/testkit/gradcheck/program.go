package gradcheck

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
)

// CheckProgram fails t unless the gradient prog computes for every trainable Param (with respect to its raw,
// unconstrained value) agrees with central finite differences of prog's loss (RelTol, AbsTol, Step). The
// program's inputs must already be set. It returns the largest relative error seen and restores every Param.
func CheckProgram(t testing.TB, prog *graph.Program) float64 {
	t.Helper()
	return CheckProgramWith(t, prog, nil)
}

// CheckProgramWith is CheckProgram calling before (when not nil) before every run of prog: a program that draws
// random numbers as it runs (a Monte-Carlo objective) is a function of its Params only when before rewinds the
// generator it draws from, so that every run sees the same numbers.
func CheckProgramWith(t testing.TB, prog *graph.Program, before func()) float64 {
	t.Helper()
	run := func() error {
		if before != nil {
			before()
		}
		return prog.Run()
	}
	if err := run(); err != nil {
		t.Fatalf("gradcheck: run: %v", err)
	}
	params := prog.Params()
	analytic := make([][]float64, len(params))
	for i, p := range params {
		analytic[i] = append([]float64(nil), prog.Grad(p)...)
	}
	loss := func() float64 {
		t.Helper()
		if err := run(); err != nil {
			t.Fatalf("gradcheck: run: %v", err)
		}
		return prog.Loss()
	}
	worst := 0.0
	for i, p := range params {
		raw := p.Raw()
		for j := range raw {
			x0 := raw[j]
			step := Step * math.Max(1, math.Abs(x0))
			raw[j] = x0 + step
			fp := loss()
			raw[j] = x0 - step
			fm := loss()
			raw[j] = x0
			fd := (fp - fm) / (2 * step)
			a := analytic[i][j]
			diff := math.Abs(a - fd)
			scale := math.Max(math.Abs(a), math.Abs(fd))
			// Losses here are sums over data sets (O(N)), so the round-off floor scales with the loss.
			abs := AbsTol * math.Max(1, math.Abs(fp))
			if diff > abs && diff > RelTol*scale {
				t.Errorf("gradcheck: ∂loss/∂%s[%d]: analytic %.12g, central FD %.12g (rel err %.3g)", p.Name(), j, a, fd, diff/scale)
			}
			if diff > abs && scale > 0 && diff/scale > worst {
				worst = diff / scale
			}
		}
	}
	if err := run(); err != nil {
		t.Fatalf("gradcheck: run: %v", err)
	}
	return worst
}
