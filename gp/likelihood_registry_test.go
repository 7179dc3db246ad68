package gp_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

// testLikKind is the Spec kind of the test families: a registered kind they borrow (a kind of their own would be
// one TestSpecRoundTrip does not cover). RegisterLikelihood only checks that it is registered.
const testLikKind = gp.KindGPR

var registerTestLikelihoods = sync.OnceFunc(func() {
	newLik := func(gp.LikelihoodOptions) (gp.Likelihood, error) { return nil, nil }
	// Registered out of order: the listing sorts them.
	gp.RegisterLikelihood(gp.LikelihoodFamily{Name: "test-zeta", Kind: testLikKind, Doc: "zeta", New: newLik})
	gp.RegisterLikelihood(gp.LikelihoodFamily{Name: "test-alpha", Kind: testLikKind, Doc: "alpha", Classes: true, New: newLik})
})

func TestLikelihoodRegistry(t *testing.T) {
	registerTestLikelihoods()
	fams := gp.LikelihoodFamilies()
	names := make([]string, len(fams))
	for i, f := range fams {
		names[i] = f.Name
	}
	if !slices.IsSorted(names) {
		t.Errorf("LikelihoodFamilies not sorted by name: %v", names)
	}
	for _, want := range []string{"test-alpha", "test-zeta"} {
		if !slices.Contains(names, want) {
			t.Errorf("LikelihoodFamilies %v lacks %s", names, want)
		}
	}
	f, ok := gp.LookupLikelihood("test-alpha")
	if !ok || f.Name != "test-alpha" || f.Kind != testLikKind || f.Doc != "alpha" || !f.Classes || f.New == nil {
		t.Errorf("LookupLikelihood(test-alpha) = %+v, %v", f, ok)
	}
	for _, name := range []string{"", "nosuch", "TEST-ALPHA", " test-alpha"} {
		if _, ok := gp.LookupLikelihood(name); ok {
			t.Errorf("LookupLikelihood(%q) found a family", name)
		}
	}
	// The listing is a copy: changing it does not change the registry.
	fams[slices.Index(names, "test-alpha")].Doc = "changed"
	if f, _ := gp.LookupLikelihood("test-alpha"); f.Doc != "alpha" {
		t.Errorf("the registry changed through the listing: Doc %q", f.Doc)
	}
}

func TestRegisterLikelihoodPanics(t *testing.T) {
	registerTestLikelihoods()
	newLik := func(gp.LikelihoodOptions) (gp.Likelihood, error) { return nil, nil }
	for _, c := range []struct {
		name string
		f    gp.LikelihoodFamily
		want string
	}{
		{"duplicate", gp.LikelihoodFamily{Name: "test-alpha", Kind: testLikKind, New: newLik}, "registered twice"},
		{"empty name", gp.LikelihoodFamily{Kind: testLikKind, New: newLik}, "empty name"},
		{"nil New", gp.LikelihoodFamily{Name: "test-nonew", Kind: testLikKind}, "nil New"},
		{"upper case", gp.LikelihoodFamily{Name: "Test-Upper", Kind: testLikKind, New: newLik}, "lower case"},
		{"comma", gp.LikelihoodFamily{Name: "test-a,b", Kind: testLikKind, New: newLik}, "commas"},
		{"unregistered kind", gp.LikelihoodFamily{Name: "test-nokind", Kind: "test/no-such-kind", New: newLik}, "RegisterKind"},
		{"empty kind", gp.LikelihoodFamily{Name: "test-emptykind", New: newLik}, "RegisterKind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Fatalf("panic %v, want one mentioning %q", r, c.want)
				}
			}()
			gp.RegisterLikelihood(c.f)
		})
	}
	if _, ok := gp.LookupLikelihood("test-nokind"); ok {
		t.Error("a refused family was registered")
	}
}
