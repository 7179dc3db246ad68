package gptest

import (
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

// StationaryKernel builds, through the kernel registry, the stationary kernel of the family named want with the
// configuration c, and its error, as the family's own constructor would (e.g. gp.NewMatern52(c)). If want is not
// registered (its kernel file was deleted), a registered stationary family other than SE with the same
// hyperparameters (variance, length-scales) stands in for it; the test is skipped if there is none. Tests that
// need "a kernel other than SE" call it instead of naming a constructor, so a kernel's file can be deleted (or
// added) without touching them.
func StationaryKernel(tb testing.TB, want string, c gp.KernelConfig) (*gp.Stationary, error) {
	tb.Helper()
	fams := gp.KernelFamilies()
	if f, ok := gp.LookupKernel(want); ok {
		fams = []gp.KernelFamily{f}
	}
	for _, f := range fams {
		if f.Kind == gp.KindSquaredExp {
			continue
		}
		k, err := f.New(gp.KernelOptions{InputDim: c.InputDim, ARD: true})
		s, ok := k.(*gp.Stationary)
		if err != nil || !ok || len(s.Cov().Hypers()) != 2 {
			continue
		}
		return gp.NewStationaryKernel(s.Kind(), s.Cov(), c, 0)
	}
	tb.Skipf("no registered stationary kernel other than SE to stand in for %s", want)
	return nil, nil
}

// WhiteKind returns the Spec kind of the white kernel, looked up in the registry by name, or, if white is not
// registered (its file deleted), that of constant, whose Config has the same fields (name, input_dim).
func WhiteKind() string {
	for _, name := range []string{"white", "constant"} {
		if f, ok := gp.LookupKernel(name); ok {
			return f.Kind
		}
	}
	return "kernel/white"
}

// NeedKernel skips the test if no kernel family named name is registered (its kernel file deleted), saying why
// the test needs it; a deep GP's inner layers, for one, add a white kernel (dgp.InnerKernel).
func NeedKernel(tb testing.TB, name, why string) {
	tb.Helper()
	if _, ok := gp.LookupKernel(name); !ok {
		tb.Skipf("kernel %q is not registered, and %s", name, why)
	}
}
