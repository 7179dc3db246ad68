package gp_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
)

func TestKernelRegistry(t *testing.T) {
	fams := gp.KernelFamilies()
	names := make([]string, len(fams))
	for i, f := range fams {
		names[i] = f.Name
		if f.Doc == "" || f.Kind == "" || f.New == nil {
			t.Errorf("family %s: empty Doc, Kind or New: %+v", f.Name, f)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("KernelFamilies not sorted by name: %v", names)
	}
	// Every registered family carries its tests (gp/kernel_X_test.go, added with addKernelTest)...
	for _, n := range names {
		if _, ok := kernelTests[n]; !ok {
			t.Errorf("kernel family %s has no kernelTest (add one from its test file)", n)
		}
	}
	// ...and the families whose tests this package carries (gp/kernel_X_test.go, one per kernel file) are registered,
	// and found by name in any case.
	for _, want := range kernelTestFamilies() {
		if !slices.Contains(names, want) {
			t.Errorf("KernelFamilies %v lacks %s", names, want)
		}
		if f, ok := gp.LookupKernel(strings.ToUpper(want)); !ok || f.Name != want {
			t.Errorf("LookupKernel(%s) = %+v, %v", strings.ToUpper(want), f, ok)
		}
	}
	for _, name := range []string{"", "nosuch", " se"} {
		if _, ok := gp.LookupKernel(name); ok {
			t.Errorf("LookupKernel(%q) found a family", name)
		}
	}
}

func TestRegisterKernelPanics(t *testing.T) {
	newK := func(gp.KernelOptions) (gp.Kernel, error) { return nil, nil }
	for _, c := range []struct {
		name string
		f    gp.KernelFamily
		want string
	}{
		{"empty name", gp.KernelFamily{Kind: gp.KindSquaredExp, New: newK}, "empty name"},
		{"nil New", gp.KernelFamily{Name: "testk", Kind: gp.KindSquaredExp}, "nil New"},
		{"upper case", gp.KernelFamily{Name: "TestK", Kind: gp.KindSquaredExp, New: newK}, "lower-case"},
		{"operator", gp.KernelFamily{Name: "a+b", Kind: gp.KindSquaredExp, New: newK}, "lower-case"},
		{"duplicate", gp.KernelFamily{Name: "se", Kind: gp.KindSquaredExp, New: newK}, "registered twice"},
		{"unknown kind", gp.KernelFamily{Name: "testk", Kind: "kernel/nosuch", New: newK}, "not registered"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Errorf("%s: panic %v, want one containing %q", c.name, r, c.want)
				}
			}()
			gp.RegisterKernel(c.f)
		}()
	}
}

// TestKernelFamiliesConform runs gptest.CheckKernel and the Spec round trip over every registered kernel family
// (a new kernel file is covered by registering itself), ARD and shared, D = 1 and 3.
func TestKernelFamiliesConform(t *testing.T) {
	for i, f := range gp.KernelFamilies() {
		for _, d := range []int{1, 3} {
			for _, ard := range []bool{true, false} {
				k, err := f.New(gp.KernelOptions{InputDim: d, ARD: ard, Name: "k" + f.Name})
				if err != nil {
					t.Fatalf("%s D=%d ARD=%v: %v", f.Name, d, ard, err)
				}
				if k.InputDim() != d {
					t.Errorf("%s: InputDim %d, want %d", f.Name, k.InputDim(), d)
				}
				for _, p := range k.Params() {
					if !strings.HasPrefix(p.Name(), "k"+f.Name+".") {
						t.Errorf("%s: Param %q does not carry the name prefix", f.Name, p.Name())
					}
				}
				gptest.CheckKernel(t, k, rand.New(rand.NewPCG(uint64(i), uint64(d))))
				c, ok := k.(interface {
					gp.Describer
					Params() []*graph.Param
				})
				if !ok {
					t.Fatalf("%s: %T does not describe itself", f.Name, k)
				}
				s, err := c.Spec()
				if err != nil {
					t.Fatal(err)
				}
				if s.Kind != f.Kind {
					t.Errorf("%s: Spec kind %q, family kind %q", f.Name, s.Kind, f.Kind)
				}
				gptest.CheckSpecRoundTrip(t, c, gp.BuildOptions{})
			}
		}
	}
}
