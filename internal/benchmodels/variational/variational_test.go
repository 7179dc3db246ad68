package variational_test

import (
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/benchmodels/variational"
)

// A small SVGP builds and steps; an unknown deep-GP family is refused by name.
func TestSteps(t *testing.T) {
	s, err := variational.SVGP(16, 32)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.Run(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if s.Flops != variational.SVGPFlops(16, 32) {
		t.Errorf("flops %v, want SVGPFlops(16, 32) = %v", s.Flops, variational.SVGPFlops(16, 32))
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	if _, err := variational.DGP("nosuch"); err == nil || !strings.Contains(err.Error(), variational.DGPCoupled) {
		t.Errorf("unknown family: %v", err)
	}
}
