package zoo_test

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/vbks"
	"github.com/gpzoo/gpzoo/zoo"
)

// VBKS on a real regression set embedded in the binary (airfoil): BMA and VBKS-s are scored in original units,
// the ranking follows the local ELBOs, and the CSV and plot are written.
func TestRunVBKSAirfoil(t *testing.T) {
	rep, res, err := zoo.RunVBKS(zoo.VBKSConfig{Data: "airfoil", Kernels: "SE,RQ,LIN,SE+LIN", Fractions: 2, Top: 3, Seed: 1,
		Local:     vbks.LocalConfig{Iters: 30, FirstIters: 40, Restarts: -1, NumInducing: 8, BatchSize: 64},
		Posterior: vbks.PosteriorConfig{Iters: 300, MCSamples: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Train != 1353 || rep.Test != 150 || len(rep.Fractions) != 2 || len(rep.Pruned) != 3 || res.Best() < 0 {
		t.Fatalf("report: train %d test %d fractions %d pruned %d", rep.Train, rep.Test, len(rep.Fractions), len(rep.Pruned))
	}
	// Airfoil's sound pressure has a standard deviation of about 7 dB: a model that learned anything is well below.
	for name, m := range map[string]zoo.VBKSMetrics{"BMA": rep.BMA, "VBKS-s": rep.Single} {
		if !(m.RMSE > 0 && m.RMSE < 6) || math.IsNaN(m.LL) {
			t.Errorf("%s: RMSE %v LL %v", name, m.RMSE, m.LL)
		}
	}
	for i := 1; i < len(rep.Ranking); i++ {
		if rep.Ranking[i].ELBO > rep.Ranking[i-1].ELBO {
			t.Errorf("ranking not ordered by the local ELBO: %+v", rep.Ranking)
		}
	}
	var csv strings.Builder
	if err := rep.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(csv.String(), "fraction,rows,SE,RQ,LIN,LIN+SE\n") || strings.Count(csv.String(), "\n") != 3 {
		t.Errorf("CSV:\n%s", csv.String())
	}
	if err := rep.Plot(filepath.Join(t.TempDir(), "p.svg")); err != nil {
		t.Error(err)
	}
}

// Kernels whose local ELBOs differ by at most VBKSTieNats are marked as tied with each other; failed kernels
// tie with nothing.
func TestVBKSTies(t *testing.T) {
	r := []zoo.VBKSKernel{
		{Kernel: "PER*LIN*RQ", ELBO: 1552.100},
		{Kernel: "PER*LIN*SE", ELBO: 1552.100 - zoo.VBKSTieNats/2},
		{Kernel: "PER*LIN+SE", ELBO: 1552.100 - 2*zoo.VBKSTieNats},
		{Kernel: "LIN", ELBO: 1552.100, Error: "failed"},
	}
	zoo.MarkTiesForTest(r)
	want := [][]string{{"PER*LIN*SE"}, {"PER*LIN*RQ"}, nil, nil}
	for i, k := range r {
		if !slices.Equal(k.Ties, want[i]) {
			t.Errorf("%s: ties %v, want %v", k.Kernel, k.Ties, want[i])
		}
	}
}
