package zoo_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
)

// stopAfter is a Progress writer that closes stop after the k-th step's progress line (Train writes one per
// step), so an interruption lands after a known step.
type stopAfter struct {
	k, n int
	stop chan struct{}
}

func (s *stopAfter) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("\r")) {
		if s.n++; s.n == s.k {
			close(s.stop)
		}
	}
	return len(p), nil
}

// TestEntriesSaveAndResume runs entries of every training path three ways: uninterrupted with a checkpoint,
// interrupted after a few steps, and resumed from that checkpoint. The resumed run must save byte for byte the
// same model file (so the same raw parameters) and report the same test metrics as the uninterrupted one, and
// the model file must reproduce the entry's test predictions.
func TestEntriesSaveAndResume(t *testing.T) {
	cases := []struct {
		entry string
		o     zoo.Options
		fake  bool // generated data in the benchmark layout (else the data embedded in the binary)
	}{
		{"airfoil/svgp", zoo.Options{Iters: 12, Inducing: 10, BatchSize: 64}, false},
		{"airfoil/gpr", zoo.Options{Iters: 6, Optimizer: "adam"}, false},
		{"kin8nm-bb/sgpr", zoo.Options{Iters: 6, Inducing: 10, Optimizer: "adam"}, true},
		{"kin40k/orthnat", zoo.Options{Iters: 12, Inducing: 8, BatchSize: 64}, true},
		{"kin40k/decoupled-cb2017", zoo.Options{Iters: 12, Inducing: 8, BatchSize: 64}, true},
		{"kin8nm-havasi/dgp-decoupled-1", zoo.Options{Iters: 12, Inducing: 6, BatchSize: 64, TestSamples: 3}, true},
	}
	data := datatest.Fake(t, "kin8nm", "kin40k")
	for _, c := range cases {
		t.Run(c.entry, func(t *testing.T) {
			needWhite(t, c.entry)
			e, err := zoo.Lookup(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			if c.fake {
				c.o.DataDir = data
			}
			dir := t.TempDir()
			o := c.o
			o.Seed = 3
			o.CheckpointDir, o.SaveModel = filepath.Join(dir, "ck1"), filepath.Join(dir, "whole.gpz")
			whole, err := e.Run(o)
			if err != nil {
				t.Fatal(err)
			}
			o.CheckpointDir, o.SaveModel, o.CheckpointEvery = filepath.Join(dir, "ck2"), filepath.Join(dir, "resumed.gpz"), 2
			stop := make(chan struct{})
			o.Stop, o.Progress = stop, &stopAfter{k: 5, stop: stop}
			if _, err := e.Run(o); !errors.Is(err, train.ErrInterrupted) {
				t.Fatalf("interrupted run: got %v, want ErrInterrupted", err)
			}
			if _, err := os.Stat(o.SaveModel); err == nil {
				t.Fatal("an interrupted run saved a model")
			}
			o.Stop, o.Progress, o.Resume = nil, nil, true
			resumed, err := e.Run(o)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(filepath.Join(dir, "whole.gpz"))
			b, _ := os.ReadFile(filepath.Join(dir, "resumed.gpz"))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Fatalf("resumed model file differs from the uninterrupted run's (%d vs %d bytes)", len(a), len(b))
			}
			if whole.TestLL != resumed.TestLL || *whole.TestRMSE != *resumed.TestRMSE || resumed.Iters != whole.Iters {
				t.Fatalf("resumed metrics %v/%v (%d steps), uninterrupted %v/%v (%d)", resumed.TestLL, *resumed.TestRMSE,
					resumed.Iters, whole.TestLL, *whole.TestRMSE, whole.Iters)
			}
			f, err := modelfile.LoadFile(filepath.Join(dir, "whole.gpz"), gp.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if f.Meta["entry"] != c.entry || f.Standardizer == nil {
				t.Fatalf("meta %v, standardizer %v", f.Meta, f.Standardizer)
			}
			checkSavedRMSE(t, e, o, f, *whole.TestRMSE)
		})
	}
}

// checkSavedRMSE predicts the entry's test split with the model file (inputs in original units) and compares
// the RMSE with the entry's own.
func checkSavedRMSE(t *testing.T, e *zoo.Entry, o zoo.Options, f *modelfile.File, want float64) {
	t.Helper()
	te, err := zoo.SplitForTest(e, o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Predict(te.X, modelfile.PredictOptions{Samples: o.TestSamples, Seed: o.Seed})
	if err != nil {
		t.Fatal(err)
	}
	se := 0.0
	for i := 0; i < te.N(); i++ {
		d := p.Mean.At(i, 0) - te.Y.At(i, 0)
		se += d * d
	}
	// A deep GP's entry scores its mixture from one generator over the test rows, the model file from one per
	// row (modelfile.Predict): the same distribution, other Monte-Carlo draws.
	tol := 1e-9
	if f.Meta["family"] == "dgp" {
		tol = 0.1
	}
	if got := math.Sqrt(se / float64(te.N())); math.Abs(got-want) > tol*want {
		t.Fatalf("RMSE of the saved model %v, the entry reported %v", got, want)
	}
}

func TestSaveRefusals(t *testing.T) {
	e, _ := zoo.Lookup("airfoil/svgp")
	if _, err := zoo.RunSplits(e, zoo.Options{Iters: 1, SaveModel: filepath.Join(t.TempDir(), "m.gpz")}, []int{0, 1}, nil); err == nil {
		t.Fatal("several splits into one model file: no error")
	}
	if _, err := e.Run(zoo.Options{Iters: 1, Resume: true}); err == nil {
		t.Fatal("resume without a checkpoint directory: no error")
	}
	if _, err := e.Run(zoo.Options{Iters: 1, Resume: true, CheckpointDir: t.TempDir()}); !errors.Is(err, train.ErrNoCheckpoint) {
		t.Fatalf("resume from an empty directory: got %v, want ErrNoCheckpoint", err)
	}
	g, _ := zoo.Lookup("airfoil/gpr")
	if _, err := g.Run(zoo.Options{Iters: 1, CheckpointDir: t.TempDir()}); err == nil {
		t.Fatal("checkpointing L-BFGS: no error")
	}
}
