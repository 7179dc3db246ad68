package zoo_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/zoo"
)

// TestTrainCustomKernel: the empty Kernel and "se" are today's SE-ARD (the same bits); an expression is stored in
// canonical form in the Result and the model file's Meta, and a kernel appearing twice gets unique Param names.
func TestTrainCustomKernel(t *testing.T) {
	d := toyData(80, 0)
	base := zoo.CustomConfig{Iters: 5, Inducing: 8, Seed: 3}
	runs := map[string]*zoo.Custom{}
	named := maternStandIn(t)
	for _, k := range []string{"", "se", "se+se", named + "*per"} {
		c := base
		c.Kernel = k
		run, err := zoo.TrainCustom(d, c)
		if err != nil {
			t.Fatalf("kernel %q: %v", k, err)
		}
		runs[k] = run
	}
	a, b := runs[""].Result, runs["se"].Result
	if a.Kernel != "SE" || b.Kernel != "SE" || a.ELBOPerPoint != b.ELBOPerPoint || *a.TestRMSE != *b.TestRMSE || a.TestLL != b.TestLL {
		t.Errorf("default and se differ: %q %v %v %v vs %q %v %v %v", a.Kernel, a.ELBOPerPoint, *a.TestRMSE, a.TestLL, b.Kernel, b.ELBOPerPoint, *b.TestRMSE, b.TestLL)
	}
	for k, want := range map[string]string{"": "SE", "se+se": "SE+SE", named + "*per": "PER*" + strings.ToUpper(named)} {
		r := runs[k]
		if r.Result.Kernel != want || r.File.Meta["kernel"] != want || !strings.Contains(r.Result.Summary(), "kernel: "+want) {
			t.Errorf("kernel %q: Result.Kernel %q, Meta %q, want %q; summary:\n%s", k, r.Result.Kernel, r.File.Meta["kernel"], want, r.Result.Summary())
		}
	}
	var names []string
	for _, p := range runs["se+se"].File.Model.Params() {
		if slices.Contains(names, p.Name()) {
			t.Errorf("se+se: Param %q twice", p.Name())
		}
		names = append(names, p.Name())
	}
	for _, want := range []string{"k.0.se.variance", "k.1.se.variance"} {
		if !slices.Contains(names, want) {
			t.Errorf("se+se: no Param %q among %v", want, names)
		}
	}
	var se *grammar.SyntaxError
	for _, bad := range []string{"se+", "nosuch", "(se"} {
		c := base
		c.Kernel = bad
		if _, err := zoo.TrainCustom(d, c); !errors.Is(err, zoo.ErrBadCustom) || !errors.As(err, &se) {
			t.Errorf("kernel %q: %v (want ErrBadCustom with the grammar's SyntaxError)", bad, err)
		}
	}
	// A kernel that ignores its inputs: white, or constant if white is not registered (kernel_white.go deleted).
	for _, k := range []string{"white", "constant"} {
		if _, ok := gp.LookupKernel(k); !ok {
			continue
		}
		c := base
		c.Family, c.Kernel = "dgp", k
		if _, err := zoo.TrainCustom(d, c); !errors.Is(err, zoo.ErrBadCustom) || !strings.Contains(err.Error(), "ignores its inputs") {
			t.Errorf("dgp with a %s kernel: %v (want refused: the kernel ignores its inputs)", k, err)
		}
		break
	}
}

// needWhite skips the test of a deep GP (model or family names one: "dgp", "dsdgp", "kin8nm-havasi/dgp-coupled-1", ...)
// if kernel white is not registered (kernel_white.go deleted): its inner layers add one (dgp.InnerKernel).
func needWhite(tb testing.TB, model string) {
	tb.Helper()
	if strings.Contains(model, "dgp") {
		gptest.NeedKernel(tb, "white", "the deep GP's inner layers add a white kernel (dgp.InnerKernel)")
	}
}

// maternStandIn returns "Matern52" if matern52 is registered, else a registered stationary family (variance,
// length-scales) other than SE that prints by its own name; the test is skipped if there is none, so that
// kernel_matern52.go can be deleted with its test.
func maternStandIn(t *testing.T) string {
	t.Helper()
	if _, ok := gp.LookupKernel("matern52"); ok {
		return "Matern52"
	}
	for _, f := range gp.KernelFamilies() {
		if f.Kind == gp.KindSquaredExp {
			continue
		}
		k, err := f.New(gp.KernelOptions{InputDim: 2, ARD: true})
		if s, ok := k.(*gp.Stationary); err == nil && ok && len(s.Cov().Hypers()) == 2 {
			return f.Name
		}
	}
	t.Skip("no registered stationary kernel other than SE to stand in for matern52")
	return ""
}
