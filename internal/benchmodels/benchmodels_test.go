package benchmodels_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/internal/benchmodels"
)

// The fixtures equal gp/gptest's bit for bit, so the benchmarks step on the data they stepped on before they
// moved here.
func TestFixturesMatchGPTest(t *testing.T) {
	x, y := benchmodels.ToyRegression(rand.New(rand.NewPCG(2, 2)), 64, 8, 2)
	wx, wy := gptest.ToyRegression(rand.New(rand.NewPCG(2, 2)), 64, 8, 2)
	if !slices.Equal(x.RawMatrix().Data, wx.RawMatrix().Data) || !slices.Equal(y.RawMatrix().Data, wy.RawMatrix().Data) {
		t.Error("ToyRegression differs from gptest.ToyRegression")
	}
	k, err := benchmodels.ARDKernel(8)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gp.KernelMatrix(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	want, err := gp.KernelMatrix(gptest.ARDKernel(t, 8), x, x)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.RawMatrix().Data, want.RawMatrix().Data) {
		t.Error("ARDKernel differs from gptest.ARDKernel")
	}
}

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
	if s.Flops <= 0 {
		t.Errorf("flops %v", s.Flops)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}
