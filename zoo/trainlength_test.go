package zoo

import (
	"errors"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// TestConfiguredEntriesFixedLength: the zoo's configured entries reproduce published tables with their own step
// counts, so none of them takes gpzoo train's convergence default.
func TestConfiguredEntriesFixedLength(t *testing.T) {
	d := &datasets.Dataset{X: mat.NewDense(4, 2, []float64{0, 1, 1, 0, 2, 1, 1, 2}), Y: mat.NewDense(4, 1, []float64{0, 1, 2, 3})}
	n := 0
	for _, e := range Entries() {
		if e.Config == nil {
			continue
		}
		n++
		c := *e.Config
		if c.Iters <= 0 || c.MaxIters != 0 || c.Converge != nil || e.Iters != c.Iters {
			t.Errorf("%s: Iters %d, MaxIters %d, Converge %v (entry's Iters %d): want its own fixed count", e.Name, c.Iters, c.MaxIters, c.Converge, e.Iters)
		}
		// (A classifier's configuration does not fit d's regression target: its count was checked above.)
		if c, err := c.withDefaults(d); err == nil && (c.MaxIters != 0 || c.Iters != e.Iters) {
			t.Errorf("%s: with defaults Iters %d, MaxIters %d", e.Name, c.Iters, c.MaxIters)
		}
	}
	if n == 0 {
		t.Fatal("no configured entries: the test is vacuous")
	}
}

// TestCustomLengthDefaults: the Adam families converge with the cap DefaultMaxIters unless Iters (exact) or
// MaxIters is given; gpr and sgpr keep their 200 L-BFGS iterations; the two counts exclude each other.
func TestCustomLengthDefaults(t *testing.T) {
	d := &datasets.Dataset{X: mat.NewDense(4, 2, []float64{0, 1, 1, 0, 2, 1, 1, 2}), Y: mat.NewDense(4, 1, []float64{0, 1, 2, 3})}
	for _, f := range Families {
		c, err := CustomConfig{Family: f}.withDefaults(d)
		if err != nil {
			t.Fatal(err)
		}
		wantIters, wantMax := 0, DefaultMaxIters
		switch f {
		case "sgpr":
			wantIters, wantMax = 200, 0
		case "gpr": // by its solver, chosen on the training rows: Cholesky here, L-BFGS
			if c.Iters != 0 || c.MaxIters != 0 {
				t.Errorf("gpr before its solver: Iters %d, MaxIters %d; want 0, 0", c.Iters, c.MaxIters)
			}
			if c, err = c.resolveExact(d.N()); err != nil {
				t.Fatal(err)
			}
			wantIters, wantMax = 200, 0
			if cgc, err := (CustomConfig{Family: f, Exact: ExactOptions{Solver: "cg"}}).withDefaults(d); err != nil {
				t.Fatal(err)
			} else if cgc, err = cgc.resolveExact(d.N()); err != nil || cgc.Iters != DefaultCGIters || cgc.MaxIters != 0 || cgc.Optimizer != "adam" {
				t.Errorf("gpr by CG: Iters %d, MaxIters %d, optimizer %q (%v); want %d Adam steps", cgc.Iters, cgc.MaxIters, cgc.Optimizer, err, DefaultCGIters)
			}
		}
		if c.Iters != wantIters || c.MaxIters != wantMax {
			t.Errorf("%s: Iters %d, MaxIters %d; want %d, %d", f, c.Iters, c.MaxIters, wantIters, wantMax)
		}
	}
	for _, tc := range []struct {
		c                CustomConfig
		iters, max, ramp int
		bad              bool
	}{
		{CustomConfig{Family: "svgp", Iters: 300}, 300, 0, 300, false},
		{CustomConfig{Family: "dgp", MaxIters: 500}, 0, 500, 500, false},
		{CustomConfig{Family: "svgp"}, 0, DefaultMaxIters, formerDefaultIters, false},
		{CustomConfig{Family: "sgpr", Optimizer: "adam"}, 200, 0, 200, false},
		{CustomConfig{Family: "sgpr", Optimizer: "adam", MaxIters: 900}, 0, 900, 900, false},
		{CustomConfig{Family: "svgp", Iters: 300, MaxIters: 500}, 0, 0, 0, true},
		{CustomConfig{Family: "sgpr", MaxIters: 500}, 0, 0, 0, true},
		{CustomConfig{Family: "svgp", Iters: 300, Converge: &train.ConvergeConfig{}}, 0, 0, 0, true},
		{CustomConfig{Family: "svgp", Converge: &train.ConvergeConfig{Tol: -1}}, 0, 0, 0, true},
		{CustomConfig{Family: "svgp", MaxIters: -1}, 0, 0, 0, true},
		{CustomConfig{Family: "svgp", MaxTrainRows: 1}, 0, 0, 0, true},
	} {
		c, err := tc.c.withDefaults(d)
		if tc.bad {
			if !errors.Is(err, ErrBadCustom) {
				t.Errorf("%+v: err %v, want ErrBadCustom", tc.c, err)
			}
			continue
		}
		if err != nil || c.Iters != tc.iters || c.MaxIters != tc.max || c.rampBudget() != tc.ramp {
			t.Errorf("%+v: Iters %d, MaxIters %d, ramp budget %d, err %v; want %d, %d, %d", tc.c, c.Iters, c.MaxIters, c.rampBudget(), err, tc.iters, tc.max, tc.ramp)
		}
	}
}

func TestStopLine(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{StopReason: "converged", Iters: 1800, MaxIters: 10000, Optimizer: "adam(0.01)"}, "stopped: converged after 1800 steps (cap 10000)"},
		{Result{StopReason: "iteration cap", Iters: 10000, MaxIters: 10000}, "stopped: iteration cap reached after 10000 steps (not converged)"},
		{Result{StopReason: "iterations", Iters: 2000}, "stopped: after the fixed 2000 steps (no convergence criterion)"},
		{Result{StopReason: "converged", Iters: 57, MaxIters: 200, Optimizer: "lbfgs, M=100"}, "stopped: converged after 57 L-BFGS iterations (cap 200)"},
		{Result{Iters: 5}, ""},
	} {
		if got := tc.r.StopLine(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}
