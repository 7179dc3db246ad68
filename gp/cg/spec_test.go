package cg_test

import (
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/ops"
)

// The solver's MaxPrecondRank goes through the Spec (and so model files) when it is not the default, and the
// default is left out, so that files written before it save their Spec again unchanged.
func TestSpecMaxPrecondRank(t *testing.T) {
	for _, r := range []int{0, -1, 250} {
		m, err := cg.NewGPR(cg.Config{Kernel: eqKernel(t, 2), Solver: ops.CGConfig{MaxPrecondRank: r}})
		if err != nil {
			t.Fatal(err)
		}
		built, spec := rebuilt(t, m)
		want := r
		if r == 0 {
			want = ops.DefaultMaxPrecondRank
		}
		if got := built.Config().Solver.MaxPrecondRank; got != want {
			t.Errorf("MaxPrecondRank %d: rebuilt from the Spec with %d, want %d", r, got, want)
		}
		if has := strings.Contains(string(spec.Config), "max_precond_rank"); has != (r != 0) {
			t.Errorf("MaxPrecondRank %d: Spec config %s", r, spec.Config)
		}
	}
}
