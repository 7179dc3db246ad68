package zoo_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/zoo"
)

// TestWritePlots draws a regression run's curves (objective and test metrics against step and seconds) and a
// classifier's reliability diagram; evaluations during training leave the final metrics unchanged.
func TestWritePlots(t *testing.T) {
	e, _ := zoo.Lookup("airfoil/svgp")
	o := zoo.Options{Iters: 10, Inducing: 8, BatchSize: 64, Seed: 2}
	plain, err := e.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	o.EvalEvery = 3
	r, err := e.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if *r.TestRMSE != *plain.TestRMSE || r.TestLL != plain.TestLL {
		t.Fatalf("evaluations changed the run: RMSE %v vs %v", *r.TestRMSE, *plain.TestRMSE)
	}
	dir := t.TempDir()
	files, err := r.WritePlots(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"objective-step.png", "objective-time.svg", "test-rmse-step.png", "test-ll-time.svg"}
	for _, f := range want {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 500 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if len(files) != 12 { // objective ×2, test RMSE ×2, test LL ×2; each PNG and SVG
		t.Errorf("%d files, want 12: %v", len(files), files)
	}
	c, _ := zoo.Lookup("banana/svgp-bernoulli")
	cr, err := c.Run(zoo.Options{DataDir: datatest.Fake(t, "banana"), Iters: 20, Inducing: 10})
	if err != nil {
		t.Fatal(err)
	}
	if cr.TestECE == nil || *cr.TestECE < 0 || *cr.TestECE > 1 {
		t.Fatalf("ECE %v", cr.TestECE)
	}
	if _, err := cr.WritePlots(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "reliability.png")); err != nil {
		t.Error(err)
	}
}
