package benchmodels_test

import (
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
)

// A small exact GP builds and steps.
func TestGPRStep(t *testing.T) {
	s, err := benchmodels.GPR(40)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.Run(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if s.Flops != benchmodels.GPRFlops(40) {
		t.Errorf("flops %v, want GPRFlops(40) = %v", s.Flops, benchmodels.GPRFlops(40))
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}
