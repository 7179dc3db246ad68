package zoo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/zoo"
)

// gpr's solver is chosen by the training rows and the memory budget (auto), or as asked; a CG fit starts from its
// subset, trains by Adam with its defaults, reports its solves and predicts from its cache; the options are
// checked.
func TestExactSolverChoice(t *testing.T) {
	d := toyData(240, 0) // 216 training rows: a Cholesky fit takes about 14·8·216² bytes = 5.2 MB
	for _, c := range []struct {
		memory int64
		want   string
	}{{0, "cholesky"}, {1 << 20, "cg"}} {
		run, err := zoo.TrainCustom(d, zoo.CustomConfig{Family: "gpr", Exact: zoo.ExactOptions{Memory: c.memory, Subset: 80, SubsetIters: 20}})
		if err != nil {
			t.Fatal(err)
		}
		e := run.Result.Exact
		if e == nil || e.Solver != c.want || !strings.Contains(e.Reason, "216 rows") {
			t.Fatalf("memory %d: exact stats %+v, want solver %s", c.memory, e, c.want)
		}
		r := run.Result
		if c.want == "cholesky" {
			if !strings.HasPrefix(r.Optimizer, "lbfgs") || r.ObjectiveKind != "final" {
				t.Errorf("cholesky: optimizer %q, objective %q", r.Optimizer, r.ObjectiveKind)
			}
			continue
		}
		if r.Iters != zoo.DefaultCGIters || !strings.Contains(r.Optimizer, "adam(0.1)") || !strings.Contains(r.Optimizer, "lbfgs by Cholesky on 80 random rows") || r.ObjectiveKind != "estimate" {
			t.Errorf("cg: %d steps, optimizer %q, objective %q", r.Iters, r.Optimizer, r.ObjectiveKind)
		}
		if e.SubsetRows != 80 || e.SubsetIters == 0 || e.CGIters == 0 || e.CacheIters == 0 || e.LOVERank == 0 || !strings.Contains(e.Products, "kept") {
			t.Errorf("cg stats %+v", e)
		}
		if !strings.Contains(r.Summary(), "exact GP: cg (216 rows") {
			t.Errorf("summary does not say which solver ran and why:\n%s", r.Summary())
		}
		if r.TestRMSE == nil || !(*r.TestRMSE < 5) {
			t.Errorf("cg: test RMSE %v", r.TestRMSE)
		}
	}
	for _, bad := range []zoo.CustomConfig{
		{Family: "gpr", Exact: zoo.ExactOptions{Solver: "qr"}},
		{Family: "gpr", Optimizer: "lbfgs", Exact: zoo.ExactOptions{Solver: "cg"}},
		{Family: "gpr", Exact: zoo.ExactOptions{Probes: -1}},
		{Family: "svgp", Exact: zoo.ExactOptions{Solver: "cg"}},
		{Family: "gpr", MaxIters: 10, Exact: zoo.ExactOptions{Solver: "cholesky"}},
	} {
		if _, err := zoo.TrainCustom(d, bad); !errors.Is(err, zoo.ErrBadCustom) {
			t.Errorf("%+v: %v, want ErrBadCustom", bad, err)
		}
	}
}
