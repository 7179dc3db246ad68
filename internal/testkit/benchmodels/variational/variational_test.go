package variational_test

import (
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/variational"
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

// A small deep GP of every depth builds and steps, with its shape's flop count; bad shapes are refused.
func TestDGPAt(t *testing.T) {
	for _, f := range variational.DGPFamilies {
		for _, l := range []int{0, 1, 2} {
			sh := variational.DGPShape{Family: f, Hidden: l, Width: 3, Rows: 64, Dim: 2}
			s, err := variational.DGPAt(sh)
			if err != nil {
				t.Fatalf("%s: %v", sh.Name(), err)
			}
			for i := 0; i < 2; i++ {
				if err := s.Run(); err != nil {
					t.Fatalf("%s: step %d: %v", sh.Name(), i, err)
				}
			}
			if s.Flops != variational.DGPShapeFlops(sh) || !(s.Flops > 0) {
				t.Errorf("%s: flops %v, want DGPShapeFlops = %v", sh.Name(), s.Flops, variational.DGPShapeFlops(sh))
			}
			s.Close()
		}
	}
	if _, err := variational.DGPAt(variational.DGPShape{Family: variational.DGPCoupled, Hidden: 1, Width: 0, Rows: 10, Dim: 2}); err == nil {
		t.Error("width 0: no error")
	}
}
